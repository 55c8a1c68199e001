/**
 * The filter dry run's request and response (issue 5). Content items are free-form objects
 * (rules read any dotted path), so the schema does not describe them and the handler checks
 * only that each is an object with a string `id`.
 */
import { Type, type Static } from 'typebox';
import { Id } from '../docs.ts';

/** Items per dry run (decisions §10-style bound on one request's work). */
export const MAX_ITEMS = 1000;

export const FilterTest = Type.Object({
  contractId: Id,
  filterId: Id,
  items: Type.Optional(
    Type.Array(Type.Unknown({ description: 'a content item (interface §2.8) with its id' }), { maxItems: MAX_ITEMS, description: 'the items to judge; or collectionId' }),
  ),
  collectionId: Type.Optional(Type.Unsafe<string>({ ...Id, description: "re-judge this collection's stored items (the newest 1000); or items" })),
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'with collectionId: only items dated after this Unix time (seconds); default 0' })),
});
export type FilterTest = Static<typeof FilterTest>;

const SetRef = Type.Object({ id: Type.String(), name: Type.String() });

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
