/**
 * How each input is fed (issue 18, docs/api.md#input-status) and the streams one process holds
 * at a time (docs/services.md#push-and-streams). Frozen: a later change is a new migration.
 * Idempotent: columns and tables already there are left as they are.
 *
 * - `inputs.feed_mode`: `poll` (the default, every input that exists), `push` (WebSub) or
 *   `stream` (Mastodon streaming, Bluesky Jetstream); `feed_since` when it became so and
 *   `last_event_at` when the last pushed or streamed event arrived, both ms since the epoch.
 * - `streams`: one row per stream of the installation (a Jetstream connection, a Mastodon
 *   instance's stream), named by the listener: the process holding it (`holder`) until
 *   `expires_at` (ms; renewed while it listens, taken over by another process once expired) and
 *   the stream's resume `cursor` (e.g. Jetstream's `time_us`), written only by the holder.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const COLUMNS: [name: string, definition: string][] = [
  ['feed_mode', `text not null default 'poll'`],
  ['feed_since', 'bigint'],
  ['last_event_at', 'bigint'],
];

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const [name, definition] of COLUMNS) await sql.raw(`alter table inputs add column if not exists ${name} ${definition}`).execute(db);
  } else {
    const columns = await sql<{ name: string }>`pragma table_info(inputs)`.execute(db);
    for (const [name, definition] of COLUMNS) {
      if (!columns.rows.some((column) => column.name === name)) await sql.raw(`alter table inputs add column ${name} ${definition}`).execute(db);
    }
  }
  await db.schema
    .createTable('streams')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('cursor', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('streams').ifExists().execute();
  for (const [name] of COLUMNS) await db.schema.alterTable('inputs').dropColumn(name).execute();
}
