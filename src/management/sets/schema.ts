/**
 * Filter sets (docs/api.md, docs/filters.md): request and response schemas, and the
 * rules a schema cannot say: each rule and the preCondition against the rule table of
 * `filter/rules.ts` (the table the engine compiles with, docs/filters.md), and each `listId`
 * naming a list of the same contract whose type fits the operator.
 */
import { Type } from 'typebox';
import { forbiddenError, type Invalid, notFoundError, validationError } from '../../errors.ts';
import { listProblem, OPERATORS, type Rule, ruleProblems } from '../../filter/rules.ts';
import type { Db } from '../../store/db.ts';
import { findRecord } from '../../store/records.ts';
import type { FilterListRow } from '../../store/tables.ts';
import { common, Id } from '../docs.ts';
import { invalidOf } from '../filters/problems.ts';

/** Rules per set (decisions §10). */
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
const Rules = Type.Array(RuleSchema, { maxItems: MAX_RULES });

export const SetCreate = Type.Object({
  name: Name,
  contractId: Id,
  rules: Rules,
  preCondition: RuleSchema,
  or: Type.Optional(Type.Boolean()),
  active: Type.Optional(Type.Boolean()),
});
export const SetUpdate = Type.Object({
  name: Type.Optional(Name),
  rules: Type.Optional(Rules),
  preCondition: Type.Optional(RuleSchema),
  or: Type.Optional(Type.Boolean()),
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
});
export const FilterSet = Type.Object({ ...common, name: Type.String(), rules: Type.Array(RuleSchema), preCondition: RuleSchema, or: Type.Boolean() });

/** The rules and preCondition of a body with their paths, each after `prefix` (`set.` for the dry run's unsaved set). */
function named(body: Record<string, unknown>, prefix = ''): [Rule, string][] {
  const rules = ((body.rules as Rule[] | undefined) ?? []).map((rule, i): [Rule, string] => [rule, `${prefix}rules[${i}]`]);
  return body.preCondition ? [[body.preCondition as Rule, `${prefix}preCondition`], ...rules] : rules;
}

/** Every rule problem of the body (the rule table, docs/filters.md); paths after `prefix`. */
export function setProblems(body: Record<string, unknown>, prefix = ''): Invalid[] {
  return invalidOf(named(body, prefix).flatMap(([rule, at]) => ruleProblems(rule, at)));
}

/**
 * Each `listId` names a list of the contract (404, 403) of the operator's list type (400);
 * paths after `prefix`.
 */
export async function checkListIds(db: Db, contractId: string, body: Record<string, unknown>, prefix = ''): Promise<void> {
  const invalid: Invalid[] = [];
  for (const [rule, at] of named(body, prefix)) {
    if (!rule.listId) continue;
    const list = await findRecord<FilterListRow>(db, 'filterLists', rule.listId);
    if (!list) throw notFoundError(`No filter list ${rule.listId}.`, `${at}.listId`, rule.listId);
    if (list.contractId !== contractId) throw forbiddenError(`Filter list ${rule.listId} belongs to another contract.`, `${at}.listId`);
    const problem = listProblem(rule, at, list);
    if (problem) invalid.push(...invalidOf([problem]));
  }
  if (invalid.length) throw validationError(invalid);
}
