/**
 * Earlier versions of customizations (issue 12, docs/api.md#customization-versions): every
 * update of a customization stores the state it replaces here, in the update's transaction.
 * A row is the whole customization as it was (name, type, data, version, description, active,
 * its last change) plus when and by whom it was replaced. Rows go with their customization.
 * Idempotent (a re-run changes nothing). Frozen; named after 2026-11-24-console-client so that it runs after it (Kysely orders by name).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('customization_versions')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('customization_id', 'varchar(24)', (c) => c.notNull().references('customizations.id').onDelete('cascade'))
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('last_modified', 'text', (c) => c.notNull())
    .addColumn('last_modified_by', 'text', (c) => c.notNull())
    .addColumn('replaced', 'text', (c) => c.notNull())
    .addColumn('replaced_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('customization_versions_customization').ifNotExists().on('customization_versions').columns(['customization_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('customization_versions').execute();
}
