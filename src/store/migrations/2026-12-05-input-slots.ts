/**
 * Politeness across the installation (issue 31 point 5, docs/operations.md#several-processes).
 * Frozen: a later change is a new migration. Idempotent (a re-run changes nothing).
 *
 * A collector process that claims an input (`store/inputs.ts` `claimDueInputs`) now also holds
 * one of its politeness key's COLLECT_HOST_CONCURRENCY slots until the poll ends:
 * - `inputs.claimed_until` (ms, null when not claimed): the claim's lease; set by the claim,
 *   cleared when the poll ends, run out when the claimer died;
 * - `inputs_claimed` (claimed_until) over the claimed rows only (partial: `claimed_until is not
 *   null`, as many rows as polls under way): the slots in use, counted by every claim without
 *   walking the inputs.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table inputs add column if not exists claimed_until bigint`.execute(db);
  } else {
    const columns = await sql<{ name: string }>`pragma table_info(inputs)`.execute(db);
    if (!columns.rows.some((column) => column.name === 'claimed_until')) await db.schema.alterTable('inputs').addColumn('claimed_until', 'bigint').execute();
  }
  await db.schema.createIndex('inputs_claimed').ifNotExists().on('inputs').column('claimed_until').where(sql.ref('claimed_until'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('inputs_claimed').ifExists().execute();
  await db.schema.alterTable('inputs').dropColumn('claimed_until').execute();
}
