/**
 * Shared pieces of the OpenAPI description (issue 4, item 8): the interface's resource shapes as
 * components (`#/components/schemas/<name>`), registered once with `app.addSchema` by `app.ts`
 * and referenced from route response schemas with `ref(name)`, plus response helpers.
 *
 * These schemas only document: `app.ts` serializes with plain JSON.stringify, and request
 * validation (http/validate.ts) compiles with its own Ajv, which does not know the components —
 * so `ref` is for response schemas only.
 */
import { Type, type TSchema } from 'typebox';

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
const Hex = Type.String({ pattern: '^[0-9a-f]{24}$', description: '24 lower-case hex characters' });

/** The error object (docs/api.md#errors), with the RFC 6749 §5.2 fields the token endpoints add. */
const ErrorObject = Type.Object(
  {
    requestId: Type.String({ description: 'Also sent as header X-Request-Id.' }),
    errors: Type.Array(
      Type.Object({
        name: Type.String({ description: 'ValidationError, AuthenticationError, ForbiddenError, NotFoundError, ConflictError, RateLimitError, InternalError' }),
        message: Type.String(),
        propertyName: Type.Optional(Type.String({ description: 'A path: rules[2].operator, [3].service' })),
        propertyValue: Type.Optional(Type.Unknown()),
        reason: Type.Optional(Type.String()),
        code: Type.Number({ description: '1001–1006 (400), 2001, 3001, 4001, 4091, 4291, 5001' }),
      }),
      { minItems: 1 },
    ),
    error: Type.Optional(Type.String({ description: 'Token and revocation endpoints only: the RFC 6749 §5.2 error code.' })),
    error_description: Type.Optional(Type.String({ description: 'Token and revocation endpoints only (RFC 6749 §5.2).' })),
  },
  { $id: 'ErrorObject' },
);

const nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);

/** The fields of a content item and of its children (docs/api.md#content-item). */
const itemFields = {
  id: Type.String({ description: '<service>_<native id>' }),
  service: Type.String({ description: 'twitter, youtube, instagram, rss, …' }),
  type: Type.String({ enum: ['video', 'image', 'link', 'status', 'embed', 'comment'] }),
  title: Type.Optional(Type.String()),
  text: Type.String({ description: 'May contain HTML.' }),
  tags: Type.Array(Type.String()),
  url: Type.String({ description: "The original's address; else an enclosure's, a guid URL, the page of the feed or account" }),
  date: Iso,
  author: Type.Object(
    { name: nullable(Type.String()), username: nullable(Type.String()), userid: nullable(Type.String()), url: nullable(Type.String()) },
    { additionalProperties: false },
  ),
  media: nullable(
    Type.Array(
      Type.Object(
        {
          type: Type.String({ enum: ['image', 'embed'] }),
          url: Type.Optional(Type.String()),
          embed: Type.Optional(Type.String({ description: 'Markup.' })),
          duration: Type.Optional(Type.Number()),
          width: Type.Optional(Type.Number()),
          height: Type.Optional(Type.Number()),
          alt: Type.Optional(Type.String({ description: 'Alternative text (plain text): the source\'s, or a moderator\'s edit (docs/api.md#edit-an-item)' })),
        },
        { additionalProperties: false },
      ),
    ),
  ),
  kudos: Type.Object({ score: Type.Number() }, { additionalProperties: Type.Number(), description: 'score plus <service>_<metric> numbers' }),
  location: Type.Optional(
    Type.Object({ latitude: Type.Number(), longitude: Type.Number(), name: Type.Optional(Type.String()) }, { additionalProperties: false }),
  ),
  language: Type.Optional(Type.String({ description: 'ISO 639-1' })),
};

/** A related item (a comment): the fields of a content item, without a state of its own. */
const ContentChild = Type.Object(
  {
    ...itemFields,
    state: Type.Optional(Type.String({ enum: ['published', 'unpublished'] })),
    children: Type.Array(Type.Object({}, { additionalProperties: true, description: 'A related item of the same shape.' })),
  },
  { additionalProperties: false },
);

/** The content item (docs/api.md#content-item): every field present with its type, `children` always an array, nothing else. */
const ContentItem = Type.Object(
  {
    ...itemFields,
    state: Type.String({ enum: ['published', 'unpublished', 'removed'], description: 'removed: queue items only, removed at the source (docs/api.md#removed-at-the-source)' }),
    removedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Queue items removed at the source only: when Sluice learnt it (ISO 8601)' })),
    removedReason: Type.Optional(
      Type.String({ enum: ['deleted', 'protected', 'withheld', 'gone'], description: 'Queue items removed at the source only: why (docs/api.md#removed-at-the-source)' }),
    ),
    children: Type.Array(ContentChild, { description: 'Related items such as comments; empty when none.' }),
    duplicates: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String(),
            service: Type.String(),
            url: Type.String(),
            author: Type.Object(
              { name: Type.Union([Type.String(), Type.Null()]), username: Type.Union([Type.String(), Type.Null()]), userid: Type.Union([Type.String(), Type.Null()]), url: Type.Union([Type.String(), Type.Null()]) },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, description: 'Items merged into this one as duplicates, oldest first; absent when none (docs/api.md#duplicates)' },
      ),
    ),
    pinned: Type.Boolean({ description: 'Whether a moderator pinned the item: pinned items come first (docs/api.md#pin-and-spotlight)' }),
    position: Type.Optional(Type.Integer({ minimum: 1, description: "When pinned: the item's place among the pinned items, 1 = first" })),
    spotlight: Type.Optional(Type.Boolean({ description: 'Present (true) when the wall shows the item larger' })),
    edited: Type.Optional(Type.Boolean({ description: 'Queue items only: whether a moderator edited the item (docs/api.md#edit-an-item)' })),
    original: Type.Optional(
      Type.Object({ title: Type.Optional(Type.String()), text: Type.String() }, { additionalProperties: false, description: "Queue items only, when edited: the source's title and text" }),
    ),
    held: Type.Optional(
      Type.Object(
        { set: Type.Object({ id: Type.Union([Type.String(), Type.Null()]), name: Type.String() }, { additionalProperties: false }), rule: Type.Integer(), reason: Type.String() },
        { additionalProperties: false, description: 'Queue items only, while a holding filter set holds the item for review (docs/filters.md#hold-for-review); publishing it clears this' },
      ),
    ),
  },
  { $id: 'ContentItem', additionalProperties: false },
);

/** An entry of the collections listing (docs/api.md#collections-listing). */
const CollectionSummary = Type.Object(
  {
    name: Type.String({ description: 'Display name' }),
    type: Type.String({ enum: ['realtime', 'ranked'] }),
    url: Type.String({ description: 'The content endpoint of the collection, with q set' }),
  },
  { $id: 'CollectionSummary' },
);

/** The count of published items (docs/api.md#count), a string of digits. */
const Count = Type.Object({ count: Type.String({ pattern: '^[0-9]+$' }) }, { $id: 'Count' });

/** Token information (docs/api.md#token-info). */
const TokenInfo = Type.Object(
  {
    active: Type.Boolean(),
    expired: Type.Boolean(),
    expires: Iso,
    ttl: Type.Integer({ minimum: 0, description: 'Milliseconds; 0 when expired' }),
    scope: Type.String({ description: "The token's scope, space-separated (RFC 6749 §3.3; docs/api.md#roles-and-scopes)" }),
  },
  { $id: 'TokenInfo' },
);

/** Consumer details (docs/api.md#me). */
const ConsumerDetails = Type.Object(
  {
    privileges: Type.Array(Type.String(), { description: 'MY_ACCOUNT for a user; empty for a machine client' }),
    consumer_id: Hex,
    consumer_name: Type.String(),
    consumer_type: Type.String({ enum: ['user', 'client'] }),
    consumer_email: Type.String({ description: 'Unique; <consumer_id>@clients.sluice.invalid for a consumer registered without an address' }),
    language: Type.Optional(Type.String({ description: 'ISO 639-1; users only' })),
  },
  { $id: 'ConsumerDetails' },
);

/** The components, in the order `app.ts` registers them. */
export const COMPONENTS: TSchema[] = [ErrorObject, ContentItem, CollectionSummary, Count, TokenInfo, ConsumerDetails];

export type ComponentName = 'ErrorObject' | 'ContentItem' | 'CollectionSummary' | 'Count' | 'TokenInfo' | 'ConsumerDetails';

/** A reference to a shared component, optionally with the response description. */
export function ref(name: ComponentName, description?: string): TSchema {
  return { $ref: `${name}#`, ...(description ? { description } : {}) } as unknown as TSchema;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'ValidationError: a parameter or body property is invalid',
  401: 'AuthenticationError: missing, unknown or expired token, bad client credentials, or unknown or inactive contract',
  403: "ForbiddenError: the consumer lacks access to the contract, or a role on it that allows the operation, or the token lacks the operation's scope (WWW-Authenticate: Bearer error=\"insufficient_scope\")",
  404: 'NotFoundError: unknown collection, item or resource',
  409: 'ConflictError: name in use, or still referenced',
  413: 'ValidationError: request body over 1 MiB',
  414: 'ValidationError: a path parameter is over the router\'s length bound',
  415: 'ValidationError: the body is not JSON (Content-Type)',
  429: 'RateLimitError: too many failures; see Retry-After',
  422: 'UnprocessableError: a page the request names cannot be used (no text, not HTML, too large, a non-public address, or its robots.txt keeps Sluice out)',
  502: 'UpstreamError: a server Sluice asked on the request\'s behalf failed or did not answer',
};

/**
 * The error responses `statuses` (each the error object of docs/api.md#errors) plus `default` (500).
 * A route with a body (413 listed) also answers 415 for a body of another media type.
 */
export function errorResponses(...statuses: number[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const status of statuses.includes(413) ? [...statuses, 415] : statuses) out[status] = ref('ErrorObject', ERROR_DESCRIPTIONS[status]);
  out.default = ref('ErrorObject', 'InternalError and any other error');
  return out;
}

/**
 * A 200 response that is JSON, or JSONP (`/**\/<callback>(<json>);`, application/javascript,
 * docs/api.md#jsonp) when `callback` is given.
 */
export function jsonOrJsonp(schema: TSchema, description: string): TSchema {
  return {
    description,
    content: {
      'application/json': { schema },
      'application/javascript': { schema: Type.String({ description: 'JSONP: /**/<callback>(<the JSON body>);' }) },
    },
  } as unknown as TSchema;
}

/** A response whose body is text of `type` (HTML, JavaScript, CSS, event stream). */
export function textResponse(type: string, description: string): TSchema {
  return { description, content: { [type]: { schema: Type.String() } } } as unknown as TSchema;
}

/** A response without a body (204, 304, redirects), with its description. */
export const noBody = (description: string): TSchema => Type.Null({ description });

/** Security requirement of token-bearing routes: `access_token` query parameter or `Authorization: Bearer` (docs/api.md#authentication). */
export const TOKEN_SECURITY: Security = [{ access_token: [] }, { bearer: [] }];

/** An OpenAPI security requirement list (alternatives; `{}` makes it optional). */
export type Security = Array<Record<string, string[]>>;
