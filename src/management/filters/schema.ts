/**
 * The filter dry run's request and response (issue 5; an unsaved `set`, issue 12). Content items are free-form objects
 * (rules read any dotted path), so the schema does not describe them and the handler checks
 * only that each is an object with a string `id`.
 */
import { Type, type Static } from 'typebox';
import { LIST_TYPES, type ListType, VALUE_KINDS, type ValueKind } from '../../filter/rules.ts';
import { Id } from '../docs.ts';
import { UnsavedSet } from '../sets/schema.ts';

/** Items per dry run (docs/api.md#limits: a bound on one request's work). */
export const MAX_ITEMS = 1000;

export const FilterTest = Type.Object({
  contractId: Id,
  filterId: Type.Optional(Type.Unsafe<string>({ ...Id, description: 'a filter set or chain of the contract; or set' })),
  set: Type.Optional({ ...UnsavedSet, description: 'a set not saved (rules, preCondition, or; lists by id of the contract), validated as a saved set; or filterId' }),
  items: Type.Optional(
    Type.Array(Type.Unknown({ description: 'a content item with its id' }), { maxItems: MAX_ITEMS, description: 'the items to judge; or collectionId' }),
  ),
  collectionId: Type.Optional(Type.Unsafe<string>({ ...Id, description: "re-judge this collection's stored items (the newest 1000); or items" })),
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'with collectionId: only items dated after this Unix time (seconds); default 0' })),
});
export type FilterTest = Static<typeof FilterTest>;

/** The set that rejected; `id` is null for the unsaved `set` of the request. */
const SetRef = Type.Object({ id: Type.Union([Type.String(), Type.Null()]), name: Type.String() });

export const FilterTestResult = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Type.String(),
      accepted: Type.Boolean(),
      set: Type.Union([SetRef, Type.Null()]),
      rule: Type.Union([Type.Integer(), Type.Null()]),
      reason: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  hits: Type.Array(Type.Object({ set: SetRef, rule: Type.Integer(), count: Type.Integer() }), { description: 'rejections per set and rule, most first' }),
});

const ValueKind = Type.Unsafe<ValueKind>({ type: 'string', enum: [...VALUE_KINDS] });
const ListType = Type.Unsafe<ListType>({ type: 'string', enum: [...LIST_TYPES] });

/** `GET /collection/filters/operators`: the rule table of filter/rules.ts as data (docs/api.md). */
export const RuleTable = Type.Object({
  operators: Type.Array(
    Type.Object({
      operator: Type.String(),
      value: { ...ValueKind, description: 'what value takes: scalar, numberOrDate, pattern, values, patterns, seconds or none' },
      list: Type.Union([ListType, Type.Null()], { description: 'the list type listId may name instead of value; null: no list' }),
    }),
  ),
  fields: Type.Array(
    Type.Object({
      field: Type.String(),
      kind: Type.Union([Type.Literal('text'), Type.Literal('number'), Type.Literal('date'), Type.Literal('object')]),
      aliasOf: Type.Union([Type.String(), Type.Null()], { description: 'the field an alias stands for (user → author.username)' }),
    }),
  ),
  listTypes: Type.Array(ListType),
});
