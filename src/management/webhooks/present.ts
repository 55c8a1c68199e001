/**
 * Webhook rows → the webhook and its deliveries of docs/api.md#webhooks. The secret never leaves
 * the store in the clear here: only the creation's response shows it (routes.ts).
 */
import type { Static } from 'typebox';
import { iso } from '../../lib/time.ts';
import { deliveryIdOf, type DeliveryWithAttempts } from '../../store/outbox.ts';
import type { WebhookRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';
import type { Delivery } from './schema.ts';

/** The row as the API presents it (see the module's description). */
export function presentWebhook(row: WebhookRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt,
    ...recordFields(row),
  };
}

/** The row as the API presents it (see the module's description). */
export function presentDelivery(row: DeliveryWithAttempts): Static<typeof Delivery> {
  return {
    _id: deliveryIdOf(row.seq),
    webhookId: row.webhookId,
    eventId: row.eventId,
    type: row.type,
    status: row.status,
    created: iso(Number(row.createdAt)),
    nextAttempt: row.status === 'pending' ? iso(Number(row.nextAttemptAt)) : null,
    delivered: row.deliveredAt === null ? null : iso(Number(row.deliveredAt)),
    attempts: row.attemptRows.map((attempt) => ({
      attempt: attempt.attempt,
      at: iso(Number(attempt.at)),
      statusCode: attempt.statusCode,
      error: attempt.error,
      durationMs: attempt.durationMs,
      response: attempt.response,
      nextAttempt: attempt.nextAttemptAt === null ? null : iso(Number(attempt.nextAttemptAt)),
    })),
  };
}
