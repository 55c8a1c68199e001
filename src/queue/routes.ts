/**
 * The content queue and content reading API on {queue_url} (interface §4.7, decisions §7):
 *
 *   GET   /v1/queue/{contract}           token; published and unpublished items of collection q
 *   PATCH /v1/queue/{contract}           token; moderate item `id` of collection q → its new state
 *   GET   /v1/content/{contract}         public; published items of collection q
 *   GET   /v1/content/{contract}/stream  public; Server-Sent Events of newly published items (stream.ts)
 *   GET   /v1/count/{contract}           public; {count: "<digits>"} of published items
 *   GET   /v1/collections/{contract}     public; the contract's active collections
 *
 * An unknown or inactive contract slug → 401 AuthenticationError; an unknown collection → 404.
 * Public content and count pages are served from an in-process cache keyed on the collection's
 * version (read-path.ts), so the hot path is one indexed read plus a cached string.
 */
import type { Config } from '../config.ts';
import { notFoundError } from '../errors.ts';
import { authenticate, requireContractAccess } from '../http/authenticate.ts';
import { activeContract, collectionOf } from '../http/public.ts';
import type { App } from '../http/typed.ts';
import { listCollections } from '../store/collections.ts';
import type { Db } from '../store/db.ts';
import { countItems, findItem, listItems, rowToItem, setItemState } from '../store/items.ts';
import { itemQuery } from './params.ts';
import { createReadPath } from './read-path.ts';
import { render, respond, sendPublic } from './respond.ts';
import { schemas } from './schema.ts';
import { createStreamHub } from './stream.ts';

export function queueRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const reads = createReadPath(db, config);
  const streams = createStreamHub(db);
  app.addHook('preClose', async () => streams.close());

  app.get('/v1/queue/:contract', { schema: schemas.queue }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { access_token: _token, ...query } = request.query;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, query.q, { activeOnly: false });
    const rows = await listItems(db, itemQuery(collection.id, query), {
      count: query.count ?? 500,
      offset: query.offset ?? 0,
      sort: query.sort ?? 'time',
      order: query.order ?? 'desc',
    });
    return respond(request, reply, rows.map(rowToItem), { public: false, callback: query.callback });
  });

  app.patch('/v1/queue/:contract', { schema: schemas.moderate }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query;
    const { state } = request.body;
    const contract = await activeContract(db, request.params.contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(db, contract, q, { activeOnly: false });
    if (!(await findItem(db, collection.id, id))) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
    await setItemState(db, collection.id, id, state);
    reads.forget(contract.slug, q);
    return respond(request, reply, rowToItem((await findItem(db, collection.id, id))!), { public: false, callback: undefined });
  });

  app.get('/v1/content/:contract', { schema: schemas.content }, async (request, reply) => {
    const { query } = request;
    // The hot path: a known collection and a fresh page are answered without awaiting anything.
    const hit = reads.fresh('content', request.params.contract, query);
    if (hit) return sendPublic(request, reply, hit);
    const collection = await reads.collection(request.params.contract, query.q);
    const page = await reads.page('content', collection, query, async () => {
      const rows = await listItems(
        db,
        { ...itemQuery(collection.id, query), state: 'published' },
        { count: query.count ?? 20, offset: query.offset ?? 0, sort: query.sort ?? 'time', order: query.order ?? 'desc' },
      );
      return render(rows.map(rowToItem), query.callback, config.contentMaxAge);
    });
    return sendPublic(request, reply, page);
  });

  app.get('/v1/content/:contract/stream', { schema: schemas.stream }, async (request, reply) => {
    const collection = await reads.collection(request.params.contract, request.query.q);
    const header = request.headers['last-event-id'];
    const lastEventId = typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
      // Public data, and EventSource has no JSONP: any page may listen.
      'access-control-allow-origin': '*',
      'x-request-id': request.id,
    });
    raw.write('retry: 3000\n: connected\n\n');
    let closed = false;
    let unsubscribe = () => {};
    request.raw.on('close', () => {
      closed = true;
      unsubscribe();
    });
    const subscriber = { write: (chunk: string) => void raw.write(chunk), end: () => raw.end() };
    unsubscribe = await streams.subscribe(collection.id, subscriber, lastEventId);
    if (closed) unsubscribe();
  });

  app.get('/v1/count/:contract', { schema: schemas.count }, async (request, reply) => {
    const { query } = request;
    const collection = await reads.collection(request.params.contract, query.q);
    const page = await reads.page('count', collection, query, async () => {
      const count = await countItems(db, { ...itemQuery(collection.id, query), state: 'published' });
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
