/**
 * Filter lists (docs/api.md, docs/filters.md): request and response schemas, and
 * the rule a schema cannot say: every entry of a `patterns` list compiles on re2js (400 naming
 * `entries[i]`, the position in `reason`).
 */
import { Type } from 'typebox';
import type { Invalid } from '../../errors.ts';
import { MAX_PATTERN_LENGTH } from '../../filter/patterns.ts';
import { type ListType, LIST_TYPES, entryProblems as filterEntryProblems } from '../../filter/rules.ts';
import { common, Id } from '../docs.ts';
import { invalidOf } from '../filters/problems.ts';

/** Entries per list (decisions §10). */
export const MAX_ENTRIES = 10_000;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const ListType = Type.Unsafe<string>({ type: 'string', enum: [...LIST_TYPES] });
const Entries = Type.Array(Type.String({ minLength: 1, maxLength: MAX_PATTERN_LENGTH }), { maxItems: MAX_ENTRIES });

export const ListCreate = Type.Object({ name: Name, contractId: Id, type: ListType, entries: Entries, active: Type.Optional(Type.Boolean()) });
export const ListUpdate = Type.Object({
  name: Type.Optional(Name),
  entries: Type.Optional(Entries),
  active: Type.Optional(Type.Boolean()),
  contractId: Type.Optional(Id),
  type: Type.Optional(ListType),
});
export const List = Type.Object({ ...common, name: Type.String(), type: ListType, entries: Type.Array(Type.String()) });

/** Each pattern entry that does not compile (filter/rules.ts), as `entries[i]` with its position. */
export function entryProblems(type: string, entries: string[] | undefined): Invalid[] {
  return entries ? invalidOf(filterEntryProblems(type as ListType, entries)) : [];
}
