/**
 * Checks of resources a body names (decisions §2, §6): they must exist (404) and belong to the
 * same contract (403 ForbiddenError naming the property), never revealing another contract's data.
 */
import { forbiddenError, notFoundError } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { findFilter } from '../store/filters.ts';

/** Throws unless `filterId` names a filter set or chain of the contract. */
export async function requireFilterIn(db: Db, filterId: string, contractId: string, propertyName = 'filterId'): Promise<void> {
  const filter = await findFilter(db, filterId);
  if (!filter) throw notFoundError(`No filter set or chain ${filterId}.`, propertyName, filterId);
  if (filter.contractId !== contractId) throw forbiddenError(`Filter ${filterId} belongs to another contract.`, propertyName);
}
