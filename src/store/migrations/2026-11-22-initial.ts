/**
 * The first schema. Frozen: a later change is a new migration. Written with Kysely's schema
 * builder only, so it runs on SQLite and PostgreSQL alike.
 */
import type { Kysely } from 'kysely';

const audited = ['created', 'created_by', 'last_modified', 'last_modified_by'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  let contracts = db.schema
    .createTable('contracts')
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('filter_id', 'varchar(24)')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1));
  for (const column of audited) contracts = contracts.addColumn(column, 'text', (c) => c.notNull());
  await contracts.execute();

  let collections = db.schema
    .createTable('collections')
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('filter_id', 'varchar(24)')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addUniqueConstraint('collections_contract_slug', ['contract_id', 'slug'])
    .addUniqueConstraint('collections_contract_name', ['contract_id', 'name']);
  for (const column of audited) collections = collections.addColumn(column, 'text', (c) => c.notNull());
  await collections.execute();

  await db.schema
    .createTable('consumers')
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.unique())
    .addColumn('language', 'text')
    .addColumn('username', 'text', (c) => c.unique())
    .addColumn('password_hash', 'text')
    .addColumn('client_id', 'text', (c) => c.unique())
    .addColumn('secret_hash', 'text')
    .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('grants')
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull().references('consumers.id'))
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('grants_pk', ['consumer_id', 'contract_id'])
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull().references('consumers.id'))
    .addColumn('family', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tokens_family').on('tokens').column('family').execute();

  let inputs = db.schema
    .createTable('inputs')
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull().references('collections.id'))
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('filter_id', 'varchar(24)')
    .addColumn('latitude', 'double precision')
    .addColumn('longitude', 'double precision')
    .addColumn('radius', 'double precision')
    .addColumn('display', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('source_state', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('last_run', 'text')
    .addColumn('last_success', 'text')
    .addColumn('last_error', 'text')
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('collected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0));
  for (const column of audited) inputs = inputs.addColumn(column, 'text', (c) => c.notNull());
  await inputs.execute();
  await db.schema.createIndex('inputs_contract').on('inputs').columns(['contract_id', 'collection_id']).execute();
  await db.schema.createIndex('inputs_due').on('inputs').columns(['active', 'next_run_at']).execute();

  await db.schema
    .createTable('items')
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull().references('collections.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('input_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('date_ms', 'bigint', (c) => c.notNull())
    .addColumn('score', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('language', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('items_pk', ['collection_id', 'id'])
    .execute();
  // Queue reads (all states) and content reads (published only), newest first, ties by id.
  await db.schema.createIndex('items_queue').on('items').columns(['collection_id', 'date_ms', 'id']).execute();
  await db.schema.createIndex('items_content').on('items').columns(['collection_id', 'state', 'date_ms', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['items', 'inputs', 'tokens', 'grants', 'consumers', 'collections', 'contracts']) {
    await db.schema.dropTable(table).execute();
  }
}
