/**
 * The rule operators and content-item fields of decisions §6, as data: the set validator
 * (`rules.ts`) and the filter engine read the same table.
 *
 * `value` says what a rule's value must be:
 *   scalar   a string or a number                      (equals)
 *   ordered  a number, or an ISO 8601 date on a date field (gt, gte, lt, lte)
 *   pattern  one `/body/flags` pattern                  (pattern)
 *   strings  an array of strings or numbers, or a `strings` list (in)
 *   patterns an array of patterns, or a `patterns` list (patternin)
 *   seconds  a number of seconds, at least 0            (datediff)
 *   none     no value and no list                       (exists)
 */
export type ValueKind = 'scalar' | 'ordered' | 'pattern' | 'strings' | 'patterns' | 'seconds' | 'none';

export interface Operator {
  value: ValueKind;
  /** The list type a `listId` must name; absent when the operator takes no list. */
  listType?: 'strings' | 'patterns';
}

export const OPERATORS: Record<string, Operator> = {
  equals: { value: 'scalar' },
  gt: { value: 'ordered' },
  gte: { value: 'ordered' },
  lt: { value: 'ordered' },
  lte: { value: 'ordered' },
  pattern: { value: 'pattern' },
  in: { value: 'strings', listType: 'strings' },
  patternin: { value: 'patterns', listType: 'patterns' },
  datediff: { value: 'seconds' },
  exists: { value: 'none' },
};

/** Field aliases: `user` is `author.username`. */
export const FIELD_ALIASES: Record<string, string> = { user: 'author.username' };

/** Dotted paths into the content item of interface §2.8 that rules may test. */
export const FIELDS = [
  'id', 'service', 'type', 'title', 'text', 'tags', 'url', 'date', 'language', 'state',
  'author.name', 'author.username', 'author.userid', 'author.url',
  'media.type', 'media.url', 'media.embed', 'media.duration',
  'kudos.score',
  'location.name', 'location.latitude', 'location.longitude',
] as const;

/** Fields holding dates (ISO 8601), for `ordered` date values and `datediff`. */
export const DATE_FIELDS = ['date'];

/** Per-service kudos counters (`kudos.twitter_likes`, decisions §9). */
const KUDOS = /^kudos\.[a-z]+_[a-z0-9_]+$/;

/** The canonical path of `field`, or undefined when rules cannot test it. */
export function fieldPath(field: string): string | undefined {
  const path = FIELD_ALIASES[field] ?? field;
  return (FIELDS as readonly string[]).includes(path) || KUDOS.test(path) ? path : undefined;
}
