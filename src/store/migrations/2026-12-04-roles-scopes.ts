/**
 * Roles per grant and OAuth scopes (issue 32, docs/api.md#roles-and-scopes). Frozen: the role and
 * scope names are written here, not imported. Idempotent: a column already there is left as it is.
 *
 * - `grants.role`: `owner`, `admin`, `editor`, `moderator` or `viewer`; every grant that exists
 *   becomes `owner` (what a grant gave until now: everything).
 * - `consumers.scopes`: the scopes a machine client may ask for (RFC 6749 §3.3), space-separated;
 *   every existing client, the console's first-party client among them, may ask for all of them.
 *   Null for users (a user's token takes its scope from the client it is issued to).
 * - `tokens.scope`: the scope of an access or refresh token, space-separated; every existing
 *   token keeps the access it had: all scopes. A token stored without one has none.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const ALL_SCOPES = 'queue:read queue:moderate manage:read manage:write credentials team';

/** Adds `column` to `table` (`definition`: type, constraints and default in SQL) unless it is there. */
async function addColumn(db: Kysely<any>, table: string, column: string, definition: string): Promise<boolean> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const found = await sql<{ n: number }>`select 1 as n from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
    if (found.rows.length) return false;
  } else {
    const columns = await sql<{ name: string }>`pragma table_info(${sql.raw(table)})`.execute(db);
    if (columns.rows.some((row) => row.name === column)) return false;
  }
  await sql`alter table ${sql.raw(table)} add column ${sql.raw(column)} ${sql.raw(definition)}`.execute(db);
  return true;
}

export async function up(db: Kysely<any>): Promise<void> {
  await addColumn(db, 'grants', 'role', "text not null default 'owner'");
  if (await addColumn(db, 'consumers', 'scopes', 'text')) {
    await db.updateTable('consumers').set({ scopes: ALL_SCOPES }).where('type', '=', 'client').execute();
  }
  if (await addColumn(db, 'tokens', 'scope', "text not null default ''")) {
    await db.updateTable('tokens').set({ scope: ALL_SCOPES }).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('scope').execute();
  await db.schema.alterTable('consumers').dropColumn('scopes').execute();
  await db.schema.alterTable('grants').dropColumn('role').execute();
}
