/** ISO 8601 UTC with milliseconds (docs/api.md#conventions), from ms since the epoch. */
export function iso(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}

/** The common record fields (docs/api.md#common-record-fields) for a record created by `by` at `now` (ms). */
export function newRecordFields(by: string, now: number = Date.now()) {
  const at = iso(now);
  return { created: at, createdBy: by, lastModified: at, lastModifiedBy: by };
}
