/**
 * The table of rule operators (decisions §6), one entry each: what `value` must be, which list
 * type `listId` may name, and how a rule becomes a test of one leaf (a value its field reaches,
 * see fields.ts). The engine and the management API's validator both go through `prepare`, so
 * what is accepted when saved is exactly what runs. Problems throw RuleProblem naming the rule
 * property at fault.
 */
import { isoMs, nonEmpty } from './fields.ts';
import { PatternError, patternSet, parsePattern, type PatternSet } from './patterns.ts';

/** A rule property that cannot be used, e.g. `value`, with a readable reason. */
export class RuleProblem extends Error {
  readonly property: 'operator' | 'field' | 'value' | 'listId';
  /** 0-based offset into the pattern text, for pattern errors. */
  readonly position: number | undefined;

  constructor(property: RuleProblem['property'], message: string, position?: number) {
    super(message);
    this.name = 'RuleProblem';
    this.property = property;
    this.position = position;
  }
}

/** What a rule resolves `listId` against (the list's data as stored). */
export interface ListView {
  id: string;
  type: 'strings' | 'patterns';
  entries: readonly string[];
}

/** A rule made executable: a test of one leaf, and words for a rejection's reason. */
export interface Prepared {
  test(leaf: unknown, now: number): boolean;
  /** Words after the field when a leaf makes the rule hold, e.g. `matches /viagra/i`. */
  holds(leaf: unknown): string;
  /** Words after the field when `not` makes the rule hold, e.g. `does not match /viagra/i`. */
  fails: string;
}

type Compare = (field: number, bound: number) => boolean;
/** Per comparison: the test, its words for numbers and its words for dates. */
const COMPARE: Record<string, [Compare, string, string]> = {
  gt: [(a, b) => a > b, 'greater than', 'after'],
  gte: [(a, b) => a >= b, 'at least', 'at or after'],
  lt: [(a, b) => a < b, 'less than', 'before'],
  lte: [(a, b) => a <= b, 'at most', 'at or before'],
};

/** The operators, in the order of decisions §6. */
export const OPERATORS = ['equals', 'gt', 'gte', 'lt', 'lte', 'pattern', 'in', 'patternin', 'datediff', 'exists'] as const;
export type Operator = (typeof OPERATORS)[number];

/**
 * Checks `value`/`listId` for `operator` and returns the prepared test. `list` is the list that
 * `listId` names (the caller resolves it; undefined when the rule has no listId). Throws
 * RuleProblem. `cache` shares the compiled form of a list between the rules that use it.
 */
export function prepare(
  operator: string,
  value: unknown,
  list: ListView | undefined,
  cache: Map<string, PatternSet | Set<string>> = new Map(),
): Prepared {
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    throw new RuleProblem('operator', `unknown operator "${operator}"; use one of ${OPERATORS.join(', ')}`);
  }
  const listed = operator === 'in' || operator === 'patternin';
  if (list && !listed) throw new RuleProblem('listId', `listId is allowed only with in and patternin, not with ${operator}`);
  if (list && value !== undefined) throw new RuleProblem('value', 'give either value or listId, not both');
  if (operator === 'exists') {
    if (value !== undefined) throw new RuleProblem('value', 'exists takes no value');
    return { test: nonEmpty, holds: () => 'exists', fails: 'is missing or empty' };
  }
  if (operator === 'equals') {
    if (typeof value !== 'string' && typeof value !== 'number') throw new RuleProblem('value', 'equals needs a string or number value');
    const wanted = String(value).toLowerCase();
    return { test: (leaf) => isScalar(leaf) && String(leaf).toLowerCase() === wanted, holds: (leaf) => `${show(leaf)} equals ${show(value)}`, fails: `does not equal ${show(value)}` };
  }
  if (operator in COMPARE) return compare(operator, value);
  if (operator === 'datediff') {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new RuleProblem('value', 'datediff needs a number of seconds');
    const ms = value * 1000;
    const words = `is more than ${value} s before the time of evaluation`;
    return { test: (leaf, now) => now - isoMs(leaf) > ms, holds: (leaf) => `${show(leaf)} ${words}`, fails: `is not a date more than ${value} s before the time of evaluation` };
  }
  if (operator === 'pattern') {
    if (typeof value !== 'string') throw new RuleProblem('value', 'pattern needs a /body/flags string value');
    const { regex } = checked(() => parsePattern(value));
    return { test: (leaf) => isScalar(leaf) && regex.test(String(leaf)), holds: () => `matches ${value}`, fails: `does not match ${value}` };
  }
  const entries = list ? list.entries : value;
  const name = list ? `list ${list.id}` : undefined;
  if (!list && (!Array.isArray(entries) || !entries.every((entry) => typeof entry === 'string' || (operator === 'in' && typeof entry === 'number')))) {
    throw new RuleProblem('value', `${operator} needs listId or an array of ${operator === 'in' ? 'strings' : 'patterns'} as value`);
  }
  const strings = (entries as readonly (string | number)[]).map(String);
  if (operator === 'in') {
    if (list && list.type !== 'strings') throw new RuleProblem('listId', `in needs a strings list; ${list.id} is a ${list.type} list`);
    const set = fromCache(cache, list?.id, () => new Set(strings.map((entry) => entry.toLowerCase()))) as Set<string>;
    const where = name ?? `[${strings.map(show).join(', ')}]`;
    return { test: (leaf) => isScalar(leaf) && set.has(String(leaf).toLowerCase()), holds: (leaf) => `${show(leaf)} is in ${where}`, fails: `is not in ${where}` };
  }
  if (list && list.type !== 'patterns') throw new RuleProblem('listId', `patternin needs a patterns list; ${list.id} is a ${list.type} list`);
  const patterns = fromCache(cache, list?.id, () => checked(() => patternSet(strings), name)) as PatternSet;
  const of = name ? ` of ${name}` : '';
  return {
    test: (leaf) => isScalar(leaf) && patterns.test(String(leaf)),
    holds: (leaf) => `matches ${patterns.first(String(leaf))}${of}`,
    fails: name ? `matches no pattern of ${name}` : `matches none of ${strings.join(' ')}`,
  };
}

function compare(operator: string, value: unknown): Prepared {
  const [holds, number, date] = COMPARE[operator]!;
  if (typeof value === 'number' && Number.isFinite(value)) {
    return { test: (leaf) => typeof leaf === 'number' && holds(leaf, value), holds: (leaf) => `${show(leaf)} is ${number} ${value}`, fails: `is not ${number} ${value}` };
  }
  const bound = isoMs(value);
  if (Number.isNaN(bound)) throw new RuleProblem('value', `${operator} needs a number or an ISO 8601 date value`);
  // NaN (a leaf that is no date) compares false both ways.
  return { test: (leaf) => holds(isoMs(leaf), bound), holds: (leaf) => `${show(leaf)} is ${date} ${show(value)}`, fails: `is not ${date} ${show(value)}` };
}

function fromCache<T extends PatternSet | Set<string>>(cache: Map<string, PatternSet | Set<string>>, key: string | undefined, make: () => T): T {
  if (key === undefined) return make();
  const made = (cache.get(key) as T | undefined) ?? make();
  cache.set(key, made);
  return made;
}

/** Runs a pattern compilation, turning a PatternError into a RuleProblem on `value` (or the list). */
function checked<T>(compile: () => T, list?: string): T {
  try {
    return compile();
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    const entry = error.index !== undefined ? `entries[${error.index}] ` : '';
    throw new RuleProblem(list ? 'listId' : 'value', list ? `${list}: ${entry}${error.message}` : `${entry}${error.message}`, error.position);
  }
}

function isScalar(leaf: unknown): leaf is string | number | boolean {
  return typeof leaf === 'string' || typeof leaf === 'number' || typeof leaf === 'boolean';
}

/** A value in a reason: strings quoted and cut at 60 characters. */
function show(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}
