/**
 * Filter chains (docs/api.md#filter-chains, docs/filters.md#filters): request and response schemas,
 * and the check a schema cannot make: every set id names a set of the same contract (404 unknown,
 * 403 other contract, naming `sets[i]`).
 */
import { Type } from 'typebox';
import type { Db } from '../../store/db.ts';
import { common, Id } from '../schemas.ts';
import { FILTER_SET, owned } from '../ownership.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Sets = Type.Array(Id, { maxItems: 100, description: 'filter set ids, run in this order; may be empty' });

export const ChainCreate = Type.Object({ name: Name, contractId: Id, sets: Sets, active: Type.Optional(Type.Boolean()) });
export const ChainUpdate = Type.Object({ name: Type.Optional(Name), sets: Type.Optional(Sets), active: Type.Optional(Type.Boolean()), contractId: Type.Optional(Id) });
export const Chain = Type.Object({ ...common, name: Type.String(), sets: Type.Array(Id) });

/**
 * Checks that every id in the body's `sets` names a filter set of the contract: 404 for an unknown
 * one, 403 for another contract's, naming `sets[<i>]` (`owned`).
 */
export async function checkSetIds(db: Db, contractId: string, body: Record<string, unknown>): Promise<void> {
  for (const [i, id] of ((body.sets as string[] | undefined) ?? []).entries()) {
    await owned(db, FILTER_SET, id, contractId, `sets[${i}]`);
  }
}
