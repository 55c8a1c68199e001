/**
 * The filter engine: decides whether a collected content item is accepted or rejected
 * (decisions §6). Pure: no I/O, no clock, no logging; `compile` once, `evaluate` per item.
 *
 * How a filter decides
 * - A filter is a chain or a set. A chain runs its active sets in the order it lists them; the
 *   first set that rejects the item rejects it, and the item is accepted when none does.
 * - A set whose `preCondition` rule is false is skipped: it does not reject.
 * - `or: false` (the default): the rules run in order and the first rule that is true rejects.
 *   `or: true`: the item is rejected only when every rule is true; so rules written with
 *   `not: true` act as alternatives, one of which an item must match to be accepted.
 * - A set with no rules never rejects. An empty chain accepts everything.
 * - Inactive sets, chains and lists count as absent: an inactive set in a chain is skipped, an
 *   inactive chain or set accepts everything, and a rule (or preCondition) whose list is
 *   inactive is left out of its set as if it were not written, so switching a list off stops its
 *   rules from acting, whether they are written with `not` or without, with `or` or without.
 *   (A set whose rules all refer to inactive lists thus never rejects.)
 * - Which filter governs an item (the input's, else the collection's, else the contract's; none
 *   → accepted) is picked by the caller with `governingFilter`.
 *
 * Rules: `{operator, field, value?, listId?, not}`
 * - `field` is a dotted path into the content item (interface §2.8): `text`, `title`, `tags`,
 *   `date`, `author.username`, `kudos.score`, `media.type`, `location.name`, …; `user` is an
 *   alias of `author.username`. A path through an array reaches each element and the rule holds
 *   when it holds for any element. A missing field (absent, null or an empty array) makes every
 *   operator false, so with `not: true` the rule is true.
 * - `not: true` flips the result.
 * - Operators (value → true when):
 *   equals    string or number → the field equals it; compared as text, case-insensitively
 *   gt, gte, lt, lte  number → the field is a number greater than / at least / less than / at
 *             most it; ISO 8601 date → the field is a date after / at or after / before / at or
 *             before it (a date-time without an offset is UTC)
 *   pattern   `/body/flags` → the pattern matches somewhere in the field
 *   in        array of strings, or `listId` of a `strings` list → the field equals an entry,
 *             case-insensitively
 *   patternin array of patterns, or `listId` of a `patterns` list → any pattern matches
 *             somewhere in the field
 *   datediff  number of seconds → the field is a date more than that many seconds before the
 *             time of evaluation (`now`)
 *   exists    no value → the field is present and not empty
 * - Patterns are `/body/flags` with flags from `i`, `m`, `s`, `u`, in RE2 syntax on a linear-time
 *   engine (patterns.ts): no pattern can hang the service. The patterns of a list are combined
 *   into one alternation, so a list of thousands costs about one scan of the text.
 * - `listId` only with `in` and `patternin`, and the list's type must fit the operator.
 *
 * A rejection names the set, the index of the rule in the set's `rules` (counted from 0) and a
 * readable reason: `rule 2: text matches /viagra/i`. With `or: true` the rule is the last one and
 * the reason lists every rule. A filter that cannot compile (unknown operator, bad field, bad
 * value, bad pattern with its position, unknown list or set) throws FilterError.
 */
import { fieldPath, leaves } from './fields.ts';
import { prepare, RuleProblem, type ListView, type Prepared } from './operators.ts';
import type { PatternSet } from './patterns.ts';

/** A filter list as stored (interface §2.4). */
export interface FilterList {
  id: string;
  type: 'strings' | 'patterns';
  entries: string[];
  active: boolean;
}

/** A rule object (interface §2.5). */
export interface Rule {
  operator: string;
  field: string;
  value?: unknown;
  listId?: string;
  not: boolean;
}

/** A filter set as stored (interface §2.5); `or` defaults to false. */
export interface FilterSet {
  id: string;
  name: string;
  rules: Rule[];
  preCondition?: Rule;
  or?: boolean;
  active: boolean;
}

/** A filter chain as stored (interface §2.6): set ids in order. */
export interface FilterChain {
  id: string;
  name: string;
  sets: string[];
  active: boolean;
}

export type FilterSource = { kind: 'set'; set: FilterSet } | { kind: 'chain'; chain: FilterChain; sets: FilterSet[] };

export type Decision =
  | { accepted: true }
  | { accepted: false; set: { id: string; name: string }; rule: number; reason: string };

/**
 * A filter that cannot compile. `propertyName` names the property in the set (`rules[2].value`,
 * `preCondition.listId`) or chain (`sets[1]`); `setId` the set, `position` the 0-based offset
 * into a bad pattern; `code` is the validation code of decisions §2. Shaped as errors.ts's
 * `Invalid`, so the API can answer `validationError([error])`.
 */
export class FilterError extends Error {
  readonly propertyName: string;
  readonly propertyValue: unknown;
  readonly setId: string | undefined;
  readonly position: number | undefined;
  readonly code: number;

  constructor(message: string, details: { propertyName: string; propertyValue?: unknown; setId?: string; position?: number; code: number }) {
    super(message);
    this.name = 'FilterError';
    this.propertyName = details.propertyName;
    this.propertyValue = details.propertyValue;
    this.setId = details.setId;
    this.position = details.position;
    this.code = details.code;
  }
}

interface CompiledRule {
  index: number;
  field: string;
  path: string[];
  not: boolean;
  prepared: Prepared;
}

interface CompiledSet {
  id: string;
  name: string;
  or: boolean;
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
  const cache = new Map<string, PatternSet | Set<string>>();
  if (filter.kind === 'set') return { sets: filter.set.active ? [compileSet(filter.set, byId, cache)] : [] };
  if (!filter.chain.active) return { sets: [] };
  const sets = new Map(filter.sets.map((set) => [set.id, set]));
  return {
    sets: filter.chain.sets.flatMap((id, index) => {
      const set = sets.get(id);
      if (!set) throw new FilterError(`chain ${filter.chain.name}: unknown filter set ${id}`, { propertyName: `sets[${index}]`, propertyValue: id, code: 1002 });
      return set.active ? [compileSet(set, byId, cache)] : [];
    }),
  };
}

function compileSet(set: FilterSet, lists: Map<string, FilterList>, cache: Map<string, PatternSet | Set<string>>): CompiledSet {
  const rule = (source: Rule, index: number, name: string) => compileRule(source, index, name, set, lists, cache);
  return {
    id: set.id,
    name: set.name,
    or: set.or === true,
    preCondition: set.preCondition ? rule(set.preCondition, -1, 'preCondition') : undefined,
    rules: set.rules.flatMap((source, index) => rule(source, index, `rules[${index}]`) ?? []),
  };
}

/** The compiled rule, or undefined when its list is inactive (the rule counts as absent). */
function compileRule(
  rule: Rule,
  index: number,
  name: string,
  set: FilterSet,
  lists: Map<string, FilterList>,
  cache: Map<string, PatternSet | Set<string>>,
): CompiledRule | undefined {
  const fail = (property: string, message: string, value: unknown, code: number, position?: number) =>
    new FilterError(`set ${set.name}: ${name}.${property}: ${message}`, { propertyName: `${name}.${property}`, propertyValue: value, setId: set.id, position, code });
  const path = typeof rule.field === 'string' ? fieldPath(rule.field) : undefined;
  if (!path) throw fail('field', 'a field is a dotted path of names, e.g. author.username', rule.field, 1005);
  const list = rule.listId === undefined ? undefined : lists.get(rule.listId);
  if (rule.listId !== undefined && !list) throw fail('listId', `unknown filter list ${rule.listId}`, rule.listId, 1002);
  try {
    // An inactive list is still checked against the operator, but with no entries to compile.
    const view: ListView | undefined = list && { id: list.id, type: list.type, entries: list.active ? list.entries : [] };
    const prepared = prepare(rule.operator, rule.value, view, cache);
    if (list && !list.active) return undefined;
    return { index, field: rule.field, path, not: rule.not === true, prepared };
  } catch (error) {
    if (!(error instanceof RuleProblem)) throw error;
    const code = error.property === 'operator' ? 1004 : error.position !== undefined ? 1006 : 1002;
    throw fail(error.property, error.message, rule[error.property], code, error.position);
  }
}

/**
 * Decides on one item (a content item of interface §2.8, or anything shaped like one) at `now`
 * (ms since the epoch, used by `datediff`). No I/O, no clock.
 */
export function evaluate(compiled: CompiledFilter, item: object, now: number): Decision {
  for (const set of compiled.sets) {
    if (set.preCondition && !check(set.preCondition, item, now)) continue;
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
      continue;
    }
    for (const rule of set.rules) {
      const reason = check(rule, item, now);
      if (reason !== undefined) return reject(set, rule.index, `rule ${rule.index}: ${reason}`);
    }
  }
  return { accepted: true };
}

function reject(set: CompiledSet, rule: number, reason: string): Decision {
  return { accepted: false, set: { id: set.id, name: set.name }, rule, reason };
}

/** Undefined when the rule is false; else why it is true, e.g. `text matches /viagra/i`. */
function check(rule: CompiledRule, item: object, now: number): string | undefined {
  const values = leaves(item, rule.path);
  const hit = values.findIndex((leaf) => rule.prepared.test(leaf, now));
  if (!rule.not) return hit < 0 ? undefined : `${rule.field} ${rule.prepared.holds(values[hit])}`;
  if (hit >= 0) return undefined;
  return values.length === 0 ? `${rule.field} is missing` : `${rule.field} ${rule.prepared.fails}`;
}

/**
 * The filter that governs an item (decisions §6): the input's, else the collection's, else the
 * contract's, where an inactive filter counts as absent at its level. Undefined → accept.
 */
export function governingFilter<T extends { active: boolean }>(
  inputFilter: T | null | undefined,
  collectionFilter: T | null | undefined,
  contractFilter: T | null | undefined,
): T | undefined {
  return [inputFilter, collectionFilter, contractFilter].find((filter): filter is T => filter != null && filter.active);
}
