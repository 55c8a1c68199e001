/**
 * Quota usage per service credential (docs/api.md#quotas), counted in the database so that every
 * process sharing it counts together:
 *
 * - `quota_usage`: units used of one quota (`quota`: `youtube-units`, `twitter-posts`) by one
 *   subject (a credential id, or `environment` for the installation's own credential) in one fixed
 *   period (`period`: `2026-11-23` Pacific day, `2026-11` UTC month); grown by single-statement
 *   upserts. Instagram's subjects also hold a row of period `lock` that serializes their hashtag
 *   reservations (`store/quotas.ts`).
 * - `quota_hashtags`: each hashtag counted against an Instagram subject, and when its current
 *   7-day window started (`counted_at`, ms since the epoch).
 *
 * Idempotent (a re-run changes nothing). Frozen; named after 2026-11-27-dedupe so that it runs
 * after it (Kysely orders by name).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('quota_usage')
    .ifNotExists()
    .addColumn('subject', 'varchar(24)', (c) => c.notNull())
    .addColumn('quota', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('units', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_usage_pkey', ['subject', 'quota', 'period'])
    .execute();
  await db.schema
    .createTable('quota_hashtags')
    .ifNotExists()
    .addColumn('subject', 'varchar(24)', (c) => c.notNull())
    .addColumn('hashtag', 'text', (c) => c.notNull())
    .addColumn('counted_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_hashtags_pkey', ['subject', 'hashtag'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('quota_hashtags').ifExists().execute();
  await db.schema.dropTable('quota_usage').ifExists().execute();
}
