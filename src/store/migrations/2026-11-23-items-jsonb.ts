/**
 * On PostgreSQL, content items' `body` becomes `jsonb` (issue 8: PostgreSQL's strengths where
 * items are stored as documents): validated on write, stored parsed, open to JSON operators and
 * GIN indexes. SQLite keeps text. Readers take either form (`store/items.ts` `itemBody`).
 * Frozen; named after the 2026-11-22 topics so that it runs last (Kysely orders by name).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const onPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<any>): Promise<void> {
  if (onPostgres(db)) await sql`alter table items alter column body type jsonb using body::jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (onPostgres(db)) await sql`alter table items alter column body type text using body::text`.execute(db);
}
