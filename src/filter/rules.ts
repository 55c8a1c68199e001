/**
 * The rule table of the filter language (docs/filters.md): the content-item fields a rule may
 * test and the operators, one entry each, with what `value` and `listId` must be and how a rule
 * becomes a test of one value. Saving a set (`setRuleProblems`) and compiling it (`prepareRule`,
 * called by engine.ts) run the same `check`, so a rule that saves is exactly a rule that runs;
 * a new operator is one entry of OPERATORS.
 *
 * Problems are plain data (FilterProblem: the property at fault, a message and a kind); the
 * management API turns them into its error objects.
 */
import { createSimpleTransformer, englishDataset, englishRecommendedBlacklistMatcherTransformers, englishRecommendedWhitelistMatcherTransformers, RegExpMatcher } from 'obscenity';
import { MAX_COMPILED_SIZE } from './limits.ts';
import { PatternError, parsePattern, patternSet, type PatternSet } from './patterns.ts';

/** A rule object as saved (docs/filters.md). Stored rules are JSON, so `value` is checked here. */
export interface Rule {
  operator: string;
  field: string;
  value?: unknown;
  listId?: string;
  not: boolean;
}

/** The types of filter list: entries compared as text, or patterns. */
export const LIST_TYPES = ['strings', 'patterns'] as const;
export type ListType = (typeof LIST_TYPES)[number];

/** A filter list as stored. */
export interface FilterList {
  id: string;
  type: ListType;
  entries: string[];
  active: boolean;
}

/**
 * Why a rule (or list entry) cannot be used. `path` names the property (`rules[2].value`,
 * `preCondition.value[1]`, `entries[3]`); `value` is the offending value; for a pattern,
 * `position` is the 0-based offset of the fault in it and `reason` reads `position N: why`.
 * `kind`: a property that is missing (`required`), of the wrong type or shape (`type`), not one
 * of the known names (`enum`), not written as a name can be (`format`), a pattern that does
 * not compile (`pattern`), patterns whose compiled size exceeds MAX_COMPILED_SIZE (`range`).
 */
export interface FilterProblem {
  path: string;
  message: string;
  value?: unknown;
  position?: number;
  reason?: string;
  kind: 'required' | 'type' | 'enum' | 'format' | 'pattern' | 'range';
}

/** A rule made executable: a test of one leaf, and words for a rejection's reason. */
export interface Test {
  test(leaf: unknown, now: number): boolean;
  /** Words after the field when a leaf makes the rule hold, e.g. `matches /viagra/i`. */
  holds(leaf: unknown): string;
  /** Words after the field when `not` makes the rule hold, e.g. `does not match /viagra/i`. */
  fails: string;
  /** The compiled size of its patterns (limits.ts); absent for a rule without patterns. */
  size?: number;
}

// ---------------------------------------------------------------------------------------------
// Fields

/**
 * What a field holds. Only `date` changes which rules a field takes: gt, gte, lt and lte
 * compare a date value only on a date field.
 */
export type FieldKind = 'text' | 'number' | 'date' | 'object';

/** The dotted paths into the content item that rules may test, and what each holds. */
export const FIELDS: Readonly<Record<string, FieldKind>> = {
  id: 'text', service: 'text', type: 'text', title: 'text', text: 'text', tags: 'text', url: 'text',
  date: 'date', language: 'text', state: 'text',
  author: 'object', 'author.name': 'text', 'author.username': 'text', 'author.userid': 'text', 'author.url': 'text',
  media: 'object', 'media.type': 'text', 'media.url': 'text', 'media.embed': 'text',
  'media.width': 'number', 'media.height': 'number', 'media.duration': 'number',
  kudos: 'object', 'kudos.score': 'number',
  location: 'object', 'location.name': 'text', 'location.latitude': 'number', 'location.longitude': 'number',
  children: 'object',
  /** The spam score (0..1) the collector gives each new item before judging it (spam.ts, docs/filters.md#spam-score). */
  spam: 'number',
  /** The highest `porn + hentai + sexy` of the item's screened images (0..1; images/nsfw.ts, docs/filters.md#image-screening). */
  'media.nsfw': 'number',
};
/** `user` is `author.username`. */
export const ALIASES: Record<string, string> = { user: 'author.username' };
/** Per-service kudos counters, `kudos.<service>_<metric>` (e.g. `kudos.twitter_likes`). */
export const KUDOS = /^kudos\.[a-z]+_[a-z0-9_]+$/;
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The field's path (aliases resolved) and kind, or why rules cannot test it. */
function field(name: unknown, at: string): { path: string[]; kind: FieldKind } | FilterProblem {
  const path = typeof name !== 'string' ? '' : Object.hasOwn(ALIASES, name) ? ALIASES[name]! : name;
  if (!path.split('.').every((segment) => SEGMENT.test(segment))) {
    return { path: `${at}.field`, message: `${at}.field must be a dotted path of names, e.g. author.username`, value: name, kind: 'format' };
  }
  const kind = Object.hasOwn(FIELDS, path) ? FIELDS[path] : KUDOS.test(path) ? 'number' : undefined;
  if (!kind) return { path: `${at}.field`, message: `${at}.field is not a content item field (text, title, tags, author.username, kudos.score, …)`, value: name, kind: 'enum' };
  return { path: path.split('.'), kind };
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

/**
 * Adds `value` to `into`, arrays flattened at any depth in document order, null and undefined
 * dropped. Iterative (a stack of pending values), so an array nested however deep cannot
 * exhaust the call stack.
 */
function collect(value: unknown, into: unknown[]): void {
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (next === null || next === undefined) continue;
    if (!Array.isArray(next)) into.push(next);
    else for (let i = next.length - 1; i >= 0; i--) pending.push(next[i]);
  }
}

/** ISO 8601 date or date-time, the one form rule values and item dates are read in. */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Milliseconds since the epoch of an ISO 8601 date or date-time; NaN for anything else
 * (including impossible dates such as 2024-02-31). A date-time without an offset is read as
 * UTC, never as the server's local time.
 */
export function isoMs(value: unknown): number {
  if (typeof value !== 'string') return NaN;
  const match = ISO_DATE.exec(value);
  if (!match) return NaN;
  const [year, month, day] = [match[1], match[2], match[3]].map(Number);
  // Date.parse rolls 2024-02-31 over to March; such a day is no date.
  if (new Date(Date.UTC(year!, month! - 1, day!)).getUTCDate() !== day) return NaN;
  return Date.parse(value.length > 10 && match[4] === undefined ? `${value}Z` : value);
}

// ---------------------------------------------------------------------------------------------
// Operators

/** What an operator's value is checked against: the rule's path, operator and field kind. */
interface Context {
  at: string;
  operator: string;
  field: FieldKind | undefined;
  problems: FilterProblem[];
}

/** A list's data as a rule sees it (an inactive list's entries are not compiled). */
export interface ListView {
  id: string;
  type: ListType;
  entries: readonly string[];
}

/** The compiled form of a list, shared by the rules of a filter that use it. */
export type ListCache = Map<string, PatternSet | Set<string>>;

/**
 * One operator. `value` checks a rule's value (never undefined) and makes the test, or records
 * problems and returns undefined; absent when the operator takes no value (then `test`). `list`
 * is the list type `listId` may name, and `entries` makes the test from such a list.
 */
interface Operator {
  /** What `value` must be (see VALUE_KINDS), for clients that offer the operators. */
  takes: ValueKind;
  value?: (value: unknown, rule: Context) => Test | undefined;
  test?: Test;
  list?: ListType;
  entries?: (list: ListView, cache: ListCache) => Test;
}

/**
 * What an operator's `value` is, as the operators endpoint tells clients (docs/filters.md,
 * operators): `scalar` a string or a number; `numberOrDate` a number, or an ISO 8601 date on a
 * date field; `pattern` one `/body/flags` pattern; `values` a non-empty array of strings or
 * numbers; `patterns` a non-empty array of patterns; `seconds` a number of seconds, at least 0;
 * `none` no value at all.
 */
export const VALUE_KINDS = ['scalar', 'numberOrDate', 'pattern', 'values', 'patterns', 'seconds', 'none'] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];

type Compare = (field: number, bound: number) => boolean;

/** gt, gte, lt, lte: a number on any field, or an ISO 8601 date on a date field. */
function comparison(holds: Compare, number: string, date: string): Operator {
  return {
    takes: 'numberOrDate',
    value(value, rule) {
      if (typeof value === 'number' && Number.isFinite(value)) {
        return { test: (leaf) => typeof leaf === 'number' && holds(leaf, value), holds: (leaf) => `${show(leaf)} is ${number} ${value}`, fails: `is not ${number} ${value}` };
      }
      if (typeof value !== 'string') return wrong(rule, value, 'a number or an ISO 8601 date');
      if (rule.field !== 'date') return wrong(rule, value, 'a number (a date only on date fields)');
      const bound = isoMs(value);
      if (Number.isNaN(bound)) return wrong(rule, value, 'an ISO 8601 date');
      // NaN (a leaf that is no date) compares false both ways.
      return { test: (leaf) => holds(isoMs(leaf), bound), holds: (leaf) => `${show(leaf)} is ${date} ${show(value)}`, fails: `is not ${date} ${show(value)}` };
    },
  };
}

/** The operators (docs/filters.md). */
export const OPERATORS: Readonly<Record<string, Operator>> = {
  equals: {
    takes: 'scalar',
    value(value, rule) {
      if (typeof value !== 'string' && typeof value !== 'number') return wrong(rule, value, 'a string or a number');
      const wanted = String(value).toLowerCase();
      return { test: (leaf) => isScalar(leaf) && String(leaf).toLowerCase() === wanted, holds: (leaf) => `${show(leaf)} equals ${show(value)}`, fails: `does not equal ${show(value)}` };
    },
  },
  gt: comparison((a, b) => a > b, 'greater than', 'after'),
  gte: comparison((a, b) => a >= b, 'at least', 'at or after'),
  lt: comparison((a, b) => a < b, 'less than', 'before'),
  lte: comparison((a, b) => a <= b, 'at most', 'at or before'),
  pattern: {
    takes: 'pattern',
    value(value, rule) {
      const parsed = pattern(value, `${rule.at}.value`, rule.problems);
      if (!parsed) return undefined;
      const { regex, size } = parsed;
      return { test: (leaf) => isScalar(leaf) && regex.test(String(leaf)), holds: () => `matches ${value}`, fails: `does not match ${value}`, size };
    },
  },
  in: {
    takes: 'values',
    list: 'strings',
    value(value, rule) {
      if (!Array.isArray(value) || value.length === 0 || !value.every((entry) => typeof entry === 'string' || typeof entry === 'number')) {
        return wrong(rule, value, 'a non-empty array of strings or numbers');
      }
      const strings = value.map(String);
      return membership(new Set(strings.map((entry) => entry.toLowerCase())), `[${strings.map(show).join(', ')}]`);
    },
    entries: (list, cache) => membership(cached(cache, list.id, () => new Set(list.entries.map((entry) => entry.toLowerCase()))), `list ${list.id}`),
  },
  patternin: {
    takes: 'patterns',
    list: 'patterns',
    value(value, rule) {
      if (!Array.isArray(value) || value.length === 0) return wrong(rule, value, 'a non-empty array of patterns');
      const before = rule.problems.length;
      value.forEach((entry, j) => pattern(entry, `${rule.at}.value[${j}]`, rule.problems));
      if (rule.problems.length > before) return undefined;
      return anyPattern(patternSet(value as string[]), `matches none of ${value.join(' ')}`, '');
    },
    entries(list, cache) {
      const patterns = cached(cache, list.id, () => patternSet(list.entries));
      return anyPattern(patterns, `matches no pattern of list ${list.id}`, ` of list ${list.id}`);
    },
  },
  datediff: {
    takes: 'seconds',
    value(value, rule) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return wrong(rule, value, 'a number of seconds, at least 0');
      const ms = value * 1000;
      const words = `is more than ${value} s before the time of evaluation`;
      return { test: (leaf, now) => now - isoMs(leaf) > ms, holds: (leaf) => `${show(leaf)} ${words}`, fails: `is not a date more than ${value} s before the time of evaluation` };
    },
  },
  exists: { takes: 'none', test: { test: nonEmpty, holds: () => 'exists', fails: 'is missing or empty' } },
  profane: { takes: 'none', test: { test: (leaf) => isScalar(leaf) && profanity().hasMatch(String(leaf)), holds: () => 'contains English profanity', fails: 'contains no English profanity' } },
};

let matcher: RegExpMatcher | undefined;
/**
 * Drops the ASCII characters that are neither letters nor blanks (`.`, `-`, `*`, `!`, digits left
 * after leetspeak), so `f.u.c.k` reads `fuck`; blanks stay, so `as shown` does not read `asshown`
 * (obscenity's own skipNonAlphabeticTransformer drops blanks too).
 */
const skipInserted = createSimpleTransformer((c: number) => (c === 0x20 || c === 0x0a || c === 0x09 || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c > 0x7f ? c : undefined));

/**
 * The matcher of `profane` (docs/filters.md#operators): obscenity's English dataset with its
 * recommended transformers, which see through confusable letters, leetspeak (`5h1t`) and
 * repeated characters (`fuuuuck`), then `skipInserted` for characters inserted between letters
 * (`f.u.c.k`); its whitelist keeps words such as `Scunthorpe` or `assassin` clean. Built on first use.
 */
function profanity(): RegExpMatcher {
  return (matcher ??= new RegExpMatcher({
    ...englishDataset.build(),
    blacklistMatcherTransformers: [...englishRecommendedBlacklistMatcherTransformers, skipInserted],
    whitelistMatcherTransformers: englishRecommendedWhitelistMatcherTransformers,
  }));
}

function membership(set: Set<string>, where: string): Test {
  return { test: (leaf) => isScalar(leaf) && set.has(String(leaf).toLowerCase()), holds: (leaf) => `${show(leaf)} is in ${where}`, fails: `is not in ${where}` };
}

function anyPattern(patterns: PatternSet, fails: string, of: string): Test {
  return { test: (leaf) => isScalar(leaf) && patterns.test(String(leaf)), holds: (leaf) => `matches ${patterns.first(String(leaf))}${of}`, fails, size: patterns.size };
}

function cached<T extends PatternSet | Set<string>>(cache: ListCache, key: string, make: () => T): T {
  const made = (cache.get(key) as T | undefined) ?? make();
  cache.set(key, made);
  return made;
}

function wrong(rule: Context, value: unknown, expected: string): undefined {
  rule.problems.push({ path: `${rule.at}.value`, message: `${rule.at}.value must be ${expected} for operator ${rule.operator}`, value, kind: 'type' });
  return undefined;
}

/** The parsed pattern, or undefined with its problem recorded under `path`. */
function pattern(entry: unknown, path: string, problems: FilterProblem[]) {
  if (typeof entry !== 'string') {
    problems.push({ path, message: `${path} must be a pattern string /body/flags`, value: entry, kind: 'type' });
    return undefined;
  }
  try {
    return parsePattern(entry);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    const { reason, position } = error;
    problems.push({ path, message: `${path}: ${reason} (at position ${position})`, value: entry, position, reason: `position ${position}: ${reason}`, kind: 'pattern' });
    return undefined;
  }
}

/** True when a leaf counts as present for `exists`: not an empty string, array or object. */
function nonEmpty(leaf: unknown): boolean {
  if (typeof leaf === 'string') return leaf.length > 0;
  if (typeof leaf === 'object' && leaf !== null) return Object.keys(leaf).length > 0;
  return true;
}

function isScalar(leaf: unknown): leaf is string | number | boolean {
  return typeof leaf === 'string' || typeof leaf === 'number' || typeof leaf === 'boolean';
}

/** A value in a reason: strings quoted and cut at 60 characters. */
function show(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}

// ---------------------------------------------------------------------------------------------
// Checking a rule

/**
 * Checks `rule` (written at `at`, e.g. `rules[2]`) against the table and makes its test.
 * `lookup` resolves `listId` to the list it names: given, an unknown list or one of the wrong
 * type is a problem and the test reads the list's entries; absent (when a set is saved, before
 * the lists are looked up), `listId` is only checked to be allowed with the operator.
 */
function check(rule: Rule, at: string, lookup?: (id: string) => ListView | undefined, cache: ListCache = new Map()) {
  const problems: FilterProblem[] = [];
  const done = (test?: Test, path?: string[]) => ({ problems, test: problems.length ? undefined : test, path });
  const operator = Object.hasOwn(OPERATORS, rule.operator) ? OPERATORS[rule.operator] : undefined;
  if (!operator) {
    problems.push({ path: `${at}.operator`, message: `${at}.operator must be one of ${Object.keys(OPERATORS).join(', ')}`, value: rule.operator, kind: 'enum' });
    return done();
  }
  const found = field(rule.field, at);
  if ('message' in found) problems.push(found);
  const path = 'message' in found ? undefined : found.path;
  const { value, listId } = rule;
  if (listId !== undefined && !operator.list) {
    problems.push({ path: `${at}.listId`, message: `${at}.listId is only allowed with operators in and patternin`, value: listId, kind: 'type' });
  }
  if (!operator.value) {
    if (value !== undefined) problems.push({ path: `${at}.value`, message: `${at}.value is not allowed with operator ${rule.operator}`, value, kind: 'type' });
    return done(operator.test, path);
  }
  if (operator.list && listId !== undefined) {
    if (value !== undefined) problems.push({ path: `${at}.value`, message: `send either ${at}.value or ${at}.listId, not both`, value, kind: 'type' });
    if (!lookup || problems.length) return done();
    const list = lookup(listId);
    const problem = (message: string, extra: Partial<FilterProblem> = {}) => problems.push({ path: `${at}.listId`, message, value: listId, kind: 'type', ...extra });
    if (!list) problem(`${at}.listId: unknown filter list ${listId}`);
    else if (list.type !== operator.list) problem(`operator ${rule.operator} needs a ${operator.list} list; ${listId} is a ${list.type} list`);
    else {
      try {
        return done(operator.entries!(list, cache), path);
      } catch (error) {
        if (!(error instanceof PatternError)) throw error;
        problem(`${at}.listId: list ${listId}: entries[${error.index}] ${error.message}`, { kind: 'pattern', position: error.position, reason: `position ${error.position}: ${error.reason}` });
      }
    }
    return done();
  }
  if (value === undefined) {
    problems.push({ path: `${at}.value`, message: `${at}.value is required with operator ${rule.operator}${operator.list ? ' (or a listId)' : ''}`, kind: 'required' });
    return done();
  }
  const test = operator.value(value, { at, operator: rule.operator, field: 'message' in found ? undefined : found.kind, problems });
  return done(test, path);
}

/**
 * The problems of a set's rules and preCondition (`named`: each with its path), then, when they
 * all compile, whether their inline patterns together exceed MAX_COMPILED_SIZE (`rules`, kind
 * `range`). Lists are not looked up: the lists a set names are counted when it is compiled.
 */
export function setRuleProblems(named: readonly (readonly [Rule, string])[]): FilterProblem[] {
  const problems: FilterProblem[] = [];
  let size = 0;
  for (const [rule, at] of named) {
    const checked = check(rule, at);
    problems.push(...checked.problems);
    size += checked.test?.size ?? 0;
  }
  if (problems.length === 0 && size > MAX_COMPILED_SIZE) problems.push(sizeProblem('rules', `the set's patterns compile to ${size} instructions, more than ${MAX_COMPILED_SIZE}; split the set or simplify its patterns`));
  return problems;
}

/** The problem of a rule's `listId` naming `list` (found, in the right contract), if its type does not fit the operator. */
export function listProblem(rule: Rule, at: string, list: { id: string; type: string }): FilterProblem | undefined {
  return check(rule, at, () => ({ id: list.id, type: list.type as ListType, entries: [] })).problems[0];
}

/**
 * A rule made executable: the path of its field and its test, or the first problem. `lookup`
 * resolves `listId`; `cache` shares a list's compiled form between the rules that use it.
 */
export function prepareRule(
  rule: Rule,
  at: string,
  lookup: (id: string) => ListView | undefined,
  cache: ListCache,
): { path: string[]; test: Test } | { problem: FilterProblem } {
  const { problems, test, path } = check(rule, at, lookup, cache);
  return test && path ? { path, test } : { problem: problems[0]! };
}

/**
 * The problems of a list's entries: each `patterns` entry must compile, as `entries[i]`, and
 * together they must not exceed MAX_COMPILED_SIZE (`entries`, kind `range`, naming the entry
 * where the sum crosses it). Compiling stops there, so checking costs at most about the bound.
 */
export function entryProblems(type: ListType, entries: readonly string[]): FilterProblem[] {
  const problems: FilterProblem[] = [];
  if (type !== 'patterns') return problems;
  let size = 0;
  for (const [i, entry] of entries.entries()) {
    size += pattern(entry, `entries[${i}]`, problems)?.size ?? 0;
    if (size > MAX_COMPILED_SIZE) {
      problems.push(sizeProblem('entries', `the list's patterns compile to more than ${MAX_COMPILED_SIZE} instructions (crossed at entries[${i}]); split the list or simplify its patterns`));
      break;
    }
  }
  return problems;
}

/** A `range` problem of compiled size at `path` (docs/filters.md#bounds). */
export function sizeProblem(path: string, message: string): FilterProblem {
  return { path, message: `${path}: ${message}`, kind: 'range' };
}

/**
 * The rule table as data, for clients that build rules (the console's rule builder through
 * `GET /collection/filters/operators`, docs/api.md): each operator with the kind of `value` it
 * takes and the list type its `listId` may name (null: no list), and each field with its kind
 * (an alias with the field it stands for). Fields `kudos.<service>_<metric>` (numbers) are
 * accepted too and not listed one by one.
 */
export function ruleTable() {
  return {
    operators: Object.entries(OPERATORS).map(([operator, entry]) => ({ operator, value: entry.takes, list: entry.list ?? null })),
    fields: [
      ...Object.entries(FIELDS).map(([name, kind]) => ({ field: name, kind, aliasOf: null as string | null })),
      ...Object.entries(ALIASES).map(([name, target]) => ({ field: name, kind: FIELDS[target]!, aliasOf: target as string | null })),
    ],
    listTypes: [...LIST_TYPES],
  };
}
