/**
 * The WebSub callback on {api_url} (W3C WebSub §5.3 and §7–§8; docs/services.md#websub). Not
 * OAuth-protected: the hub knows the callback URL (its id is 128 random bits) and signs what it
 * sends with the subscription's secret.
 *
 *   GET  /websub/{id}  verification of intent (§5.3): `hub.mode` (`subscribe`, `unsubscribe`,
 *        or `denied`), `hub.topic`, `hub.challenge`, `hub.lease_seconds`. The challenge is echoed
 *        (200 text/plain) only when the mode is the one the subscriber asked for and has not
 *        been verified yet (`pending`) and the topic is the subscription's; else 404. A verified
 *        subscribe makes the subscription active until the lease ends (renewed at 80 % of it)
 *        and the input `push` (docs/api.md#input-status); a verified unsubscribe deletes it;
 *        `denied` (§5.2) sends it back to subscribing a day later, the input to `poll`.
 *   POST /websub/{id}  content distribution (§7): the raw body (at most the API's body limit, 413
 *        beyond) must carry `X-Hub-Signature: <method>=<hex HMAC>` keyed with the secret (§8);
 *        unsigned or wrongly signed bodies are ignored and answered 204 as §8 allows (the hub
 *        learns nothing of the secret). A signed body is read as a poll's response is (the `rss`
 *        connector's `readFeed`, in a worker thread with its bounds; YouTube's Atom through the
 *        youtube connector's `feedToItems`)
 *        and stored through `ingestPushed` (filters, de-duplication, rejections); the entries its
 *        Atom tombstones name (RFC 6721) are removed (`removeItems`, reason `deleted`): a feed's
 *        from what the inputs following that feed collected, in every contract; a YouTube
 *        video's wherever stored (`PushRule.deletions`): 204. Unknown or
 *        inactive subscription: 404; a signed body that is not a feed: 400 naming `body`.
 *
 * Several API processes may receive notifications for one subscription: items are stored once
 * (the store's ON CONFLICT and de-duplication).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { notFoundError, VALIDATION_CODES, validationError } from '../../errors.ts';
import { errorResponses } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { handlerValidated } from '../../http/validate.ts';
import type { ContentItem } from '../../item.ts';
import { currentSecretKey, open } from '../../lib/secret-box.ts';
import type { Db } from '../../store/db.ts';
import { findInput, inputIdsOfSource, setFeedMode } from '../../store/inputs.ts';
import { removeItems } from '../../store/removals.ts';
import { deleteSubscription, findSubscription, updateSubscription } from '../../store/websub.ts';
import { SourceError } from '../../services/connector.ts';
import { serviceModule } from '../../services/index.ts';
import { FilterBudgetError, ingestPushed } from '../ingest.ts';
import { verifySignature } from '../../services/kit/websub-hub.ts';
import { ownsEntries } from '../../services/table.ts';

/** A denied subscription is asked for again after this long (ms). */
export const DENIED_RETRY_MS = 24 * 3600 * 1000;

/** The share of a granted lease after which the subscriber renews it. */
export const RENEW_AT = 0.8;

/** The raw bytes of a notification, kept out of the generic body checks (they walk objects). */
class RawBody {
  readonly #bytes: Buffer;
  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }
  get bytes(): Buffer {
    return this.#bytes;
  }
}

const tags = ['websub'];
const Params = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'The subscription id: the last segment of hub.callback' }) });
const Verification = Type.Object({
  'hub.mode': Type.Optional(Type.String({ description: 'subscribe, unsubscribe or denied' })),
  'hub.topic': Type.Optional(Type.String()),
  'hub.challenge': Type.Optional(Type.String()),
  'hub.lease_seconds': Type.Optional(Type.String({ description: 'Seconds the hub keeps the subscription (subscribe)' })),
  'hub.reason': Type.Optional(Type.String({ description: 'Why the hub denied the subscription (denied)' })),
});

/** Registers the callback routes on `app` (the API roles, `app.ts`). */
/** `bodyLimit`: the largest notification body, bytes (the API's, docs/api.md#limits). */
export function websubRoutes(app: App, { db, config, bodyLimit }: { db: Db; config: Config; bodyLimit: number }): void {
  const unknown = () => notFoundError('No pending WebSub subscription matches this callback', 'id');

  app.get('/websub/:id', {
    schema: {
      tags,
      summary: 'WebSub verification of intent (W3C WebSub §5.3)',
      params: Params,
      querystring: Verification,
      response: { 200: { description: 'The echoed hub.challenge', content: { 'text/plain': { schema: Type.String() } } }, ...errorResponses(400, 404) },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const query = request.query;
    const sub = await findSubscription(db, id);
    if (!sub || !query['hub.topic'] || query['hub.topic'] !== sub.topic) throw unknown();
    const now = Date.now();
    const mode = query['hub.mode'];
    if (mode === 'denied' && sub.state !== 'unsubscribing') {
      const reason = (query['hub.reason'] ?? '').slice(0, 200);
      await updateSubscription(db, id, { state: 'subscribing', pending: null, expiresAt: null, nextActionAt: now + DENIED_RETRY_MS, lastError: `the hub denied the subscription${reason ? `: ${reason}` : ''}` });
      await setFeedMode(db, [sub.inputId], 'poll', now);
      return plain(reply, '');
    }
    const challenge = query['hub.challenge'];
    if (!challenge || mode !== sub.pending) throw unknown();
    if (mode === 'subscribe' && sub.state !== 'unsubscribing') {
      const granted = Number(query['hub.lease_seconds']);
      const lease = Number.isSafeInteger(granted) && granted > 0 ? granted : config.websub.leaseSeconds;
      const verified = await updateSubscription(db, id, {
        state: 'active', pending: null, expiresAt: now + lease * 1000, nextActionAt: now + Math.ceil(lease * RENEW_AT * 1000), attempts: 0, lastError: null,
      }, { pending: 'subscribe' });
      if (!verified) throw unknown();
      await setFeedMode(db, [sub.inputId], 'push', now);
      return plain(reply, challenge);
    }
    if (mode === 'unsubscribe' && sub.state === 'unsubscribing') {
      if (!(await deleteSubscription(db, id))) throw unknown();
      return plain(reply, challenge);
    }
    throw unknown();
  });

  // Its own scope: the body is taken raw (any content type), for the signature.
  void app.register(async (scope: FastifyInstance) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimit }, (_request, body, done) => done(null, new RawBody(body as Buffer)));
    (scope as unknown as App).post('/websub/:id', {
      bodyLimit: bodyLimit,
      schema: {
        tags,
        summary: 'WebSub content distribution (W3C WebSub §7), signed with X-Hub-Signature (§8)',
        consumes: ['application/atom+xml', 'application/rss+xml', 'application/xml', 'text/xml', 'application/feed+json'],
        params: Params,
        body: handlerValidated(Type.String({ description: 'The feed document the hub distributes, read as the raw bytes the signature covers' })),
        response: { 204: Type.Null({ description: 'Received: stored when signed with the subscription secret, else ignored (W3C WebSub §8)' }), ...errorResponses(400, 404, 413) },
      },
    }, async (request, reply) => {
      const sub = await findSubscription(db, request.params.id);
      if (!sub || sub.state !== 'active') throw unknown();
      const body = request.body instanceof RawBody ? request.body.bytes : Buffer.alloc(0);
      const secret = open(currentSecretKey(config), sub.secret);
      const signature = request.headers['x-hub-signature'];
      if (!verifySignature(typeof signature === 'string' ? signature : undefined, secret, body)) {
        request.log.warn({ subscription: sub.id, signed: signature !== undefined }, 'WebSub notification ignored: signature missing or wrong');
        return reply.code(204).send(null);
      }
      const now = Date.now();
      let items: ContentItem[];
      let deleted: string[];
      const push = serviceModule(sub.service)?.push;
      try {
        if (!push) throw unknown();
        ({ items, deleted = [] } = await push.itemsOf(body, request.headers['content-type'], sub.topic, now));
      } catch (error) {
        if (!(error instanceof SourceError)) throw error;
        throw validationError([{ propertyName: 'body', message: error.message, code: VALIDATION_CODES.format }]);
      }
      const input = await findInput(db, sub.contractId, sub.inputId);
      // Tombstones (RFC 6721): removed from what the inputs following this source collected, of
      // every contract, or wherever the service's id is stored (`PushRule.deletions`).
      if (input && push && deleted.length) {
        const inputIds = push.deletions === 'source' ? await inputIdsOfSource(db, input.service, input.input) : undefined;
        await removeItems(db, { service: input.service, ids: deleted, ...(inputIds && { inputIds }) }, { reason: 'deleted' }, ownsEntries);
      }
      if (input && items.length) {
        try {
          await ingestPushed(db, input, items, { log: request.log }, now);
        } catch (error) {
          if (!(error instanceof FilterBudgetError)) throw error;
          request.log.warn({ subscription: sub.id, input: input.id, err: error }, 'WebSub notification not stored');
        }
      }
      return reply.code(204).send(null);
    });
  });
}

function plain(reply: FastifyReply, text: string) {
  return reply.code(200).type('text/plain; charset=utf-8').send(text);
}
