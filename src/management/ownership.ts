/**
 * The one check of a record a request names by id (docs/api.md, errors): unknown → 404
 * NotFoundError, of a contract the caller may not use → 403 ForbiddenError, each naming the
 * property that carried the id. A 403 carries none of the record's data, its contract id included.
 *
 * The owner is either the principal of the request (the record's contract must be granted to the
 * token's consumer in a role that allows the request's operation, `requireContractAccess`: a
 * record the path names) or a contract id (the record must belong to that
 * contract: a record a body references, or a query narrows to).
 */
import { forbiddenError, notFoundError } from '../errors.ts';
import { findAuditEntry } from '../store/audit.ts';
import { findCollection } from '../store/collections.ts';
import type { Db } from '../store/db.ts';
import { filterOwner, findFilter } from '../store/filters.ts';
import { findInput } from '../store/inputs.ts';
import { findRecord, ownerOf, type RecordRow, type RecordTable } from '../store/records.ts';
import type { AuditEntryRow, CollectionRow, CredentialRow, FilterListRow, FilterSetRow, InputRow, WebhookRow } from '../store/tables.ts';
import { type Principal, requireContractAccess } from '../http/authenticate.ts';

/**
 * A kind of record: its human name (`filter list`), how to learn which contract owns one (its
 * contract id, or undefined when there is none) and how to read one of a contract by id.
 */
export interface Kind<Row extends { contractId: string }> {
  label: string;
  owner(db: Db, id: string): Promise<string | undefined>;
  find(db: Db, contractId: string, id: string): Promise<Row | undefined>;
}

/** The kind of the named records of `table` (store/records.ts). */
export function recordKind<Row extends RecordRow>(table: RecordTable, label: string): Kind<Row> {
  return { label, owner: (db, id) => ownerOf(db, table, id), find: (db, contractId, id) => findRecord<Row>(db, table, contractId, id) };
}

export const COLLECTION: Kind<CollectionRow> = { label: 'collection', owner: (db, id) => ownerOf(db, 'collections', id), find: findCollection };
export const INPUT: Kind<InputRow> = { label: 'input', owner: (db, id) => ownerOf(db, 'inputs', id), find: findInput };
export const FILTER: Kind<{ kind: 'set' | 'chain'; id: string; contractId: string }> = { label: 'filter set or chain', owner: filterOwner, find: findFilter };
export const FILTER_SET = recordKind<FilterSetRow>('filterSets', 'filter set');
export const FILTER_LIST = recordKind<FilterListRow>('filterLists', 'filter list');
export const CREDENTIAL = recordKind<CredentialRow>('credentials', 'credential');
export const WEBHOOK = recordKind<WebhookRow>('webhooks', 'webhook');
export const AUDIT_ENTRY: Kind<AuditEntryRow> = { label: 'audit entry', owner: (db, id) => ownerOf(db, 'auditEntries', id), find: findAuditEntry };

/**
 * The record `id` of `kind` if `owner` may use it: a principal that was granted its contract, or
 * the contract id it must belong to. Throws 404 (unknown) or 403 (another contract), both naming
 * `propertyName`.
 */
export async function owned<Row extends { contractId: string }>(db: Db, kind: Kind<Row>, id: string, owner: Principal | string, propertyName = 'id'): Promise<Row> {
  const contractId = await kind.owner(db, id);
  if (contractId === undefined) throw notFoundError(`No ${kind.label} ${id}.`, propertyName, id);
  if (typeof owner === 'string') {
    if (contractId !== owner) throw forbiddenError(`The ${kind.label} named by ${propertyName} belongs to another contract.`, propertyName);
  } else {
    await requireContractAccess(db, owner, contractId, propertyName, `the ${kind.label} named by ${propertyName}`);
  }
  // Removed between the two reads: as unknown.
  const row = await kind.find(db, contractId, id);
  if (!row) throw notFoundError(`No ${kind.label} ${id}.`, propertyName, id);
  return row;
}
