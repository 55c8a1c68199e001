/**
 * Rule fields (decisions §6): a dotted path into the content item (interface §2.8), with `user`
 * an alias of `author.username`. A path through an array reaches every element, so a field
 * yields a list of values ("leaves"); a rule holds when it holds for any of them.
 */

const ALIASES: Record<string, string> = { user: 'author.username' };
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The path of a field, aliases resolved; undefined when it is not a dotted path of names. */
export function fieldPath(field: string): string[] | undefined {
  const path = (ALIASES[field] ?? field).split('.');
  return path.every((segment) => SEGMENT.test(segment)) ? path : undefined;
}

/**
 * The values a path reaches in `item`: arrays are flattened at every step, null and undefined
 * are dropped, only own properties of plain objects are followed (never `length` of a string or
 * a prototype member). An empty result means the field is missing.
 */
export function leaves(item: object, path: readonly string[]): unknown[] {
  let current: unknown[] = [item];
  for (const key of path) {
    const next: unknown[] = [];
    for (const value of current) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, key)) {
        collect((value as Record<string, unknown>)[key], next);
      }
    }
    if (next.length === 0) return next;
    current = next;
  }
  return current;
}

function collect(value: unknown, into: unknown[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) for (const element of value) collect(element, into);
  else into.push(value);
}

/** True when a leaf counts as present for `exists`: not an empty string, array or object. */
export function nonEmpty(leaf: unknown): boolean {
  if (typeof leaf === 'string') return leaf.length > 0;
  if (typeof leaf === 'object' && leaf !== null) return Object.keys(leaf).length > 0;
  return true;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Milliseconds since the epoch of an ISO 8601 date or date-time; NaN for anything else.
 * A date-time without an offset is read as UTC (never as the server's local time).
 */
export function isoMs(value: unknown): number {
  if (typeof value !== 'string') return NaN;
  const match = ISO_DATE.exec(value);
  if (!match) return NaN;
  const zoned = value.length > 10 && match[1] === undefined ? `${value}Z` : value;
  return Date.parse(zoned.replace(' ', 'T'));
}
