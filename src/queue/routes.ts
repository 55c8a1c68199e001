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
 * version (cache.ts), so the hot path is one indexed read plus a cached string.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { authenticationError, notFoundError } from '../errors.ts';
import { authenticate, requireContractAccess } from '../http/authenticate.ts';
import { findActiveCollectionBySlugs, findCollectionBySlug, listCollections } from '../store/collections.ts';
import { findContract } from '../store/contracts.ts';
import type { Db } from '../store/db.ts';
import { countItems, findItem, listItems, rowToItem, setItemState } from '../store/items.ts';
import type { CollectionRow, ContractRow } from '../store/tables.ts';
import { createPageCache } from './cache.ts';
import { itemQuery, type ReadQuery } from './params.ts';
import { render, respond, sendPublic } from './respond.ts';
import { schemas } from './schema.ts';
import { createStreamHub } from './stream.ts';

/** Upper bound of the page cache (serialized pages as UTF-8 bytes, with their keys). */
const PAGE_CACHE_BYTES = 16 * 1024 * 1024;
/** How long a process trusts a collection's version before reading it again (ms). */
const VERSION_CHECK_MS = 1000;

export function queueRoutes(app: FastifyInstance, { db, config }: { db: Db; config: Config }): void {
  async function contractOf(slug: string): Promise<ContractRow> {
    const contract = await findContract(db, slug);
    if (!contract || !contract.active) throw authenticationError(`Unknown or inactive contract ${slug}.`, 'contract');
    return contract;
  }

  async function collectionOf(contract: ContractRow, slug: string, activeOnly: boolean): Promise<CollectionRow> {
    const collection = await findCollectionBySlug(db, contract.id, slug);
    if (!collection || (activeOnly && !collection.active)) throw notFoundError(`Unknown collection ${slug}.`, 'q', slug);
    return collection;
  }

  /**
   * Collections found by public reads, with their version, re-read at most every
   * VERSION_CHECK_MS per process and at once after a moderation through this process. Changes
   * by other processes (the collector, other servers) are thus seen within a second, inside the
   * CONTENT_MAX_AGE delay decisions §7 allows, and a cached page costs no database read.
   */
  const found = new Map<string, { at: number; collection: { id: string; version: number } }>();

  /** The collection of a public read when recently found (no database read), else undefined. */
  function knownCollection(request: FastifyRequest, now: number): { id: string; version: number } | undefined {
    const known = found.get(`${(request.params as { contract: string }).contract}\n${(request.query as { q: string }).q}`);
    return known && now - known.at < VERSION_CHECK_MS ? known.collection : undefined;
  }

  /** The active collection of a public read with its version: one indexed read at most, else the precise error. */
  async function publicCollection(request: FastifyRequest): Promise<{ id: string; version: number }> {
    const contractSlug = (request.params as { contract: string }).contract;
    const q = (request.query as { q: string }).q;
    const key = `${contractSlug}\n${q}`;
    const now = Date.now();
    const known = knownCollection(request, now);
    if (known) return known;
    const active = await findActiveCollectionBySlugs(db, contractSlug, q);
    if (active) {
      if (found.size >= 10_000) found.clear();
      found.set(key, { at: now, collection: active });
      return active;
    }
    const collection = await collectionOf(await contractOf(contractSlug), q, true);
    return { id: collection.id, version: Number(collection.version) };
  }

  const pages = createPageCache({ maxBytes: PAGE_CACHE_BYTES, ttlMs: config.contentMaxAge * 1000 });
  const streams = createStreamHub(db);
  app.addHook('preClose', async () => streams.close());

  /** The cache key of a public read: route, collection and the validated query (unknown parameters dropped). */
  const keyOf = (route: string, collectionId: string, query: ReadQuery) => `${route} ${collectionId} ${JSON.stringify(query)}`;

  app.get('/v1/queue/:contract', { schema: schemas.queue }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { access_token: _token, ...query } = request.query as ReadQuery & { access_token?: string };
    const contract = await contractOf((request.params as { contract: string }).contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(contract, query.q, false);
    const rows = await listItems(db, itemQuery(collection.id, query), {
      count: query.count ?? 500,
      offset: query.offset ?? 0,
      sort: query.sort ?? 'time',
      order: query.order ?? 'desc',
    });
    return respond(request, reply, rows.map(rowToItem), { public: false });
  });

  app.patch('/v1/queue/:contract', { schema: schemas.moderate }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query as { q: string; id: string };
    const { state } = request.body as { state: 'published' | 'unpublished' };
    const contract = await contractOf((request.params as { contract: string }).contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(contract, q, false);
    if (!(await findItem(db, collection.id, id))) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
    await setItemState(db, collection.id, id, state);
    found.delete(`${contract.slug}\n${q}`);
    return respond(request, reply, rowToItem((await findItem(db, collection.id, id))!), { public: false });
  });

  app.get('/v1/content/:contract', { schema: schemas.content }, async (request, reply) => {
    const query = request.query as ReadQuery;
    const now = Date.now();
    // The hot path: a known collection and a fresh page are answered without awaiting anything.
    const known = knownCollection(request, now);
    const hit = known && pages.fresh(keyOf('content', known.id, query), known.version, now);
    if (hit) return sendPublic(request, reply, hit);
    const collection = known ?? (await publicCollection(request));
    const page = await pages.get(keyOf('content', collection.id, query), collection.version, async () => {
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
    const collection = await publicCollection(request);
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
    const query = request.query as ReadQuery;
    const collection = await publicCollection(request);
    const page = await pages.get(keyOf('count', collection.id, query), collection.version, async () => {
      const count = await countItems(db, { ...itemQuery(collection.id, query), state: 'published' });
      return render({ count: String(count) }, query.callback, config.contentMaxAge);
    });
    return sendPublic(request, reply, page);
  });

  app.get('/v1/collections/:contract', { schema: schemas.collections }, async (request, reply) => {
    const contract = await contractOf((request.params as { contract: string }).contract);
    const collections = (await listCollections(db, contract.id)).filter((c) => c.active);
    const summaries = collections.map((c) => ({
      name: c.name,
      type: c.type,
      url: `${config.queueUrl}/v1/content/${encodeURIComponent(contract.slug)}?q=${encodeURIComponent(c.slug)}`,
    }));
    return respond(request, reply, summaries, { public: true, maxAge: config.contentMaxAge });
  });
}
