/**
 * The content queue and content reading API on {queue_url} (interface §4.7, decisions §7):
 *
 *   GET   /v1/queue/{contract}        token; published and unpublished items of collection q
 *   PATCH /v1/queue/{contract}        token; moderate item `id` of collection q → its new state
 *   GET   /v1/content/{contract}      public; published items of collection q
 *   GET   /v1/count/{contract}        public; {count: "<digits>"} of published items
 *   GET   /v1/collections/{contract}  public; the contract's active collections
 *
 * An unknown or inactive contract slug → 401 AuthenticationError; an unknown collection → 404.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { authenticationError, notFoundError } from '../errors.ts';
import { authenticate, requireContractAccess } from '../http/authenticate.ts';
import { findCollectionBySlug, listCollections } from '../store/collections.ts';
import { findContract } from '../store/contracts.ts';
import type { Db } from '../store/db.ts';
import { countItems, findItem, listItems, rowToItem, setItemState } from '../store/items.ts';
import type { CollectionRow, ContractRow } from '../store/tables.ts';
import {
  CollectionsQuery,
  ContentQuery,
  ContractParams,
  CountQuery,
  itemQuery,
  ModerationBody,
  ModerationQuery,
  QueueQuery,
  type ReadQuery,
} from './params.ts';
import { respond } from './respond.ts';

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

  const publicCache = { public: true as const, maxAge: config.contentMaxAge };

  app.get('/v1/queue/:contract', { schema: { params: ContractParams, querystring: QueueQuery } }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const query = request.query as ReadQuery;
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

  app.patch('/v1/queue/:contract', { schema: { params: ContractParams, querystring: ModerationQuery, body: ModerationBody } }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { q, id } = request.query as { q: string; id: string };
    const { state } = request.body as { state: 'published' | 'unpublished' };
    const contract = await contractOf((request.params as { contract: string }).contract);
    await requireContractAccess(db, principal, contract.id, 'contract');
    const collection = await collectionOf(contract, q, false);
    if (!(await findItem(db, collection.id, id))) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
    await setItemState(db, collection.id, id, state);
    return respond(request, reply, rowToItem((await findItem(db, collection.id, id))!), { public: false });
  });

  app.get('/v1/content/:contract', { schema: { params: ContractParams, querystring: ContentQuery } }, async (request, reply) => {
    const query = request.query as ReadQuery;
    const contract = await contractOf((request.params as { contract: string }).contract);
    const collection = await collectionOf(contract, query.q, true);
    const rows = await listItems(
      db,
      { ...itemQuery(collection.id, query), state: 'published' },
      { count: query.count ?? 20, offset: query.offset ?? 0, sort: query.sort ?? 'time', order: query.order ?? 'desc' },
    );
    return respond(request, reply, rows.map(rowToItem), publicCache);
  });

  app.get('/v1/count/:contract', { schema: { params: ContractParams, querystring: CountQuery } }, async (request, reply) => {
    const query = request.query as ReadQuery;
    const contract = await contractOf((request.params as { contract: string }).contract);
    const collection = await collectionOf(contract, query.q, true);
    const count = await countItems(db, { ...itemQuery(collection.id, query), state: 'published' });
    return respond(request, reply, { count: String(count) }, publicCache);
  });

  app.get('/v1/collections/:contract', { schema: { params: ContractParams, querystring: CollectionsQuery } }, async (request, reply) => {
    const contract = await contractOf((request.params as { contract: string }).contract);
    const collections = (await listCollections(db, contract.id)).filter((c) => c.active);
    const summaries = collections.map((c) => ({
      name: c.name,
      type: c.type,
      url: `${config.queueUrl}/v1/content/${encodeURIComponent(contract.slug)}?q=${encodeURIComponent(c.slug)}`,
    }));
    return respond(request, reply, summaries, publicCache);
  });
}
