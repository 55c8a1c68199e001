/**
 * Outbound webhooks (docs/api.md#webhooks): request and response schemas, and the rule a schema
 * cannot say: the URL is http(s), carries no credentials, and does not name a loopback or private
 * address unless ALLOW_PRIVATE_FETCH (the same policy as the collector's, `lib/addresses.ts`; a
 * host name is checked again on every delivery, after DNS resolution, by the guarded fetch).
 */
import { Type } from 'typebox';
import { type Invalid, VALIDATION_CODES } from '../../errors.ts';
import { isAllowedAddress } from '../../lib/addresses.ts';
import { EVENT_TYPES } from '../../store/outbox.ts';
import { common, Id } from '../schemas.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL the events are POSTed to' });
const EventType = Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES] });
const Events = Type.Array(EventType, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'the event types delivered (docs/api.md#webhook-events)' });

export const WebhookCreate = Type.Object({ name: Name, contractId: Id, url: Url, events: Events, active: Type.Optional(Type.Boolean()) });
export const WebhookUpdate = Type.Object({
  name: Type.Optional(Name),
  contractId: Type.Optional(Id),
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  active: Type.Optional(Type.Boolean({ description: 'true also clears `disabledReason`' })),
});

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const Webhook = Type.Object({
  ...common,
  name: Type.String(),
  url: Type.String(),
  events: Type.Array(EventType),
  disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'why delivery disabled the webhook (its retries ran out), else null' }),
  disabledAt: Time,
});
export const WebhookCreated = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'the signing secret (whsec_…), shown in this response only' }),
});

export const Attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  at: Type.String({ format: 'date-time' }),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  response: Type.Union([Type.String(), Type.Null()], { description: 'at most the first 1 024 characters of the response body' }),
  nextAttempt: Time,
});
export const Delivery = Type.Object({
  _id: Id,
  webhookId: Id,
  eventId: Type.String(),
  type: EventType,
  status: Type.Unsafe<string>({ type: 'string', enum: ['pending', 'delivered', 'failed'] }),
  created: Type.String({ format: 'date-time' }),
  nextAttempt: Time,
  delivered: Time,
  attempts: Type.Array(Attempt),
});
export const DeliveryQuery = Type.Object({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  status: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['pending', 'delivered', 'failed'] })),
  access_token: Type.Optional(Type.String()),
});
export const DeliveryParams = Type.Object({ id: Id, deliveryId: Id });

/** Whether `host` (a URL's hostname) names this machine by name. */
const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * The problems of a webhook URL (empty when valid): not http(s), credentials in it, or (unless
 * `allowPrivate`) a loopback or private IP literal or `localhost`.
 */
export function urlProblems(url: string, allowPrivate: boolean): Invalid[] {
  const invalid = (message: string): Invalid[] => [{ propertyName: 'url', message, propertyValue: url, code: VALIDATION_CODES.format }];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalid('url must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return invalid('url must be an http or https URL');
  if (parsed.username || parsed.password) return invalid('url must not carry credentials');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (isLocalName(host.toLowerCase()) || (/^[\d.]+$|:/.test(host) && !isAllowedAddress(host)))) {
    return invalid('url must not point to a loopback, private or link-local address');
  }
  return [];
}
