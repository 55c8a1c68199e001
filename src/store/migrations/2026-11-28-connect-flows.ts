/**
 * Connect flows (docs/api.md#connecting-an-account): a table `connect_states` (one row per flow
 * under way, found by the SHA-256 hash of its `state`, never the state itself: the contract, the
 * consumer who started and the service it is bound to, the PKCE verifier, the redirect URI the
 * code was issued for, where the browser goes at the end, the credential's name and default, the
 * Mastodon instance, the credential a reconnect replaces the tokens of, and when it expires, ms
 * since the epoch); a table `mastodon_apps` (the app
 * Sluice registered on each instance for one redirect URI, its secret sealed by
 * `lib/secret-box.ts`); and `credentials.expires_at`, when the credential's access token expires
 * (ISO 8601, null when it does not), which the refresh ahead of expiry reads.
 * Idempotent (a re-run changes nothing). Frozen; named after 2026-11-27-dedupe so that it runs
 * after it (Kysely orders by name).
 */
import { type Kysely, sql } from 'kysely';
import { currentSchema } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connect_states')
    .ifNotExists()
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('consumer_id', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text')
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer')
    .addColumn('instance', 'text')
    .addColumn('credential_id', 'varchar(24)')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('mastodon_apps')
    .ifNotExists()
    .addColumn('instance', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mastodon_apps_pk', ['instance', 'redirect_uri'])
    .execute();
  if (await currentSchema(db)) {
    await sql`alter table credentials add column if not exists expires_at text`.execute(db);
  } else if (!(await sql<{ name: string }>`select name from pragma_table_info('credentials')`.execute(db)).rows.some((column) => column.name === 'expires_at')) {
    await db.schema.alterTable('credentials').addColumn('expires_at', 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credentials').dropColumn('expires_at').execute();
  await db.schema.dropTable('mastodon_apps').ifExists().execute();
  await db.schema.dropTable('connect_states').ifExists().execute();
}
