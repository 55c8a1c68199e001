/**
 * Collections (decisions §4): belong to a contract; their slug, unique in the contract, is the
 * `q` parameter of the queue and content API.
 */
import { newId } from '../lib/ids.ts';
import { slugify, uniqueSlug } from '../lib/slug.ts';
import { audit } from '../lib/time.ts';
import { type Db, serializable } from './db.ts';
import type { CollectionRow } from './tables.ts';

export const COLLECTION_TYPES = ['realtime', 'ranked'] as const;

/** Creates a collection in the contract; throws on a duplicate name (unique constraint). */
export async function createCollection(
  db: Db,
  contractId: string,
  fields: { name: string; type?: string },
  by: string,
): Promise<CollectionRow> {
  // Serializable: a slug taken by a concurrent create (another process) makes this one retry.
  return serializable(db, async (trx) => {
    const taken = await trx.selectFrom('collections').select('slug').where('contractId', '=', contractId).execute();
    const row: CollectionRow = {
      id: newId(),
      contractId,
      name: fields.name,
      slug: uniqueSlug(slugify(fields.name), new Set(taken.map((t) => t.slug))),
      type: fields.type ?? 'realtime',
      filterId: null,
      active: 1,
      ...audit(by),
    };
    await trx.insertInto('collections').values(row).execute();
    return row;
  });
}

/** The collection with this id, or undefined (any contract: callers check ownership). */
export async function findCollection(db: Db, id: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The contract's collection with this slug, or undefined. */
export async function findCollectionBySlug(db: Db, contractId: string, slug: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('contractId', '=', contractId).where('slug', '=', slug).executeTakeFirst();
}

/** The contract's collections, oldest first. */
export async function listCollections(db: Db, contractId: string): Promise<CollectionRow[]> {
  return db.selectFrom('collections').selectAll().where('contractId', '=', contractId).orderBy('id').execute();
}
