/**
 * Filter lists (docs/api.md, docs/filters.md): request and response schemas, and
 * the rule a schema cannot say: every entry of a `patterns` list compiles on re2js (400 naming
 * `entries[i]`, the position in `reason`) and together they stay within the compiled-size bound
 * (400 naming `entries`, docs/filters.md#bounds), checked in the filter pool, off the event loop.
 */
import { Type } from 'typebox';
import { validationError } from '../../errors.ts';
import { MAX_PATTERN_LENGTH } from '../../filter/patterns.ts';
import { filterPool } from '../../filter/pool.ts';
import { type ListType, LIST_TYPES } from '../../filter/rules.ts';
import type { Db } from '../../store/db.ts';
import type { FilterListRow } from '../../store/tables.ts';
import { common, Id } from '../schemas.ts';
import { invalidOf } from '../filters/problems.ts';

/** Entries per list (docs/api.md#limits). */
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
export const List = Type.Object({
  ...common,
  contractId: Type.Union([Id, Type.Null()], { description: 'the owning contract; null for a built-in list' }),
  name: Type.String(),
  type: ListType,
  entries: Type.Array(Type.String()),
  builtIn: Type.Optional(Type.Boolean({ description: 'true: a read-only list that ships with Sluice (docs/filters.md#built-in-lists)' })),
  language: Type.Optional(Type.String({ description: 'built-in lists: the language code of the words' })),
  version: Type.Optional(Type.String({ description: 'built-in lists: the package and version the entries come from, e.g. naughty-words@1.2.0' })),
});

/**
 * Throws 400 naming each `patterns` entry that does not compile (filter/rules.ts), as
 * `entries[i]` with its position, or `entries` when they exceed the compiled-size bound; 429
 * RateLimitError when the contract's share of the filter pool is full (docs/filters.md#bounds).
 */
export async function checkEntries(_db: Db, contractId: string, body: Record<string, unknown>, current?: FilterListRow): Promise<void> {
  const type = (current?.type ?? body.type) as ListType;
  const entries = body.entries as string[] | undefined;
  if (!entries || type !== 'patterns') return;
  const invalid = invalidOf(await filterPool().problems(contractId, { list: { type, entries } }));
  if (invalid.length) throw validationError(invalid);
}
