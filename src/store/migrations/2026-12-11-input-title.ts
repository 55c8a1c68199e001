/**
 * Sources you can trust (issue 33 point 5, docs/api.md#poll-now). Frozen: a later change is a new
 * migration. Idempotent (a re-run changes nothing).
 *
 * - `inputs.source_title`: nullable text, the feed's or account's own title as its last
 *   successful poll read it (RSS `channel/title`, Atom `feed/title`, JSON Feed `title`); null
 *   until known. Shown read-only as the input's `title`.
 * - `inputs.poll_now_at`: nullable bigint (ms), when `POST /collection/inputs/{id}/poll` last
 *   took the input's turn; the next manual poll of the input waits until 10 s after it.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

/** Whether `inputs` has the column (PostgreSQL: information_schema of the current schema). */
async function hasColumn(db: Kysely<any>, column: string): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'inputs' and column_name = ${column}`.execute(db);
    return rows.length > 0;
  }
  const { rows } = await sql<{ name: string }>`pragma table_info(inputs)`.execute(db);
  return rows.some((row) => row.name === column);
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!(await hasColumn(db, 'source_title'))) await db.schema.alterTable('inputs').addColumn('source_title', 'text').execute();
  if (!(await hasColumn(db, 'poll_now_at'))) await db.schema.alterTable('inputs').addColumn('poll_now_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'poll_now_at')) await db.schema.alterTable('inputs').dropColumn('poll_now_at').execute();
  if (await hasColumn(db, 'source_title')) await db.schema.alterTable('inputs').dropColumn('source_title').execute();
}
