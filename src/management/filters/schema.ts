/**
 * The filter dry run's request and response (issue 5; an unsaved `set`, issue 12). Content items are free-form objects
 * (rules read any dotted path), so the schema does not describe them and the handler checks
 * only that each is an object with a string `id`.
 */
import { Type, type Static } from 'typebox';
import { LIST_TYPES, type ListType, VALUE_KINDS, type ValueKind } from '../../filter/rules.ts';
import { Id } from '../schemas.ts';
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
      action: Type.Union([Type.Literal('reject'), Type.Literal('hold'), Type.Null()], { description: 'when not accepted: reject, or hold (a holding set matched: the item would be held for review)' }),
      set: Type.Union([SetRef, Type.Null()]),
      rule: Type.Union([Type.Integer(), Type.Null()]),
      reason: Type.Union([Type.String(), Type.Null()]),
      title: Type.Union([Type.String(), Type.Null()], { description: "the item's title, else the start of its text (100 characters, tags removed); null when neither" }),
      date: Type.Union([Type.String(), Type.Null()], { description: "the item's date; null when it has none" }),
      inputId: Type.Union([Type.String(), Type.Null()], { description: 'the input that collected the stored item; null for items sent in the request' }),
    }),
  ),
  hits: Type.Array(Type.Object({ set: SetRef, rule: Type.Integer(), action: Type.Union([Type.Literal('reject'), Type.Literal('hold')]), count: Type.Integer() }), { description: 'rejections and holds per set and rule, most first' }),
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

/** Items a filter application judges in the request; more run as a job (docs/api.md#apply-a-filter). */
export const APPLY_IN_REQUEST = 5000;

/** `POST /collection/filters/apply`: what the dry run takes for a collection, with an `until`. */
export const FilterApply = Type.Object({
  contractId: Id,
  filterId: Type.Optional(Type.Unsafe<string>({ ...Id, description: 'a filter set or chain of the contract; or set' })),
  set: Type.Optional({ ...UnsavedSet, description: 'a set not saved (rules, preCondition, or, action; lists by id of the contract); or filterId' }),
  collectionId: Type.Unsafe<string>({ ...Id, description: "the collection whose stored items are judged" }),
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'only items dated after this Unix time (seconds); default 0' })),
  until: Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'only items dated at or before this Unix time (seconds); default now' })),
  dryRun: Type.Optional(Type.Boolean({ description: 'true: change nothing, answer wouldUnpublish (default false)' })),
});
export type FilterApply = Static<typeof FilterApply>;

const Hits = Type.Array(Type.Object({ set: SetRef, rule: Type.Integer(), action: Type.Union([Type.Literal('reject'), Type.Literal('hold')]), count: Type.Integer() }), { description: 'rejections and holds per set and rule, most first' });

/** What a filter application did. */
export const ApplyResult = Type.Object({
  judged: Type.Integer({ description: 'items judged' }),
  rejected: Type.Integer({ description: 'items the filter rejected (published or not)' }),
  held: Type.Integer({ description: 'items a holding set matched (published or not): the published ones are unpublished and held for review (docs/filters.md#hold-for-review)' }),
  unpublished: Type.Integer({ description: 'published items it unpublished' }),
  hits: Hits,
  auditId: Type.Union([Type.String(), Type.Null()], { description: 'the audit entry of the change (revert it with POST /collection/audit/{id}/revert); null when nothing changed' }),
  wouldUnpublish: Type.Optional(Type.Integer({ description: 'with dryRun only: the published items it would unpublish' })),
});

export type ApplyResult = Static<typeof ApplyResult>;

/** A background job (docs/api.md#jobs). */
export const Job = Type.Object({
  _id: Type.String(),
  contractId: Type.String(),
  kind: Type.String({ description: 'filter-apply' }),
  state: Type.String({ enum: ['queued', 'running', 'done', 'failed'] }),
  done: Type.Integer({ description: 'units done (items judged)' }),
  total: Type.Integer({ description: 'units in all' }),
  created: Type.String({ format: 'date-time' }),
  createdBy: Type.Object({ id: Type.Union([Type.String(), Type.Null()]), name: Type.String() }),
  finished: Type.Optional(Type.String({ format: 'date-time' })),
  result: Type.Optional({ ...ApplyResult, description: 'state done: what it did' }),
  errors: Type.Optional(Type.Array(Type.Unknown(), { description: 'state failed: the error entries (docs/api.md#errors)' })),
});
