/**
 * The audit trail (docs/api.md#audit-trail; migration 2026-11-28-audit-jobs): every change made
 * through the APIs is recorded by `recordAudit`, called by the change with the change's own
 * transaction, so a change and its entry commit or fail together. Shared by the management and
 * queue areas (both call it; neither imports the other).
 *
 * An entry: when (`at`, ms), who (`actor`: consumer id and name; the operator's CLI has id null),
 * the contract, the resource (`collection`, `input`, `list`, `set`, `chain`, `customization`,
 * `credential`, `contract`, `grant`, `item`) and its id, the action, and the record as presented
 * by the API before and after (JSON; null for a create's before and a delete's after).
 * Secrets are never recorded: callers pass presented records (a credential shows masked hints,
 * never its secret fields), and `scrub` drops any property named like a secret besides.
 *
 * Moderation entries (`moderate`, `apply`, `revert` on resource `item`) also list every item they
 * changed, with its state before and after, in `audit_items`: one entry for a bulk moderation
 * or a filter application, however many items; the entry's own `before`/`after` show at most
 * `INLINE_ITEMS` of them (`itemCount` says how many there are).
 */
import type { Transaction } from 'kysely';
import { newId } from '../lib/ids.ts';
import { insertAll } from './batch.ts';
import type { Db } from './db.ts';
import type { AuditEntryRow, Database } from './tables.ts';

/** Who made a change: a consumer, or the operator (id null, name `operator`). */
export interface Actor {
  id: string | null;
  name: string;
}

/** The operator acting through the CLI. */
export const OPERATOR: Actor = { id: null, name: 'operator' };

/** Sluice itself, e.g. disabling a webhook whose deliveries kept failing (docs/api.md#webhook-delivery). */
export const SLUICE: Actor = { id: null, name: 'sluice' };

/** An item a moderation changed: its state before and after. */
export interface AuditItem {
  itemId: string;
  before: string;
  after: string;
}

export interface NewAuditEntry {
  contractId: string;
  actor: Actor;
  resource: string;
  resourceId: string;
  action: string;
  before?: unknown;
  after?: unknown;
  /** With `items`: the collection of the items. */
  collectionId?: string;
  items?: AuditItem[];
  /** The entry this one reverts. */
  reverts?: string;
}

/** Items shown in a moderation entry's `before` and `after` (all are in `audit_items`). */
export const INLINE_ITEMS = 100;

/** Property names never recorded, whatever record carries them. */
const SECRET = /secret|password|token|apikey|passphrase|private/i;

/**
 * `value` without any property named like a secret (at any depth); the original is untouched.
 * A credential's `hints` stay: they are the API's own masked form (`…abcd`), never the secret.
 */
export function scrub(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !SECRET.test(key)).map(([key, inner]) => [key, key === 'hints' ? inner : scrub(inner)]));
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(scrub(value)));

/**
 * Records a change inside `trx` (the change's transaction) at `now` (ms); returns the entry's id.
 * A moderation's `items` are stored in full (in batches) and the first INLINE_ITEMS shown inline
 * as `{items: [{id, state}]}` before and after, unless the caller gives `before`/`after` itself.
 */
export async function recordAudit(trx: Transaction<Database>, entry: NewAuditEntry, now = Date.now()): Promise<string> {
  const id = newId(now);
  const items = entry.items ?? [];
  const inline = (side: 'before' | 'after') => ({ items: items.slice(0, INLINE_ITEMS).map((item) => ({ id: item.itemId, state: item[side] })) });
  await trx
    .insertInto('auditEntries')
    .values({
      id,
      contractId: entry.contractId,
      at: now,
      consumerId: entry.actor.id,
      consumerName: entry.actor.name,
      resource: entry.resource,
      resourceId: entry.resourceId,
      action: entry.action,
      before: json(entry.before ?? (items.length ? inline('before') : null)),
      after: json(entry.after ?? (items.length ? inline('after') : null)),
      collectionId: entry.collectionId ?? null,
      itemCount: items.length,
      reverts: entry.reverts ?? null,
    })
    .execute();
  if (items.length) {
    const collectionId = entry.collectionId!;
    await insertAll(trx, 'auditItems', items.map((item) => ({ entryId: id, collectionId, itemId: item.itemId, before: item.before, after: item.after })));
  }
  return id;
}

/** What an audit read narrows to (docs/api.md#audit-trail); times in ms, inclusive. */
export interface AuditQuery {
  contractId: string;
  resource?: string;
  resourceId?: string;
  consumerId?: string;
  action?: string;
  sinceMs?: number;
  untilMs?: number;
  /** Only entries older than this entry id (the last id of the previous page). */
  before?: string;
  count: number;
}

/** A page of the contract's entries, newest first (by id: ids sort by creation). */
export async function listAudit(db: Db, query: AuditQuery): Promise<AuditEntryRow[]> {
  let q = db.selectFrom('auditEntries').selectAll().where('contractId', '=', query.contractId);
  if (query.resource) q = q.where('resource', '=', query.resource);
  if (query.resourceId) q = q.where('resourceId', '=', query.resourceId);
  if (query.consumerId) q = q.where('consumerId', '=', query.consumerId);
  if (query.action) q = q.where('action', '=', query.action);
  if (query.sinceMs !== undefined) q = q.where('at', '>=', query.sinceMs);
  if (query.untilMs !== undefined) q = q.where('at', '<=', query.untilMs);
  if (query.before) q = q.where('id', '<', query.before);
  return q.orderBy('id', 'desc').limit(query.count).execute();
}

/** The contract's entry with this id, or undefined (none, or another contract's: `owned()` with management/ownership.ts `AUDIT_ENTRY` tells 404 from 403). */
export async function findAuditEntry(db: Db | Transaction<Database>, contractId: string, id: string): Promise<AuditEntryRow | undefined> {
  return db.selectFrom('auditEntries').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/** One step of an item's history: the entry and the item's state before and after it. */
export interface ItemHistoryStep {
  entry: AuditEntryRow;
  before: string;
  after: string;
}

/** The moderation history of item `itemId` of the contract's collection, newest first, at most `limit` steps. */
export async function itemHistory(db: Db, contractId: string, collectionId: string, itemId: string, limit = 100): Promise<ItemHistoryStep[]> {
  const rows = await db
    .selectFrom('auditItems')
    .innerJoin('auditEntries', 'auditEntries.id', 'auditItems.entryId')
    .selectAll('auditEntries')
    .select(['auditItems.before as itemBefore', 'auditItems.after as itemAfter'])
    .where('auditEntries.contractId', '=', contractId)
    .where('auditItems.collectionId', '=', collectionId)
    .where('auditItems.itemId', '=', itemId)
    .orderBy('auditItems.entryId', 'desc')
    .limit(limit)
    .execute();
  return rows.map(({ itemBefore, itemAfter, ...entry }) => ({ entry, before: itemBefore, after: itemAfter }));
}

/** The items entry `entryId` changed (state before and after), in no particular order. */
export async function auditItems(db: Db | Transaction<Database>, entryId: string): Promise<AuditItem[]> {
  return db.selectFrom('auditItems').select(['itemId', 'before', 'after']).where('entryId', '=', entryId).execute();
}

/**
 * The items of the contract's entry `entryId` whose state is no longer what the entry set
 * (moderated since, or gone with their collection), at most `limit`; none for an entry of another
 * contract.
 */
export async function changedSince(db: Db | Transaction<Database>, contractId: string, entryId: string, limit = 10): Promise<string[]> {
  const rows = await db
    .selectFrom('auditItems as a')
    .innerJoin('auditEntries as e', 'e.id', 'a.entryId')
    .leftJoin('items as i', (join) => join.onRef('i.collectionId', '=', 'a.collectionId').onRef('i.id', '=', 'a.itemId'))
    .select('a.itemId as itemId')
    .where('e.contractId', '=', contractId)
    .where('a.entryId', '=', entryId)
    .where((eb) => eb.or([eb('i.id', 'is', null), eb('i.state', '<>', eb.ref('a.after'))]))
    .orderBy('a.itemId')
    .limit(limit)
    .execute();
  return rows.map((row) => row.itemId);
}

/** Marks the contract's entry `entryId` reverted by `revertId`, unless it already was; returns whether it was marked (false for another contract's). */
export async function markReverted(trx: Transaction<Database>, contractId: string, entryId: string, revertId: string): Promise<boolean> {
  const result = await trx.updateTable('auditEntries').set({ revertedBy: revertId }).where('contractId', '=', contractId).where('id', '=', entryId).where('revertedBy', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
