/**
 * The moderators' queue stream (issue 12, docs/api.md `GET /v1/queue/{contract}/stream`) reads
 * the items a collection received after a moment, in any state: an index on
 * `(collection_id, created_at)` serves that read and the collection's latest arrival.
 * Idempotent (the index is created if missing). Frozen: a later change is a new migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('items_arrivals').ifNotExists().on('items').columns(['collection_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('items_arrivals').ifExists().execute();
}
