/** ISO 8601 UTC with milliseconds (interface §2.1), from ms since the epoch. */
export function iso(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}
