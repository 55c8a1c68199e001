/**
 * Filter sets (docs/api.md, docs/filters.md): request and response schemas, and the
 * rules a schema cannot say: each rule and the preCondition against the rule table of
 * `filter/rules.ts` (the table the engine compiles with, docs/filters.md), each `listId`
 * naming a list of the same contract whose type fits the operator, and the set with the lists
 * it names within the compiled-size bound (docs/filters.md#bounds). Patterns are compiled in the
 * filter pool, off the event loop.
 */
import { Type } from 'typebox';
import { type Invalid, VALIDATION_CODES, validationError } from '../../errors.ts';
import { filterPool } from '../../filter/pool.ts';
import { builtInList } from '../../filter/builtin-lists.ts';
import { SET_ACTIONS, type SetAction } from '../../filter/engine.ts';
import { type FilterList, listProblem, OPERATORS, type Rule } from '../../filter/rules.ts';
import type { Db } from '../../store/db.ts';
import { findRecord } from '../../store/records.ts';
import type { FilterListRow, FilterSetRow } from '../../store/tables.ts';
import { toList, toSet } from '../../store/filter-sources.ts';
import { common, Id } from '../schemas.ts';
import { invalidOf } from '../filters/problems.ts';
import { FILTER_LIST, owned } from '../ownership.ts';

/** Rules per set (docs/api.md#limits). */
export const MAX_RULES = 100;

const Scalar = Type.Union([Type.String({ maxLength: 1000 }), Type.Number()]);
export const RuleSchema = Type.Object({
  operator: Type.String({ minLength: 1, maxLength: 32, description: `one of ${Object.keys(OPERATORS).join(', ')}` }),
  field: Type.String({ minLength: 1, maxLength: 100, description: 'dotted content item path (text, tags, author.username, kudos.score, …); user = author.username' }),
  value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: 10_000 })])),
  listId: Type.Optional(Id),
  not: Type.Boolean({ default: false }),
});

const Name = Type.String({ minLength: 1, maxLength: 200 });
/** What the set does to an item its rules match (docs/filters.md#hold-for-review); default `reject`. */
export const Action = Type.Unsafe<SetAction>({ type: 'string', enum: [...SET_ACTIONS], description: 'reject (default): the item is not stored, a rejection is recorded; hold: the item enters the queue unpublished, held for review' });
const Rules = Type.Array(RuleSchema, { maxItems: MAX_RULES });

export const SetCreate = Type.Object({
  name: Name,
  contractId: Id,
  rules: Rules,
  preCondition: RuleSchema,
  or: Type.Optional(Type.Boolean()),
  action: Type.Optional(Action),
  active: Type.Optional(Type.Boolean()),
});
export const SetUpdate = Type.Object({
  name: Type.Optional(Name),
  rules: Type.Optional(Rules),
  preCondition: Type.Optional(RuleSchema),
  or: Type.Optional(Type.Boolean()),
  action: Type.Optional(Action),
  active: Type.Optional(Type.Boolean()),
  contractId: Type.Optional(Id),
});
/**
 * A set not saved, judged by the dry run (`set` of `POST /collection/filters/test`): the rules,
 * preCondition and `or` of a set, validated as a saved set's; `name` (default `unsaved set`)
 * names it in the results.
 */
export const UnsavedSet = Type.Object({
  name: Type.Optional(Name),
  rules: Rules,
  preCondition: RuleSchema,
  or: Type.Optional(Type.Boolean()),
  action: Type.Optional(Action),
});
export const FilterSet = Type.Object({ ...common, name: Type.String(), rules: Type.Array(RuleSchema), preCondition: RuleSchema, or: Type.Boolean(), action: Action });

/** The rules and preCondition of a body with their paths, each after `prefix` (`set.` for the dry run's unsaved set). */
function named(body: Record<string, unknown>, prefix = ''): [Rule, string][] {
  const rules = ((body.rules as Rule[] | undefined) ?? []).map((rule, i): [Rule, string] => [rule, `${prefix}rules[${i}]`]);
  return body.preCondition ? [[body.preCondition as Rule, `${prefix}preCondition`], ...rules] : rules;
}

/**
 * The checks of a set's body on create and update (`current`), in order: every rule problem
 * (the rule table, docs/filters.md) and the size of its inline patterns (400), then each listId
 * (checkListIds), then the set as it will be saved compiled with the lists it names: over the
 * compiled-size bound → 400 naming `rules`. Paths after `prefix` (`set.` for the dry run's
 * unsaved set). The compiling runs in the contract's share of the filter pool: 429
 * RateLimitError when it is full (docs/filters.md#bounds).
 */
export async function checkSet(db: Db, contractId: string, body: Record<string, unknown>, current?: FilterSetRow, prefix = ''): Promise<void> {
  const invalid = invalidOf(await filterPool().problems(contractId, { set: named(body, prefix) }));
  if (invalid.length) throw validationError(invalid);
  await checkListIds(db, contractId, body, prefix);
  const saved = { ...(current ? toSet(current) : { id: 'new', name: String(body.name), or: false, active: true }), ...body } as Record<string, unknown>;
  const listIds = new Set(named(saved).flatMap(([rule]) => (rule.listId ? [rule.listId] : [])));
  if (listIds.size === 0) return;
  const lists: FilterList[] = [];
  for (const id of listIds) {
    const builtIn = builtInList(id);
    if (builtIn) {
      lists.push(builtIn);
      continue;
    }
    const row = await findRecord<FilterListRow>(db, 'filterLists', contractId, id);
    // A list gone since the set was saved (a database edited by hand): compiling names it.
    if (row) lists.push(toList(row));
  }
  const set = { id: String(saved.id), name: String(saved.name), rules: saved.rules as Rule[], preCondition: saved.preCondition as Rule, active: true };
  const error = await filterPool().check(contractId, { kind: 'set', set }, lists.map((list) => ({ ...list, active: true })));
  if (error) throw validationError([{ propertyName: `${prefix}${error.path}`, message: error.message, code: VALIDATION_CODES[error.kind] }]);
}

/**
 * Each `listId` names a list of the contract (404, 403) or a built-in list, of the operator's list type (400);
 * paths after `prefix`.
 */
export async function checkListIds(db: Db, contractId: string, body: Record<string, unknown>, prefix = ''): Promise<void> {
  const invalid: Invalid[] = [];
  for (const [rule, at] of named(body, prefix)) {
    if (!rule.listId) continue;
    // A built-in list is every contract's (docs/filters.md#built-in-lists).
    const list = builtInList(rule.listId) ?? (await owned(db, FILTER_LIST, rule.listId, contractId, `${at}.listId`));
    const problem = listProblem(rule, at, list);
    if (problem) invalid.push(...invalidOf([problem]));
  }
  if (invalid.length) throw validationError(invalid);
}
