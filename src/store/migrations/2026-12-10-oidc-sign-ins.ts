/**
 * Sign-in through an external OpenID Connect provider (docs/api.md#browser-sign-in): a table
 * `oidc_sign_ins`, one row per sign-in under way, found by the SHA-256 of its `state` and the
 * binding value of the browser that started it (never the state itself): the PKCE code verifier
 * and the nonce sent to the provider, the authorization request of `/v1/authorize` to resume (its
 * query string) and when it expires, ms since the epoch. Rows are taken (deleted) by the callback.
 * Frozen: a later change is a new migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oidc_sign_ins')
    .ifNotExists()
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('authorization_request', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oidc_sign_ins').ifExists().execute();
}
