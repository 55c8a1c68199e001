/**
 * The filter engine: decides whether a collected content item is accepted or rejected
 * (docs/filters.md). Pure: no I/O, no clock, no logging; `compile` once, `evaluate` per item.
 *
 * How a filter decides
 * - A filter is a chain or a set. A chain runs its active sets in the order it lists them; the
 *   first set that rejects the item rejects it, and the item is accepted when none does.
 * - A set whose `preCondition` rule is false is skipped: it does not reject.
 * - `or: false` (the default): the rules run in order and the first rule that is true rejects.
 *   `or: true`: the item is rejected only when every rule is true; so rules written with
 *   `not: true` act as alternatives, one of which an item must match to be accepted.
 * - A set with no rules never rejects. An empty chain accepts everything.
 * - A set's `action` (default `reject`) is what it does to an item its rules match
 *   (docs/filters.md#hold-for-review): `hold` holds the item for review instead of rejecting it.
 *   A chain goes on after a holding set: a later set that rejects the item rejects it (a hold
 *   never hides a rejection); else the first holding set that matched holds it.
 * - Inactive sets, chains and lists count as absent: an inactive set in a chain is skipped, an
 *   inactive chain or set accepts everything, and a rule (or preCondition) whose list is
 *   inactive is left out of its set as if it were not written, so switching a list off stops its
 *   rules from acting, whether they are written with `not` or without, with `or` or without.
 *   (A set whose rules all refer to inactive lists thus never rejects.)
 * - Which filter governs an item (the input's, else the collection's, else the contract's; none
 *   → accepted) is picked by the caller with `governingFilter`.
 *
 * Rules: `{operator, field, value?, listId?, not}`, checked against the one table of rules.ts
 * (operators, fields, what each value must be), the same table that checks a set when it is
 * saved; the language is described in docs/filters.md.
 * - `field` is a dotted path into the content item (`text`, `title`, `tags`, `date`,
 *   `author.username`, `kudos.score`, `media.type`, `location.name`, …); `user` is an alias of
 *   `author.username`. A path through an array reaches each element and the rule holds when it
 *   holds for any element. A missing field (absent, null or an empty array) makes every
 *   operator false, so with `not: true` the rule is true.
 * - `not: true` flips the result.
 * - Operators (value → true when):
 *   equals    string or number → the field equals it; compared as text, case-insensitively
 *   gt, gte, lt, lte  number → the field is a number greater than / at least / less than / at
 *             most it; ISO 8601 date, on a date field → the field is a date after / at or
 *             after / before / at or before it (a date-time without an offset is UTC)
 *   pattern   `/body/flags` → the pattern matches somewhere in the field
 *   in        non-empty array of strings or numbers, or `listId` of a `strings` list → the
 *             field equals an entry, case-insensitively
 *   patternin non-empty array of patterns, or `listId` of a `patterns` list → any pattern
 *             matches somewhere in the field
 *   datediff  number of seconds, at least 0 → the field is a date more than that many seconds
 *             before the time of evaluation (`now`)
 *   exists    no value → the field is present and not empty
 *   profane   no value → the field holds English profanity, seen through obfuscation (rules.ts)
 * - Patterns are `/body/flags` with flags from `i`, `m`, `s`, `u`, in RE2 syntax on a linear-time
 *   engine (patterns.ts): no pattern can hang the service. The patterns of a list are combined
 *   into one alternation, so a list of thousands costs about one scan of the text.
 * - Bounds (limits.ts, docs/filters.md#bounds): a set whose patterns, with each list counted per
 *   rule naming it, compile to more than MAX_COMPILED_SIZE instructions does not compile
 *   (FilterError, kind `range`, path `rules`); a rule reads at most MAX_FIELD_CHARS of a field.
 *   The time an evaluation may take is the caller's to bound: pool.ts runs it in worker threads.
 * - `listId` only with `in` and `patternin`, and the list's type must fit the operator.
 *
 * A rejection names the set, the index of the rule in the set's `rules` (counted from 0) and a
 * readable reason: `rule 2: text matches /viagra/i`. With `or: true` the rule is the last one and
 * the reason lists every rule. A filter that cannot compile (any rule the table refuses, an
 * unknown list or set, a list of the wrong type or with a bad pattern) throws FilterError.
 */
import { MAX_COMPILED_SIZE, MAX_FIELD_CHARS } from './limits.ts';
import { type FilterList, type FilterProblem, leaves, type ListCache, type ListView, prepareRule, type Rule, sizeProblem, type Test } from './rules.ts';

export type { FilterList, FilterProblem, Rule } from './rules.ts';

/** A filter set as stored (docs/filters.md); `or` defaults to false. */
export interface FilterSet {
  id: string;
  name: string;
  rules: Rule[];
  preCondition?: Rule;
  or?: boolean;
  /** What the set does to an item its rules match; absent: `reject`. */
  action?: SetAction;
  active: boolean;
}

/** What a set does to an item its rules match (docs/filters.md#hold-for-review). */
export const SET_ACTIONS = ['reject', 'hold'] as const;
export type SetAction = (typeof SET_ACTIONS)[number];

/** A filter chain as stored (docs/filters.md): set ids in order. */
export interface FilterChain {
  id: string;
  name: string;
  sets: string[];
  active: boolean;
}

export type FilterSource = { kind: 'set'; set: FilterSet } | { kind: 'chain'; chain: FilterChain; sets: FilterSet[] };

export type Decision =
  | { accepted: true }
  | { accepted: false; action: SetAction; set: { id: string; name: string }; rule: number; reason: string };

/**
 * A filter that cannot compile: the problem (see FilterProblem) of the first rule the table
 * refuses (`rules[2].value`, `preCondition.listId`) or chain entry (`sets[1]`), and the set
 * it is in. The message names the set or chain: `set spam: rules[2].value must be …`.
 */
export class FilterError extends Error implements FilterProblem {
  readonly path: string;
  readonly value: unknown;
  readonly position: number | undefined;
  readonly reason: string | undefined;
  readonly kind: FilterProblem['kind'];
  readonly setId: string | undefined;

  constructor(where: string, problem: FilterProblem, setId?: string) {
    super(`${where}: ${problem.message}`);
    this.name = 'FilterError';
    this.path = problem.path;
    this.value = problem.value;
    this.position = problem.position;
    this.reason = problem.reason;
    this.kind = problem.kind;
    this.setId = setId;
  }
}

interface CompiledRule {
  size: number;
  index: number;
  field: string;
  path: string[];
  not: boolean;
  prepared: Test;
}

interface CompiledSet {
  id: string;
  name: string;
  or: boolean;
  action: SetAction;
  preCondition: CompiledRule | undefined;
  rules: CompiledRule[];
}

/** The executable form of a filter; opaque to callers. */
export interface CompiledFilter {
  readonly sets: readonly CompiledSet[];
}

/**
 * Compiles a set, or a chain with the sets it may name, against the contract's lists. Inactive
 * parts are left out (see the header). Throws FilterError.
 */
export function compile(filter: FilterSource, lists: readonly FilterList[]): CompiledFilter {
  const byId = new Map(lists.map((list) => [list.id, list]));
  const cache: ListCache = new Map();
  if (filter.kind === 'set') return { sets: filter.set.active ? [compileSet(filter.set, byId, cache)] : [] };
  if (!filter.chain.active) return { sets: [] };
  const sets = new Map(filter.sets.map((set) => [set.id, set]));
  return {
    sets: filter.chain.sets.flatMap((id, index) => {
      const set = sets.get(id);
      if (!set) throw new FilterError(`chain ${filter.chain.name}`, { path: `sets[${index}]`, message: `sets[${index}]: unknown filter set ${id}`, value: id, kind: 'type' });
      return set.active ? [compileSet(set, byId, cache)] : [];
    }),
  };
}

function compileSet(set: FilterSet, lists: Map<string, FilterList>, cache: ListCache): CompiledSet {
  const rule = (source: Rule, index: number, at: string) => compileRule(source, index, at, set, lists, cache);
  const compiled = {
    id: set.id,
    name: set.name,
    or: set.or === true,
    action: set.action === 'hold' ? ('hold' as const) : ('reject' as const),
    preCondition: set.preCondition ? rule(set.preCondition, -1, 'preCondition') : undefined,
    rules: set.rules.flatMap((source, index) => rule(source, index, `rules[${index}]`) ?? []),
  };
  const size = [compiled.preCondition, ...compiled.rules].reduce((sum, part) => sum + (part?.size ?? 0), 0);
  if (size > MAX_COMPILED_SIZE) {
    const problem = sizeProblem('rules', `the set's patterns and the lists its rules name compile to ${size} instructions, more than ${MAX_COMPILED_SIZE}`);
    throw new FilterError(`set ${set.name}`, problem, set.id);
  }
  return compiled;
}

/** The compiled rule, or undefined when its list is inactive (the rule counts as absent). */
function compileRule(
  rule: Rule,
  index: number,
  at: string,
  set: FilterSet,
  lists: Map<string, FilterList>,
  cache: ListCache,
): CompiledRule | undefined {
  // An inactive list is still checked against the operator, but with no entries to compile.
  const lookup = (id: string): ListView | undefined => {
    const list = lists.get(id);
    return list && { id: list.id, type: list.type, entries: list.active ? list.entries : [] };
  };
  const prepared = prepareRule(rule, at, lookup, cache);
  if ('problem' in prepared) throw new FilterError(`set ${set.name}`, prepared.problem, set.id);
  if (rule.listId !== undefined && !lists.get(rule.listId)!.active) return undefined;
  return { size: prepared.test.size ?? 0, index, field: rule.field, path: prepared.path, not: rule.not === true, prepared: prepared.test };
}

/**
 * Decides on one item (a content item, see docs/filters.md, or anything shaped like one) at `now`
 * (ms since the epoch, used by `datediff`). No I/O, no clock.
 */
export function evaluate(compiled: CompiledFilter, item: object, now: number): Decision {
  let held: Decision | undefined;
  for (const set of compiled.sets) {
    const decision = evaluateSet(set, item, now);
    if (decision.accepted) continue;
    if (decision.action === 'reject') return decision;
    held ??= decision;
  }
  return held ?? { accepted: true };
}

/** One set's decision: the rejection (or hold) its rules make, else accepted. */
function evaluateSet(set: CompiledSet, item: object, now: number): Decision {
  if (set.preCondition && !check(set.preCondition, item, now)) return { accepted: true };
  if (set.or) {
    const reasons: string[] = [];
    for (const rule of set.rules) {
      const reason = check(rule, item, now);
      if (reason === undefined) break;
      reasons.push(`rule ${rule.index}: ${reason}`);
    }
    if (reasons.length > 0 && reasons.length === set.rules.length) {
      return reject(set, set.rules.at(-1)!.index, `every rule is true: ${reasons.join('; ')}`);
    }
    return { accepted: true };
  }
  for (const rule of set.rules) {
    const reason = check(rule, item, now);
    if (reason !== undefined) return reject(set, rule.index, `rule ${rule.index}: ${reason}`);
  }
  return { accepted: true };
}

function reject(set: CompiledSet, rule: number, reason: string): Decision {
  return { accepted: false, action: set.action, set: { id: set.id, name: set.name }, rule, reason };
}

/** Undefined when the rule is false; else why it is true, e.g. `text matches /viagra/i`. */
function check(rule: CompiledRule, item: object, now: number): string | undefined {
  const values = bounded(leaves(item, rule.path));
  const hit = values.findIndex((leaf) => rule.prepared.test(leaf, now));
  if (!rule.not) return hit < 0 ? undefined : `${rule.field} ${rule.prepared.holds(values[hit])}`;
  if (hit >= 0) return undefined;
  return values.length === 0 ? `${rule.field} is missing` : `${rule.field} ${rule.prepared.fails}`;
}

/** The values of a field with its strings cut where their lengths add up to MAX_FIELD_CHARS (limits.ts). */
function bounded(values: unknown[]): unknown[] {
  let left = MAX_FIELD_CHARS;
  const kept: unknown[] = [];
  for (const value of values) {
    if (typeof value !== 'string') kept.push(value);
    else if (left <= 0) break;
    else {
      kept.push(value.length > left ? value.slice(0, left) : value);
      left -= value.length;
    }
  }
  return kept;
}

/**
 * The filter that governs an item (docs/filters.md): the input's, else the collection's, else the
 * contract's, where an inactive filter counts as absent at its level. Undefined → accept.
 */
export function governingFilter<T extends { active: boolean }>(
  inputFilter: T | null | undefined,
  collectionFilter: T | null | undefined,
  contractFilter: T | null | undefined,
): T | undefined {
  return [inputFilter, collectionFilter, contractFilter].find((filter): filter is T => filter != null && filter.active);
}
