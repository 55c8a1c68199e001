/**
 * Filter lists, filter sets, filter chains (docs/filters.md#filters) and customizations
 * (docs/api.md#customizations).
 * Frozen: a later change is a new migration. Lists of values (entries, rules, set ids) are JSON
 * text, read and written whole with their record. Names are unique per resource type inside a
 * contract.
 */
import type { Kysely } from 'kysely';

const audited = ['created', 'created_by', 'last_modified', 'last_modified_by'] as const;

function named(db: Kysely<any>, table: string) {
  return db.schema
    .createTable(table)
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addUniqueConstraint(`${table}_contract_name`, ['contract_id', 'name']);
}

export async function up(db: Kysely<any>): Promise<void> {
  const tables = [
    named(db, 'filter_lists').addColumn('type', 'text', (c) => c.notNull()).addColumn('entries', 'text', (c) => c.notNull()),
    named(db, 'filter_sets')
      .addColumn('rules', 'text', (c) => c.notNull())
      .addColumn('pre_condition', 'text', (c) => c.notNull())
      .addColumn('any_rule', 'integer', (c) => c.notNull().defaultTo(0)),
    named(db, 'filter_chains').addColumn('sets', 'text', (c) => c.notNull()),
    named(db, 'customizations')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('description', 'text'),
  ];
  for (let table of tables) {
    for (const column of audited) table = table.addColumn(column, 'text', (c) => c.notNull());
    await table.execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['customizations', 'filter_chains', 'filter_sets', 'filter_lists']) await db.schema.dropTable(table).execute();
}
