/**
 * Outbound webhooks on {api_url} (docs/api.md#webhooks), the shared record operations of
 * `resource.ts` plus their deliveries:
 *
 *   POST   /collection/webhooks        create → 201, with the signing `secret` (whsec_…) shown
 *                                      this once
 *   GET    /collection/webhooks        the contract's webhooks (contract_id)
 *   GET    /collection/webhooks/{id}   one webhook (with `disabledReason` once its retries ran out)
 *   PATCH  /collection/webhooks/{id}   name, url, events, active (true clears `disabledReason`)
 *   DELETE /collection/webhooks/{id}   → 204, with its pending and past deliveries
 *   DELETE /collection/webhooks        {"ids": [...]}, all or nothing → 204
 *   GET    /collection/webhooks/{id}/deliveries   its deliveries, newest first, with their attempts
 *   POST   /collection/webhooks/{id}/deliveries/{deliveryId}/resend   deliver it again → 202
 *
 * The secret is generated here (24 random bytes, base64, the Standard Webhooks form), sealed with
 * `lib/secret-box.ts` before it reaches the store and never returned after the creation. Every
 * route checks the webhook's contract against the token's grants (404 unknown, 403 another
 * contract, without its data).
 */
import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { conflictError, notFoundError } from '../../errors.ts';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { currentSecretKey, open, seal } from '../../lib/secret-box.ts';
import type { Db } from '../../store/db.ts';
import { deleteDeliveries, findDelivery, listDeliveries, parkDeliveries, resendDelivery, wakeDeliveries } from '../../store/outbox.ts';
import type { WebhookRow } from '../../store/tables.ts';
import { recordRoutes } from '../schemas.ts';
import { owned, WEBHOOK } from '../ownership.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentDelivery, presentWebhook } from './present.ts';
import { Delivery, DeliveryParams, DeliveryQuery, urlProblems, Webhook, WebhookCreate, WebhookCreated, WebhookUpdate } from './schema.ts';

/** A new Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

const tags = ['webhooks'];
const security = TOKEN_SECURITY;

/** Registers the module's routes on `app` (see the module's description). */
export function webhookRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const key = () => currentSecretKey(config);
  const spec: Spec<WebhookRow> = {
    table: 'webhooks',
    label: 'webhook',
    create: WebhookCreate,
    update: WebhookUpdate,
    present: presentWebhook,
    created: (row) => ({ secret: open(key(), row.secret) }),
    rules: (body) => (typeof body.url === 'string' ? urlProblems(body.url, config.allowPrivateFetch) : []),
    columns(body) {
      const sealingKey = key();
      return { url: body.url, events: JSON.stringify(body.events), secret: seal(sealingKey, newWebhookSecret()), keyId: sealingKey.id, disabledReason: null, disabledAt: null };
    },
    changes(body) {
      return {
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.events !== undefined ? { events: JSON.stringify(body.events) } : {}),
        ...(body.active === true ? { disabledReason: null, disabledAt: null } : {}),
      };
    },
    // An inactive webhook's pending deliveries are parked, and due again once it is active.
    async onUpdate(trx, current, _by, now, body) {
      if (body.active === false && current.active === 1) await parkDeliveries(trx, current.contractId, current.id, now);
      if (body.active === true && current.active === 0) await wakeDeliveries(trx, current.contractId, current.id, now);
    },
    onDelete: deleteDeliveries,
  };
  const webhooks = resource(db, spec);
  const schema = recordRoutes('webhooks', Webhook, WebhookCreate, WebhookUpdate);
  // The creation's answer carries the signing secret, once (WebhookCreated).
  recordOperations(app, '/collection/webhooks', webhooks, { ...schema, create: { ...schema.create, response: { ...schema.create.response, 201: WebhookCreated } } });

  app.get(
    '/collection/webhooks/:id/deliveries',
    { schema: { tags, security, params: schema.get.params, querystring: DeliveryQuery, response: { 200: Type.Array(Delivery), ...errorResponses(400, 401, 403, 404) } } },
    async (request) => {
      const principal = await authenticate(db, request);
      const webhook = await owned(db, WEBHOOK, request.params.id, principal);
      return (await listDeliveries(db, webhook.contractId, webhook.id, request.query.count ?? 100, request.query.status)).map(presentDelivery);
    },
  );

  app.post(
    '/collection/webhooks/:id/deliveries/:deliveryId/resend',
    { schema: { tags, security, params: DeliveryParams, querystring: schema.get.querystring, response: { 202: Delivery, ...errorResponses(400, 401, 403, 404, 409) } } },
    async (request, reply) => {
      const principal = await authenticate(db, request);
      const webhook = await owned(db, WEBHOOK, request.params.id, principal);
      const { deliveryId } = request.params;
      if (!(await findDelivery(db, webhook.contractId, webhook.id, deliveryId))) throw notFoundError(`Webhook ${webhook.id} has no delivery ${deliveryId}.`, 'deliveryId', deliveryId);
      if (webhook.active !== 1) throw conflictError(`Webhook ${webhook.id} is inactive: set active to true first.`, 'id', webhook.id);
      await resendDelivery(db, webhook.contractId, webhook.id, deliveryId, Date.now());
      return reply.code(202).send(presentDelivery((await findDelivery(db, webhook.contractId, webhook.id, deliveryId))!));
    },
  );
}
