/**
 * What the last successful poll of an input had to drop or make up (issue 14: feeds whose entries
 * were dropped or dated at the poll time are reported in the input's status,
 * docs/api.md#input-status). Frozen: a later change is a new migration.
 *
 * `inputs.warnings` is a JSON array of `{code, count, message}`, replaced by every successful
 * poll and emptied when the input's source changes; `[]` for the inputs that exist already.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inputs').addColumn('warnings', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inputs').dropColumn('warnings').execute();
}
