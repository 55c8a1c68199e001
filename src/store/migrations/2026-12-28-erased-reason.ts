/**
 * Why an item left its collection, for the streams (docs/api.md#retention, docs/api.md#erasure):
 * `erased_items.reason`, `erased` (an erasure on request, store/erasures.ts; every row written
 * before this migration) or `expired` (deleted by retention, store/retention.ts). The queue
 * stream sends it as the `remove` event's `removedReason` (queue/stream.ts). varchar(16), not
 * null, default `erased`. Frozen: a later change is a new migration. Idempotent.
 */
import type { Kysely } from 'kysely';
import { hasColumn } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (!(await hasColumn(db, 'erased_items', 'reason'))) await db.schema.alterTable('erased_items').addColumn('reason', 'varchar(16)', (c) => c.notNull().defaultTo('erased')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'erased_items', 'reason')) await db.schema.alterTable('erased_items').dropColumn('reason').execute();
}
