/**
 * WebSub subscriptions (issue 18, docs/services.md#websub). Frozen: a later change is a new
 * migration. Idempotent (a re-run changes nothing).
 *
 * `websub_subscriptions`: one row per subscription of an input to a topic at a hub. `id` is the
 * unguessable last segment of the callback URL (`{API_URL}/websub/<id>`, 128 random bits);
 * `secret` is the `hub.secret` sealed by `lib/secret-box.ts` with the id of its key beside it;
 * `state` is `subscribing`, `active` (the hub verified the intent) or `unsubscribing`; `pending`
 * the `hub.mode` of the request sent and not yet verified (or null); `expires_at` the end of the
 * lease the hub granted, `next_action_at` when the subscriber looks at the row again (send,
 * renew, retry), all ms. No foreign key to `inputs`: a deleted input's subscription stays until
 * the hub has been told to stop.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('websub_subscriptions')
    .ifNotExists()
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('input_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('hub', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('pending', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('next_action_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('websub_subscriptions_input').ifNotExists().on('websub_subscriptions').column('input_id').execute();
  await db.schema.createIndex('websub_subscriptions_due').ifNotExists().on('websub_subscriptions').column('next_action_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('websub_subscriptions').ifExists().execute();
}
