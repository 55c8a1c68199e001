/**
 * Items a filter rejected (issue 5, docs/filters.md#rejections). Frozen: a later change is a new
 * migration.
 *
 * One row per input and rejected item id: the collector counts an item as rejected once over
 * the input's life (a re-fetched item already rejected counts again in neither `collected` nor
 * `rejected`), and `GET /collection/inputs/{id}/rejections` reads the most recent rows with the
 * set, rule and reason. `created_at` is ms since the epoch.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rejections')
    .addColumn('input_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('title', 'text')
    .addColumn('set_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('set_name', 'text', (c) => c.notNull())
    .addColumn('rule', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rejections_pk', ['input_id', 'item_id'])
    .execute();
  await db.schema.createIndex('rejections_recent').on('rejections').columns(['input_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rejections').execute();
}
