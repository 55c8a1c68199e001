/**
 * Articles and related content (issue 36, docs/api.md#related-content): a table `articles`, one
 * row per article address a contract was asked about (`GET /v1/related/{contract}?q=<url>`) or
 * given ahead of its first visit (`POST /collection/articles`): the address as asked (unique per
 * contract), the title and first words read from the page (null until it was read), how many
 * related items its latest answer had, and when it was added and last computed (ms since the
 * epoch). A table `article_pins`: items a moderator pinned for an article
 * (`PATCH /v1/queue/{contract}` with `{"article": "<url>"}`), by collection and item id, in the
 * order pinned. Removing an article removes its pins. Frozen: a later change is a new migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('articles')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id').onDelete('cascade'))
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('text', 'text')
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('computed_at', 'bigint')
    .execute();
  await db.schema.createIndex('articles_contract_url').ifNotExists().unique().on('articles').columns(['contract_id', 'url']).execute();
  await db.schema.createIndex('articles_contract_created').ifNotExists().on('articles').columns(['contract_id', 'created_at']).execute();
  await db.schema
    .createTable('article_pins')
    .ifNotExists()
    .addColumn('article_id', 'varchar(24)', (c) => c.notNull().references('articles.id').onDelete('cascade'))
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('item_id', 'varchar(300)', (c) => c.notNull())
    .addColumn('pinned_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('article_pins_key', ['article_id', 'collection_id', 'item_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('article_pins').ifExists().execute();
  await db.schema.dropTable('articles').ifExists().execute();
}
