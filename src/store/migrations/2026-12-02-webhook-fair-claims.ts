/**
 * Webhook claims served per webhook (issue 30 point 5, docs/api.md#webhook-delivery). Frozen: a
 * later change is a new migration. Idempotent (a re-run changes nothing).
 *
 * Claims used to take the soonest due rows of the whole outbox (index `webhook_outbox_due`:
 * status, next_attempt_at, seq), so one webhook's backlog filled every claim and every slot.
 * They now go webhook by webhook (`store/outbox.ts` `claimDeliveries`), which needs:
 * - `webhook_outbox_webhook_due` (webhook_id, status, next_attempt_at, seq): a webhook's due rows
 *   in the order it is served, found without walking its delivered history;
 * - `webhook_outbox_claimed` (webhook_id, claimed_until) over the claimed rows only (partial:
 *   `claimed_until > 0`, a few rows, written only when a delivery is claimed and recorded): how
 *   many of a webhook's deliveries are under way, across processes.
 * `webhook_outbox_due` is dropped: nothing reads the outbox in that order any more, and every
 * event wrote it.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_outbox_webhook_due').ifNotExists().on('webhook_outbox').columns(['webhook_id', 'status', 'next_attempt_at', 'seq']).execute();
  await db.schema.createIndex('webhook_outbox_claimed').ifNotExists().on('webhook_outbox').columns(['webhook_id', 'claimed_until']).where(sql.ref('claimed_until'), '>', sql.lit(0)).execute();
  await db.schema.dropIndex('webhook_outbox_due').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_outbox_due').ifNotExists().on('webhook_outbox').columns(['status', 'next_attempt_at', 'seq']).execute();
  await db.schema.dropIndex('webhook_outbox_claimed').ifExists().execute();
  await db.schema.dropIndex('webhook_outbox_webhook_due').ifExists().execute();
}
