/**
 * Service credentials of a contract (issue 15, docs/api.md#credentials): a table `credentials`
 * (the common record fields; `service`; `is_default`, at most one per contract and service, by a
 * partial unique index; the non-secret fields as JSON text; the secret fields as one sealed value
 * (`lib/secret-box.ts`) with the id of its key beside it; a masked hint per secret field; who
 * connected it; its health) and `inputs.credential_id`, the credential an input names.
 * Idempotent (a re-run changes nothing). Frozen; named after
 * 2026-11-26-client-emails so that it runs after it (Kysely orders by name).
 */
import { type Kysely, sql } from 'kysely';
import { currentSchema } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credentials')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('hints', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('connected_by_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ok'))
    .addColumn('last_used', 'text')
    .addColumn('last_error', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('last_modified', 'text', (c) => c.notNull())
    .addColumn('last_modified_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credentials_contract_name').ifNotExists().unique().on('credentials').columns(['contract_id', 'name']).execute();
  await db.schema
    .createIndex('credentials_default')
    .ifNotExists()
    .unique()
    .on('credentials')
    .columns(['contract_id', 'service'])
    .where(sql.ref('is_default'), '=', 1)
    .execute();
  if (await currentSchema(db)) {
    // PostgreSQL says it itself.
    await sql`alter table inputs add column if not exists credential_id varchar(24)`.execute(db);
  } else if (!(await sql<{ name: string }>`select name from pragma_table_info('inputs')`.execute(db)).rows.some((column) => column.name === 'credential_id')) {
    await db.schema.alterTable('inputs').addColumn('credential_id', 'varchar(24)').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inputs').dropColumn('credential_id').execute();
  await db.schema.dropTable('credentials').execute();
}
