/**
 * Collections (docs/api.md#collections): belong to a contract; their slug, unique in the contract,
 * is the `q` parameter of the queue and content API.
 */
import { newId } from '../lib/ids.ts';
import type { DisplayState, PublicationSettings } from '../lib/publication-settings.ts';
import { slugify, uniqueSlug } from '../lib/slug.ts';
import { newRecordFields } from '../lib/time.ts';
import type { Kysely, Transaction } from 'kysely';
import { type Db, isPostgres, preparedLookup, serializable } from './db.ts';
import { bumpVersion } from './items/changes.ts';
import type { User } from './filters.ts';
import type { CollectionRow, Database, LooseDatabase } from './tables.ts';

export const COLLECTION_TYPES = ['realtime', 'ranked'] as const;

/**
 * The de-duplication of a collection created without one, whichever way it is made (management
 * API, CLI, first-start demo): `url+text` (docs/api.md#duplicates). Only the migration that
 * introduced the setting gave existing collections `off`.
 */
export const DEFAULT_DEDUPE = 'url+text';

/**
 * Creates a collection in the contract; throws on a duplicate name (unique constraint). `dedupe`
 * defaults to `DEFAULT_DEDUPE`. Retention defaults to none (keep everything, docs/api.md#retention). `within` runs in the creating transaction once the row is in (the
 * management API records the audit entry there).
 */
export async function createCollection(
  db: Db,
  contractId: string,
  fields: { name: string; type?: string; filterId?: string | null; active?: number; dedupe?: string; retentionDays?: number | null; retentionMaxItems?: number | null; publication?: string | null },
  by: string,
  now = Date.now(),
  within?: (trx: Transaction<Database>, id: string) => Promise<void>,
): Promise<CollectionRow> {
  // Serializable: a slug taken by a concurrent create (another process) makes this one retry.
  return serializable(db, async (trx) => {
    const taken = await trx.selectFrom('collections').select('slug').where('contractId', '=', contractId).execute();
    const row: CollectionRow = {
      id: newId(now),
      contractId,
      name: fields.name,
      slug: uniqueSlug(slugify(fields.name), new Set(taken.map((t) => t.slug))),
      type: fields.type ?? 'realtime',
      filterId: fields.filterId ?? null,
      active: fields.active ?? 1,
      version: 0,
      dedupe: fields.dedupe ?? DEFAULT_DEDUPE,
      retentionDays: fields.retentionDays ?? null,
      retentionMaxItems: fields.retentionMaxItems ?? null,
      publication: fields.publication ?? null,
      displayState: 'live',
      ...newRecordFields(by, now),
    };
    await trx.insertInto('collections').values(row).execute();
    await within?.(trx, row.id);
    return row;
  });
}

/** The contract's collection with this id, or undefined (none, or another contract's). */
export async function findCollection(db: Db, contractId: string, id: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/** The contract's collection with this slug, or undefined (prepared: every queue request asks). */
export const findCollectionBySlug: (db: Db, contractId: string, slug: string) => Promise<CollectionRow | undefined> = preparedLookup(
  (db, contractId: string, slug: string) => db.selectFrom('collections').selectAll().where('contractId', '=', contractId).where('slug', '=', slug),
);

/** The contract's collections, oldest first. */
export async function listCollections(db: Db, contractId: string): Promise<CollectionRow[]> {
  return db.selectFrom('collections').selectAll().where('contractId', '=', contractId).orderBy('id').execute();
}

/** `findActiveCollectionBySlugs`'s read, prepared once per dialect (store/db.ts `preparedLookup`). */
const activeCollectionBySlugs = preparedLookup((db, contractSlug: string, collectionSlug: string) =>
  db
    .selectFrom('collections')
    .innerJoin('contracts', 'contracts.id', 'collections.contractId')
    .select(['collections.id', 'collections.contractId', 'collections.version', 'collections.type'])
    .where('contracts.slug', '=', contractSlug)
    .where('collections.slug', '=', collectionSlug)
    .where('contracts.active', '=', 1)
    .where('collections.active', '=', 1),
);

/**
 * The collection `collectionSlug` of the contract `contractSlug` with its `version`, when both
 * exist and are active; one indexed read, the hot path of public reads (prepared: every
 * public read path asks it once a second per collection, queue/read-path.ts). Undefined otherwise
 * (the caller then finds out which error applies).
 */
export async function findActiveCollectionBySlugs(
  db: Db,
  contractSlug: string,
  collectionSlug: string,
): Promise<{ id: string; contractId: string; version: number; type: string } | undefined> {
  const row = await activeCollectionBySlugs(db, contractSlug, collectionSlug);
  return row ? { id: row.id, contractId: row.contractId, version: Number(row.version), type: row.type } : undefined;
}

/** The stored publication settings of a collection row: `{}` when none (docs/api.md#publication-settings). */
export function publicationOf(row: { publication: string | null }): PublicationSettings {
  return row.publication ? (JSON.parse(row.publication) as PublicationSettings) : {};
}

/** The publication settings of the contract's collection with this id (`{}` when none or no such collection): one read by primary key. */
export async function findPublicationSettings(db: Db, contractId: string, collectionId: string): Promise<PublicationSettings> {
  const row = await db.selectFrom('collections').select('publication').where('contractId', '=', contractId).where('id', '=', collectionId).executeTakeFirst();
  return row ? publicationOf(row) : {};
}

/**
 * Sets what the collection's event screens show (docs/api.md#display-controls), in `trx` (the
 * caller's transaction, with its audit entry); returns the state before, or undefined when there
 * is no such collection of the contract. The content stream reads it (`streamMarks`) and tells open screens.
 */
export async function setDisplayState(trx: Transaction<Database>, contractId: string, collectionId: string, state: DisplayState): Promise<DisplayState | undefined> {
  const row = await trx.selectFrom('collections').select('displayState').where('contractId', '=', contractId).where('id', '=', collectionId).executeTakeFirst();
  if (!row) return undefined;
  await trx.updateTable('collections').set({ displayState: state }).where('contractId', '=', contractId).where('id', '=', collectionId).execute();
  return row.displayState as DisplayState;
}

/**
 * What the content stream polls (src/queue/stream.ts), in one read by primary key: the
 * collection's `version` (bumped by every item insert and moderation) and its display state;
 * undefined when the collection is gone (or is another contract's).
 */
export async function streamMarks(db: Db, contractId: string, collectionId: string): Promise<{ version: number; displayState: DisplayState } | undefined> {
  const row = await db.selectFrom('collections').select(['version', 'displayState']).where('contractId', '=', contractId).where('id', '=', collectionId).executeTakeFirst();
  return row ? { version: Number(row.version), displayState: row.displayState as DisplayState } : undefined;
}

/** The contract's inputs that belong to one of the collections (they block its deletion). */
async function inputsOfCollections(db: Db | Transaction<Database>, contractId: string, collectionIds: string[]): Promise<User[]> {
  if (!collectionIds.length) return [];
  const rows = await db
    .selectFrom('inputs')
    .select(['id', 'input', 'collectionId'])
    .where('contractId', '=', contractId)
    .where('collectionId', 'in', collectionIds)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ kind: 'input', id: row.id, name: row.input, uses: row.collectionId }));
}

/**
 * The contract's inputs and customizations that belong to one of the collections: each blocks
 * its deletion (docs/api.md#deleting), a customization so that it never turns contract-wide or
 * vanishes unseen.
 */
export async function usersOfCollections(db: Db | Transaction<Database>, contractId: string, collectionIds: string[]): Promise<User[]> {
  if (!collectionIds.length) return [];
  const customizations = await db
    .selectFrom('customizations')
    .select(['id', 'name', 'collectionId'])
    .where('contractId', '=', contractId)
    .where('collectionId', 'in', collectionIds)
    .orderBy('id')
    .execute();
  return [...(await inputsOfCollections(db, contractId, collectionIds)), ...customizations.map((row) => ({ kind: 'customization', id: row.id, name: row.name, uses: row.collectionId! }))];
}

/**
 * Deletes the stored content items of the collections: a deleted collection's queue goes with
 * it, with its de-duplication keys and duplicates (call in the transaction that deletes the
 * collections; on SQLite `drainCollectionItems` has deleted nearly all of them before).
 */
export async function deleteCollectionItems(trx: Transaction<Database>, contractId: string, collectionIds: string[]): Promise<void> {
  if (!collectionIds.length) return;
  await trx.deleteFrom('items').where('contractId', '=', contractId).where('collectionId', 'in', collectionIds).execute();
  // The de-duplication keys and merged duplicates (docs/api.md#duplicates) go with the items; the
  // ids are the contract's own (the caller checked), so these need no contract column.
  for (const table of ['itemUrls', 'itemPrints', 'itemDuplicates'] as const) await trx.deleteFrom(table).where('collectionId', 'in', collectionIds).execute();
}

/** Rows deleted per transaction by `drainCollectionItems`. */
export const DRAIN_BATCH = 100;

/** The tables `drainCollectionItems` empties for a collection, each with the key column that follows `collection_id` in its primary key. */
const DRAINED = [['items', 'id'], ['itemDuplicates', 'id'], ['itemUrls', 'urlHash'], ['itemPrints', 'bandKey']] as const;

/**
 * Before the collections are deleted (`deleteCollectionItems` in the deleting transaction), on
 * SQLite: deletes their items, duplicates and de-duplication keys in transactions of about
 * DRAIN_BATCH rows (a range of the primary key; more when fingerprint rows share a band key),
 * pausing between two as long as the batch took, so that reads and other tenants' polls go on
 * (better-sqlite3 holds the event loop while a statement runs, the connection is one, and SQLite
 * has one writer; one DELETE of 100 000 items held all three 8 s). Each batch of items bumps the collection's version
 * (cached pages drop them). On PostgreSQL it does nothing: the deleting transaction deletes them
 * while the event loop goes on. Resolves to the number of rows deleted; throws what the
 * database throws.
 */
export async function drainCollectionItems(db: Db, contractId: string, collectionIds: string[]): Promise<number> {
  if (isPostgres(db)) return 0;
  let deleted = 0;
  for (const collectionId of collectionIds) {
    // Only the contract's own collections (the caller checked; the dedupe tables have no contract column).
    const owned = await db.selectFrom('collections').select('id').where('id', '=', collectionId).where('contractId', '=', contractId).executeTakeFirst();
    if (!owned) continue;
    for (const [table, key] of DRAINED) {
      // Bounded: each round deletes at least one row of a table that only shrinks (no input feeds the collection).
      for (;;) {
        // Kysely cannot type a column of a table chosen from a list.
        const last = await (db as unknown as Kysely<LooseDatabase>).selectFrom(table).select(key).where('collectionId', '=', collectionId).orderBy(key).limit(1).offset(DRAIN_BATCH - 1).executeTakeFirst();
        const started = performance.now();
        const count = await db.transaction().execute(async (trx) => {
          let query = (trx as unknown as Kysely<LooseDatabase>).deleteFrom(table).where('collectionId', '=', collectionId);
          if (last) query = query.where(key, '<=', (last as Record<string, unknown>)[key]);
          const result = await query.executeTakeFirst();
          if (table === 'items' && Number(result.numDeletedRows) > 0) await bumpVersion(trx, contractId, collectionId);
          return Number(result.numDeletedRows);
        });
        deleted += count;
        if (!last || count === 0) break;
        // As long a pause as the batch took (at least 1 ms): a request waiting for the connection
        // gets it for all its queries, not one between two batches.
        await new Promise((resolve) => setTimeout(resolve, Math.max(1, performance.now() - started)));
      }
    }
  }
  return deleted;
}
