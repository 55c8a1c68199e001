/**
 * Customizations (interface §2.7, §4.6): CSS or JavaScript that changes a contract's
 * publication. Frozen: a later change is a new migration. No foreign key to `contracts`: Kysely
 * runs migrations in name order, and this name sorts before `2026-11-22-initial`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('customizations')
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull().defaultTo('1'))
    .addColumn('description', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('last_modified', 'text', (c) => c.notNull())
    .addColumn('last_modified_by', 'text', (c) => c.notNull())
    .addUniqueConstraint('customizations_contract_name', ['contract_id', 'name'])
    .execute();
  await db.schema.createIndex('customizations_contract').on('customizations').columns(['contract_id', 'active']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('customizations').execute();
}
