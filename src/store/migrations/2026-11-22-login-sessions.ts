/**
 * Browser sign-in (issue 3): login sessions and authorization codes, stored by SHA-256 hash only;
 * a `disabled` flag on consumers (operator CLI `admin client disable`); and on tokens the consumer
 * id of the client they were issued to, so disabling a client ends its users' tokens too.
 * Frozen: a later change is a new migration.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('consumers').addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('tokens').addColumn('client_id', 'varchar(24)').execute();

  await db.schema
    .createTable('login_sessions')
    .addColumn('session_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull().references('consumers.id'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_sessions_consumer').on('login_sessions').column('consumer_id').execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('client_id', 'varchar(24)', (c) => c.notNull().references('consumers.id'))
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull().references('consumers.id'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('family', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('authorization_codes').execute();
  await db.schema.dropTable('login_sessions').execute();
  await db.schema.alterTable('tokens').dropColumn('client_id').execute();
  await db.schema.alterTable('consumers').dropColumn('disabled').execute();
}
