/**
 * Route schemas of the queue and content API (docs/api.md#queue-and-content-api) for validation and
 * the OpenAPI description: the request schemas of params.ts, which Fastify validates, with the
 * responses each route gives — JSON, or JSONP (application/javascript) where `callback` applies,
 * 304 on a matching `If-None-Match` for public reads, and the error object otherwise.
 */
import { type TSchema, Type } from 'typebox';
import { HistoryStep } from '../http/audit.ts';
import { errorResponses, jsonOrJsonp, noBody, ref, textResponse, TOKEN_SECURITY } from '../http/openapi.ts';
import {
  CollectionsQuery,
  ContentQuery,
  ContractParams,
  CountQuery,
  HistoryQuery,
  ModerationBody,
  ModerationQuery,
  QueueCountQuery,
  QueueQuery,
  QueueStreamQuery,
  SplitBody,
  SplitQuery,
  StreamQuery,
} from './params.ts';

const tags = ['queue and content'];
const items = Type.Array(ref('ContentItem'));
const notModified = noBody('Not Modified: If-None-Match names the current ETag');

export const schemas = {
  queue: {
    tags,
    summary: 'Published and unpublished items of collection q (token with access to the contract); moderators filter by state and text',
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: QueueQuery,
    response: { 200: jsonOrJsonp(items, 'Content items (Cache-Control: no-store)'), ...errorResponses(400, 401, 403, 404) },
  },
  moderate: {
    tags,
    summary: 'Publish or unpublish item id of collection q, or every item of the body\'s ids (all or none)',
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: ModerationQuery,
    body: ModerationBody,
    response: {
      200: {
        description: 'With id: the item with its new state. With ids: the items with their new state, in the order of ids',
        headers: {
          'Audit-Id': {
            type: 'string',
            description: 'The audit entries the moderation recorded, comma-separated, in the order state, pin, edit (one for ids): revert them to undo it (POST /collection/audit/{id}/revert). Absent when nothing changed that is recorded (a pin or edit equal to the present one).',
          },
        },
        content: { 'application/json': { schema: Type.Union([ref('ContentItem'), items]) } },
      } as unknown as TSchema,
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
  history: {
    tags,
    summary: "An item's moderation history, newest first: who changed its state, when, from what to what (docs/api.md#item-history)",
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: HistoryQuery,
    response: { 200: Type.Array(HistoryStep), ...errorResponses(400, 401, 403, 404) },
  },
  split: {
    tags,
    summary: 'Split a wrongly merged duplicate out of card id of collection q: it becomes a card of its own (docs/api.md#split-a-duplicate)',
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: SplitQuery,
    body: SplitBody,
    response: {
      200: {
        description: 'The card without the duplicate, and the duplicate as its own card: [card, split item]',
        content: { 'application/json': { schema: items } },
      } as unknown as TSchema,
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
  queueCount: {
    tags,
    summary: 'Counts of published and unpublished items of collection q (token with access to the contract)',
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: QueueCountQuery,
    response: {
      200: jsonOrJsonp(
        Type.Object({ published: Type.Integer({ minimum: 0 }), unpublished: Type.Integer({ minimum: 0 }) }),
        'Item counts by state, with the same filters as the queue read (Cache-Control: no-store)',
      ),
      ...errorResponses(400, 401, 403, 404),
    },
  },
  queueStream: {
    tags,
    summary: 'Server-Sent Events of collection q for moderators: item (any state), on arrival and on moderation (token in access_token)',
    security: TOKEN_SECURITY,
    params: ContractParams,
    querystring: QueueStreamQuery,
    response: {
      200: textResponse('text/event-stream', 'Events: `item` (data: a content item with its state) for every item that arrives or is moderated after the stream opened, `reload`; the stream ends when the token expires'),
      ...errorResponses(400, 401, 403, 404),
    },
  },
  content: {
    tags,
    summary: 'Published items of collection q (public, cacheable)',
    params: ContractParams,
    querystring: ContentQuery,
    response: { 200: jsonOrJsonp(items, 'Published content items'), 304: notModified, ...errorResponses(400, 401, 404) },
  },
  stream: {
    tags,
    summary: 'Server-Sent Events of collection q: item, unpublished, reload (public)',
    params: ContractParams,
    querystring: StreamQuery,
    response: {
      200: textResponse('text/event-stream', 'Events: `item` (data: a content item), `unpublished` (data: {"id"}), `reload`; each `id` is the collection version (send Last-Event-ID to resume)'),
      ...errorResponses(400, 401, 404),
    },
  },
  count: {
    tags,
    summary: 'Count of published items of collection q (public, cacheable)',
    params: ContractParams,
    querystring: CountQuery,
    response: { 200: jsonOrJsonp(ref('Count'), 'The count'), 304: notModified, ...errorResponses(400, 401, 404) },
  },
  collections: {
    tags,
    summary: 'The active collections of the contract (public, cacheable)',
    params: ContractParams,
    querystring: CollectionsQuery,
    response: { 200: jsonOrJsonp(Type.Array(ref('CollectionSummary')), 'Collection summaries'), 304: notModified, ...errorResponses(400, 401) },
  },
};
