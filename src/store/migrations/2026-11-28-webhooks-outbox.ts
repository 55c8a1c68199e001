/**
 * Outbound webhooks (issue 16, docs/api.md#webhooks). Frozen: a later change is a new migration.
 * Idempotent (a re-run changes nothing).
 *
 * - `webhooks`: the common record fields, the receiver's `url`, the subscribed `events` (JSON
 *   array), the signing secret sealed by `lib/secret-box.ts` with the id of its key beside it, and
 *   why and when delivery disabled it (`disabled_reason`, `disabled_at`).
 * - `webhook_outbox`: one row per event and subscribed webhook, written in the transaction of the
 *   change (`store/outbox.ts`). `seq` orders them and identifies the delivery (autoincrement on
 *   SQLite, bigserial on PostgreSQL); `subject` (`item:<collection>:<id>`, `input:<id>`, `credential:<id>`) is what
 *   delivery keeps in order; `claimed_until` is a delivering process's lease.
 * - `webhook_attempts`: each delivery attempt (status code or error, duration, a bounded excerpt
 *   of the response body).
 */
import type { Kysely } from 'kysely';
import { isPostgres } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('last_modified', 'text', (c) => c.notNull())
    .addColumn('last_modified_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_contract_name').ifNotExists().unique().on('webhooks').columns(['contract_id', 'name']).execute();

  const postgres = isPostgres(db);
  await db.schema
    .createTable('webhook_outbox')
    .ifNotExists()
    .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('webhook_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('first_attempt_at', 'bigint')
    .addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered_at', 'bigint')
    .execute();
  // Due deliveries in the order claims take them; the earlier pending events of a subject; a
  // webhook's deliveries, newest first. No more: each index is written by every event.
  await db.schema.createIndex('webhook_outbox_due').ifNotExists().on('webhook_outbox').columns(['status', 'next_attempt_at', 'seq']).execute();
  await db.schema.createIndex('webhook_outbox_subject').ifNotExists().on('webhook_outbox').columns(['webhook_id', 'subject', 'status', 'seq']).execute();
  await db.schema.createIndex('webhook_outbox_webhook').ifNotExists().on('webhook_outbox').columns(['webhook_id', 'seq']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .ifNotExists()
    .addColumn('delivery_seq', 'bigint', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('webhook_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response', 'text')
    .addColumn('next_attempt_at', 'bigint')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_seq', 'attempt'])
    .execute();
  await db.schema.createIndex('webhook_attempts_webhook').ifNotExists().on('webhook_attempts').columns(['webhook_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_outbox', 'webhooks']) await db.schema.dropTable(table).ifExists().execute();
}
