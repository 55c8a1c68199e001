/**
 * The content queue and content reading API on {queue_url} (docs/api.md#queue-and-content-api):
 *
 *   GET   /v1/queue/{contract}           token; published and unpublished items of collection q
 *                                        (moderators' filters `state` and `text`, search.ts)
 *   PATCH /v1/queue/{contract}           token; moderate item `id` of collection q → its new state,
 *                                        or the body's `ids` all or none → the items
 *   POST  /v1/queue/{contract}/split     token; split duplicate `duplicateId` out of card `id` of
 *                                        collection q → [card, split item] (docs/api.md#split-a-duplicate)
 *   GET   /v1/queue/{contract}/history   token; item `id` of collection q: its moderation history, newest
 *                                        first (the audit trail's entries of the item, docs/api.md#item-history)
 *   GET   /v1/queue/{contract}/count     token; {published, unpublished} item counts of collection q
 *   GET   /v1/queue/{contract}/stream    token; Server-Sent Events of items arriving or moderated (stream.ts)
 *   GET   /v1/content/{contract}         public; published items of collection q (full-text `search`, search.ts)
 *   GET   /v1/content/{contract}/stream  public; Server-Sent Events of newly published items (stream.ts)
 *   GET   /v1/count/{contract}           public; {count: "<digits>"} of published items
 *   GET   /v1/collections/{contract}     public; the contract's active collections
 *   GET   /v1/related/{contract}         public; items related to article q (related/routes.ts)
 *   GET   /v1/articles/{contract}        public; the articles asked about (related/routes.ts)
 *
 * An unknown or inactive contract slug → 401 AuthenticationError; an unknown collection → 404.
 * Public content and count pages are served from an in-process cache keyed on the collection's
 * version (read-path.ts), so the hot path is one indexed read plus a cached string.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Static } from 'typebox';
import type { Config } from '../config.ts';
import { conflictError, notFoundError, validationError, VALIDATION_CODES } from '../errors.ts';
import { authenticate, requireContractAccess } from '../http/authenticate.ts';
import { activeContract, collectionOf } from '../http/public.ts';
import type { App } from '../http/typed.ts';
import { AUDIT_ID_HEADER, presentHistoryStep } from '../http/audit.ts';
import { itemHistory } from '../store/audit.ts';
import { listCollections } from '../store/collections.ts';
import { defaultSort } from '../lib/ranking.ts';
import type { Db } from '../store/db.ts';
import type { ContractAccess } from '../store/tokens.ts';
import { searchItemKeys } from '../store/item-search.ts';
import { MAX_PINNED } from '../store/item-moderation.ts';
import { splitDuplicate } from '../store/items/cards.ts';
import { changeItem } from '../store/items/change.ts';
import { findItem, findItems } from '../store/items/find.ts';
import { setItemsState } from '../store/items/moderate.ts';
import { countItems, hasPinnedItems, type ItemQuery, listHeadKeys, listItemKeys, type Page } from '../store/items/read-sql.ts';
import { type ItemKey, rowToItem, rowToModeratorItem } from '../store/items/rows.ts';
import { checkModeration, ContentQuery, itemQuery, moderationTarget } from './params.ts';
import { createReadPath, type ReadCollection } from './read-path.ts';
import { render, renderJson, respond, respondJson, sendPublic } from './respond.ts';
import { schemas } from './schema.ts';
import { searchPage, searchParameter } from './search.ts';
import { createStreamHub, type StreamHub } from './stream.ts';
import { pinForArticle } from './related/pins.ts';
import type { Related } from './related/related.ts';
import { relatedRoutes } from './related/routes.ts';

/** Registers the module's routes on `app` (see the module's description). */
export function queueRoutes(
  app: App,
  { db, config, related, media, queueMedia }: { db: Db; config: Config; related: Related; media?: ((url: string) => string) | undefined; queueMedia?: ((url: string) => string) | undefined },
): void {
  // The media proxy's image URLs (docs/api.md#media-proxy): `media` in the content read
  // (MEDIA_PROXY=api), `queueMedia` in the queue read, the console's (unless MEDIA_PROXY=off).
  // Items are cached by collection, id and seq, so the two read paths need no common invalidation.
  const reads = createReadPath(db, config, media);
  const queueReads = queueMedia === media ? reads : createReadPath(db, config, queueMedia);
  relatedRoutes(app, { db, config, related });
  const streams = createStreamHub(db);
  const moderatorStreams = createStreamHub(db, { audience: 'moderator' });
  app.addHook('preClose', async () => {
    streams.close();
    moderatorStreams.close();
  });

  app.get('/v1/queue/:contract', { schema: schemas.queue }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { access_token: _token, ...query } = request.query;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, query.q, { activeOnly: false });
    const { state, text, pinned, held, ...read } = query;
    const selection = { ...itemQuery(collection.contractId, collection.id, read), ...(state ? { state } : {}), ...(held ? { held: held === 'true' } : {}) };
    const page = { count: query.count ?? 500, offset: query.offset ?? 0, order: query.order ?? 'desc' } as const;
    // Pinned items first, in their order (docs/api.md#pin-and-spotlight); `pinned` narrows to them or to the others.
    const pins = pinned === 'true' ? 'only' : pinned === 'false' ? 'none' : 'first';
    // `text`: the full-text search (search.ts), in the queue's order (time unless `sort` is given),
    // as the substring filter it replaced; a search page is in that order alone, pinned or not.
    const keys = text
      ? await searchItemKeys(db, selection, searchPage(page, query.sort ?? 'time'), searchParameter('text', text))
      : await listItemKeys(db, selection, { ...page, sort: query.sort ?? 'time' }, pins);
    // Published items' JSON is kept per audience (read-path.ts); the others are serialized each time.
    const json = await queueReads.itemsJson(keys, (ids) => findItems(db, collection.contractId, collection.id, ids), 'moderator');
    return respondJson(request, reply, json, { public: false, callback: query.callback });
  });

  app.patch('/v1/queue/:contract', { schema: schemas.moderate }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query;
    const { body } = request;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, q, { activeOnly: false });
    const target = moderationTarget(id, body.ids);
    // `article`: pin (or with pinned false, unpin) the item for that article's related content only (docs/api.md#related-content).
    if (body.article !== undefined) {
      const item = await pinForArticle(db, contract.id, collection.id, target, body);
      related.forget(contract.id, item.article);
      return respond(request, reply, rowToModeratorItem(item.row), { public: false, callback: undefined });
    }
    checkModeration(body, target.bulk);
    // Recorded in the moderation's transaction (docs/api.md#audit-trail).
    const moderation = { contractId: contract.id, actor: { id: principal.consumer.id, name: principal.consumer.name } };
    if (!target.bulk) {
      const one = target.ids[0]!;
      const outcome = await changeItem(db, contract.id, collection.id, one, body, moderation);
      if ('missing' in outcome) throw notFoundError(`Unknown content item ${one}.`, 'id', one);
      // Removed at the source (docs/api.md#removed-at-the-source): no moderation brings it back.
      if ('removed' in outcome) throw conflictError(`Content item ${one} was removed at the source: it cannot be moderated. Nothing was changed.`, 'state', 'removed');
      if ('pinsFull' in outcome) throw conflictError(`The collection has ${MAX_PINNED} pinned items already: unpin one first. Nothing was changed.`, 'pinned', true);
      if ('mediaCount' in outcome) {
        const message = `edit.media names more media than the item has (${outcome.mediaCount}). Nothing was changed.`;
        throw validationError([{ propertyName: 'edit.media', message, propertyValue: body.edit?.media?.length, code: VALIDATION_CODES.range }]);
      }
      reads.forget(contract.slug, q);
      // The entries it recorded, so that a client can undo it (docs/api.md#moderation).
      if (outcome.auditIds.length) void reply.header(AUDIT_ID_HEADER, outcome.auditIds.join(', '));
      return respond(request, reply, rowToModeratorItem((await findItem(db, contract.id, collection.id, one))!), { public: false, callback: undefined });
    }
    const state = body.state!;
    const outcome = await setItemsState(db, contract.id, collection.id, target.ids, state, moderation);
    if ('missing' in outcome) throw notFoundError(`Unknown content items: ${outcome.missing.join(', ')}. Nothing was moderated.`, 'ids', outcome.missing.join(','));
    if ('removed' in outcome) throw conflictError(`Content items removed at the source cannot be moderated: ${outcome.removed.join(', ')}. Nothing was moderated.`, 'state', 'removed');
    reads.forget(contract.slug, q);
    void reply.header(AUDIT_ID_HEADER, outcome.auditId);
    const rows = new Map((await findItems(db, collection.contractId, collection.id, target.ids)).map((row) => [row.id, row]));
    return respond(request, reply, target.ids.map((one) => rowToModeratorItem(rows.get(one)!)), { public: false, callback: undefined });
  });

  app.post('/v1/queue/:contract/split', { schema: schemas.split }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query;
    const { duplicateId } = request.body;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, q, { activeOnly: false });
    if (!(await findItem(db, contract.id, collection.id, id))) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
    const actor = { id: principal.consumer.id, name: principal.consumer.name };
    const split = await splitDuplicate(db, { collectionId: collection.id, contractId: contract.id }, id, duplicateId, { contractId: contract.id, actor });
    if (!split) throw notFoundError(`Item ${id} has no duplicate ${duplicateId}.`, 'duplicateId', duplicateId);
    reads.forget(contract.slug, q);
    return respond(request, reply, [rowToModeratorItem((await findItem(db, contract.id, collection.id, id))!), rowToModeratorItem(split)], { public: false, callback: undefined });
  });

  app.get('/v1/queue/:contract/history', { schema: schemas.history }, async (request) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, q, { activeOnly: false });
    const steps = await itemHistory(db, contract.id, collection.id, id);
    if (!steps.length && !(await findItem(db, contract.id, collection.id, id))) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
    return steps.map(presentHistoryStep);
  });

  app.get('/v1/queue/:contract/count', { schema: schemas.queueCount }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { access_token: _token, ...query } = request.query;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, query.q, { activeOnly: false });
    const selection = itemQuery(collection.contractId, collection.id, query);
    const [published, unpublished] = await Promise.all([
      countItems(db, { ...selection, state: 'published' }),
      countItems(db, { ...selection, state: 'unpublished' }),
    ]);
    return respond(request, reply, { published, unpublished }, { public: false, callback: query.callback });
  });

  app.get('/v1/queue/:contract/stream', { schema: schemas.queueStream }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, request.query.q, { activeOnly: false });
    // The stream ends when the token that opened it expires; the client opens a new one with its new token.
    const expiry = setTimeout(() => reply.raw.end(), Math.max(0, Math.min(principal.token.expiresAt - Date.now(), 2 ** 31 - 1)));
    // …and within a second of its access ending otherwise (revoked token or grant, disabled consumer: stream.ts).
    const access = { tokenHash: principal.token.tokenHash, contractId: contract.id };
    await attach(request, reply, moderatorStreams, collection, { public: false, access }, () => clearTimeout(expiry));
  });

  /**
   * The keys of a content page of the collection's published items (`selection` has `state`
   * published): from the collection's head when it holds the page (read-path.ts `fromHead`), else
   * one statement, or two with the pinned items first (store/items/read-sql.ts `listItemKeys`).
   */
  async function pageKeys(collection: ReadCollection, selection: ItemQuery, page: Page): Promise<ItemKey[]> {
    const pinned = await reads.hasPins(collection, () => hasPinnedItems(db, collection.contractId, collection.id));
    const fromHead = pinned ? undefined : await reads.fromHead(collection, selection, page, (limit) => listHeadKeys(db, collection.contractId, collection.id, limit));
    return fromHead ?? listItemKeys(db, selection, page, pinned ? 'first' : 'unpinned');
  }

  /**
   * What a content read of `query` selects in `collection`: its items (`selection`, the published
   * ones), its `page` in its order (`paging` without the sort: a search orders by relevance unless
   * `sort` is given), and the parsed `search` (search.ts). Throws 400 for a malformed search.
   */
  function contentRead(collection: ReadCollection, query: Static<typeof ContentQuery>) {
    const search = query.search ? searchParameter('search', query.search) : undefined;
    const selection = { ...itemQuery(collection.contractId, collection.id, query), state: 'published' } as const;
    const paging = { count: query.count ?? 20, offset: query.offset ?? 0, order: query.order ?? 'desc' } as const;
    return { search, selection, paging, page: { ...paging, sort: query.sort ?? defaultSort(collection.type) } };
  }

  /**
   * The hottest path: a URL whose page was fresh before is answered from it (read-path.ts
   * `freshAt`) before its query is validated, which the same URL passed then. The hooks before
   * this one (rate limits, request ids) have run; the rest of the request's life is as usual.
   */
  const readAgain: onRequestHookHandler = (request, reply, done) => {
    const hit = reads.freshAt(request.url);
    if (hit) sendPublic(request, reply, hit);
    else done();
  };

  // Not an async function: the pages answered from memory are sent before it returns, and Fastify
  // then waits for nothing (a returned reply is awaited until its response has ended).
  app.get('/v1/content/:contract', { schema: schemas.content, onRequest: readAgain }, (request, reply) => {
    const { query } = request;
    // The hot path: a known collection and a fresh page are answered without awaiting anything.
    const hit = reads.fresh('content', request.params.contract, query, request.url);
    if (hit) return void sendPublic(request, reply, hit);
    const known = reads.known(request.params.contract, query.q);
    const read = known && contentRead(known, query);
    // Most uncached reads of a wall: the page among the collection's newest items, those items rendered before.
    const remembered = read && !read.search ? reads.fromMemory(known, query, read.selection, read.page, query.callback ?? '') : undefined;
    if (remembered) return void sendPublic(request, reply, remembered);
    return (async () => {
      const collection = known ?? (await reads.collection(request.params.contract, query.q));
      const { search, selection, page, paging } = read ?? contentRead(collection, query);
      const built = await reads.page('content', collection, query, async () => {
        const keys = search ? await searchItemKeys(db, selection, searchPage(paging, query.sort), search) : await pageKeys(collection, selection, page);
        return reads.itemsPage(collection.id, keys, query.callback ?? '', (ids) => findItems(db, collection.contractId, collection.id, ids), (json) => renderJson(json, query.callback, config.contentMaxAge));
      });
      return sendPublic(request, reply, built);
    })();
  });

  app.get('/v1/content/:contract/stream', { schema: schemas.stream }, async (request, reply) => {
    const collection = await reads.collection(request.params.contract, request.query.q);
    const header = request.headers['last-event-id'];
    const lastEventId = typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
    await attach(request, reply, streams, collection, { public: true, lastEventId, display: request.query.display === true });
  });

  app.get('/v1/count/:contract', { schema: schemas.count }, async (request, reply) => {
    const { query } = request;
    const collection = await reads.collection(request.params.contract, query.q);
    const page = await reads.page('count', collection, query, async () => {
      const count = await countItems(db, { ...itemQuery(collection.contractId, collection.id, query), state: 'published' });
      return render({ count: String(count) }, query.callback, config.contentMaxAge);
    });
    return sendPublic(request, reply, page);
  });

  app.get('/v1/collections/:contract', { schema: schemas.collections }, async (request, reply) => {
    const contract = await activeContract(db, request.params.contract);
    const collections = (await listCollections(db, contract.id)).filter((c) => c.active);
    const summaries = collections.map((c) => ({
      name: c.name,
      type: c.type,
      url: `${config.queueUrl}/v1/content/${encodeURIComponent(contract.slug)}?q=${encodeURIComponent(c.slug)}`,
    }));
    return respond(request, reply, summaries, { public: true, maxAge: config.contentMaxAge, callback: request.query.callback });
  });
}

/**
 * Starts an event stream on the taken-over reply (text/event-stream, never cached). A public
 * stream carries public data, and EventSource has no JSONP: any page may listen (CORS `*`).
 */
function openStream(request: FastifyRequest, reply: FastifyReply, options: { public: boolean }): void {
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
    ...(options.public ? { 'access-control-allow-origin': '*' } : {}),
    'x-request-id': request.id,
  });
  reply.raw.write('retry: 3000\n: connected\n\n');
}

/**
 * Subscribes to the collection's hub, then opens the stream (`openStream`) until the client goes
 * away. Subscribed first: a client that acts as soon as it sees the stream open (the headers)
 * misses nothing; what the hub sends meanwhile (a resumed stream's catch-up) follows the headers.
 * `lastEventId` resumes a public stream, `display` adds its display events; `access` is what a moderator's stream is let in with, the
 * hub ending the stream when it is gone.
 */
async function attach(
  request: FastifyRequest,
  reply: FastifyReply,
  hub: StreamHub,
  collection: { id: string; contractId: string },
  options: { public: boolean; lastEventId?: number; access?: ContractAccess; display?: boolean },
  onClose = () => {},
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  let closed = false;
  let unsubscribe = () => {};
  request.raw.on('close', () => {
    closed = true;
    unsubscribe();
    onClose();
  });
  let early: string[] | undefined = [];
  const subscriber = { write: (chunk: string) => void (early ? early.push(chunk) : raw.write(chunk)), end: () => raw.end() };
  unsubscribe = await hub.subscribe(collection.contractId, collection.id, subscriber, options.lastEventId, options.access, { display: options.display === true });
  if (closed) return unsubscribe();
  openStream(request, reply, options);
  for (const chunk of early) raw.write(chunk);
  early = undefined;
}
