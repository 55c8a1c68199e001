/**
 * The self-description (issue 4, item 8): `GET /openapi.json` is an OpenAPI 3.1 document that a
 * maintained validator accepts, that lists every route of docs/api.md with
 * a response schema for its success status (JSONP, event stream, HTML where they apply), the
 * shared components (the content item, the collections listing, token info, consumer details
 * and the error object of docs/api.md), and the security of each route;
 * `GET /docs` renders it.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { build } from '../helper.ts';

const JSON_TYPE = 'application/json';
const JSONP = ['application/json', 'application/javascript'];
const HTML = ['text/html'];

/**
 * Every route of docs/api.md with its success status and
 * the media types its success response documents (none: a response without a body).
 */
const ROUTES: Array<[route: string, status: number, types: string[]]> = [
  // Authorization API (docs/api.md#authorization-api).
  ['post /v1/oauth/token', 200, [JSON_TYPE]],
  ['post /v1/oauth/revoke', 200, []],
  ['get /v1/oauth/token/info', 200, [JSON_TYPE]],
  ['get /v1/oauth/me', 200, [JSON_TYPE]],
  ['get /v1/authorize', 200, HTML],
  ['get /v1/oauth/authorize', 200, HTML],
  ['post /v1/authorize', 303, []],
  ['post /v1/oauth/authorize', 303, []],
  ['post /v1/login', 303, []],
  ['post /v1/logout', 303, []],
  // Management API (docs/api.md#management-api).
  ['get /v1/customer/contracts/me', 200, [JSON_TYPE]],
  ['patch /collection/contracts/{id}', 200, [JSON_TYPE]],
  ['post /collection/filters/test', 200, [JSON_TYPE]],
  ['get /collection/filters/operators', 200, [JSON_TYPE]],
  ...['/collection/inputs', '/collection/lists', '/collection/sets', '/collection/chains', '/publication/customizations', '/collection/collections'].flatMap(
    (path): Array<[string, number, string[]]> => [
      [`post ${path}`, 201, [JSON_TYPE]],
      [`get ${path}`, 200, [JSON_TYPE]],
      [`delete ${path}`, 204, []],
      [`get ${path}/{id}`, 200, [JSON_TYPE]],
      [`${path === '/collection/inputs' ? 'put' : 'patch'} ${path}/{id}`, 200, [JSON_TYPE]],
      [`delete ${path}/{id}`, 204, []],
    ],
  ),
  // Queue and content API (docs/api.md#queue-and-content-api).
  ['get /v1/queue/{contract}', 200, JSONP],
  ['patch /v1/queue/{contract}', 200, [JSON_TYPE]],
  ['get /v1/content/{contract}', 200, JSONP],
  ['get /v1/content/{contract}/stream', 200, ['text/event-stream']],
  ['get /v1/count/{contract}', 200, JSONP],
  ['get /v1/collections/{contract}', 200, JSONP],
  // Publication (docs/api.md#publication).
  ['get /v1/publication/{contract}', 200, HTML],
  ['get /v1/publication/{contract}/items', 200, HTML],
  ['get /v1/publication/assets/{name}', 200, ['text/javascript', 'text/css']],
  ['get /v1/embed.js', 200, ['text/javascript']],
];

type Operation = {
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
  requestBody?: { content: Record<string, unknown> };
};

describe('OpenAPI', () => {
  it('serves a valid OpenAPI 3.1 document listing every route, with request and response schemas', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);

    const paths = doc.paths as Record<string, Record<string, Operation>>;
    const operation = (route: string) => {
      const [method, path] = route.split(' ') as [string, string];
      return paths[path]?.[method];
    };
    for (const [route, status, types] of ROUTES) {
      const response = operation(route)?.responses[status];
      expect(response, `${route} documents ${status}`).toBeDefined();
      expect(Object.keys(response!.content ?? {}).sort(), `${route} ${status} media types`).toEqual([...types].sort());
      for (const type of types) expect(response!.content![type]!.schema, `${route} ${status} ${type} schema`).toBeDefined();
    }
    // No route at all is left with the placeholder @fastify/swagger puts where a route declares no responses.
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) expect(op.responses, `${method} ${path}`).not.toEqual({ 200: { description: 'Default Response' } });
    }

    // Shared components, referenced by the routes.
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ErrorObject', 'ContentItem', 'CollectionSummary', 'Count', 'TokenInfo', 'ConsumerDetails']));
    const schemaOf = (route: string, status: number, type = 'application/json') => operation(route)!.responses[status]!.content![type]!.schema;
    expect(schemaOf('get /v1/content/{contract}', 200)).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ContentItem' } });
    // The single-item form answers the item; the bulk form (body `ids`) the items.
    expect(schemaOf('patch /v1/queue/{contract}', 200)).toEqual({
      anyOf: [{ $ref: '#/components/schemas/ContentItem' }, { type: 'array', items: { $ref: '#/components/schemas/ContentItem' } }],
    });
    expect(schemaOf('get /v1/count/{contract}', 200)).toEqual({ $ref: '#/components/schemas/Count' });
    expect(schemaOf('get /v1/collections/{contract}', 200)).toEqual({ type: 'array', items: { $ref: '#/components/schemas/CollectionSummary' } });
    expect(schemaOf('get /v1/oauth/token/info', 200)).toEqual({ $ref: '#/components/schemas/TokenInfo' });
    expect(schemaOf('get /v1/oauth/me', 200)).toEqual({ $ref: '#/components/schemas/ConsumerDetails' });
    expect(schemaOf('post /v1/oauth/token', 200)).toHaveProperty('properties.access_token');
    expect(schemaOf('get /v1/queue/{contract}', 404)).toEqual({ $ref: '#/components/schemas/ErrorObject' });
    expect(doc.components.schemas.ContentItem.properties).toHaveProperty('kudos');
    expect(doc.components.schemas.ErrorObject.required).toEqual(expect.arrayContaining(['requestId', 'errors']));

    // Status codes as they occur.
    const statuses = (route: string) => Object.keys(operation(route)!.responses);
    expect(statuses('get /v1/content/{contract}')).toEqual(expect.arrayContaining(['200', '304', '400', '401', '404']));
    expect(statuses('get /v1/queue/{contract}')).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
    expect(statuses('post /v1/oauth/token')).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    expect(statuses('post /collection/sets')).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '413']));

    // Security: bearer token by query or header on token-bearing routes, HTTP Basic on the token endpoint, none on public reads.
    const tokenSecurity = [{ access_token: [] }, { bearer: [] }];
    for (const route of ['get /v1/queue/{contract}', 'patch /v1/queue/{contract}', 'get /v1/oauth/me', 'get /v1/customer/contracts/me', 'post /collection/sets']) {
      expect(operation(route)!.security, route).toEqual(tokenSecurity);
    }
    expect(operation('post /v1/oauth/token')!.security).toContainEqual({ basic: [] });
    expect(operation('get /v1/content/{contract}')!.security).toBeUndefined();
    expect(doc.components.securitySchemes.basic).toEqual(expect.objectContaining({ type: 'http', scheme: 'basic' }));
    expect(Object.keys(paths['/v1/oauth/token']!.post!.requestBody!.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    const sets = doc.paths['/collection/sets'];
    expect(sets.post.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['name', 'contractId', 'rules', 'preCondition']));
    expect(sets.post.responses['201'].content['application/json'].schema.properties).toHaveProperty('preCondition');
    expect(doc.paths['/collection/inputs'].post.requestBody.content['application/json'].schema.anyOf).toHaveLength(2);
    expect(doc.paths['/collection/lists/{id}'].patch.responses['200']).toBeDefined();
  });

  it('renders the document for people at /docs', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/docs' });
    const page = res.statusCode === 302 ? await app.inject({ method: 'GET', url: String(res.headers.location).replace(/^\.\//, '/docs/') }) : res;
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-ui');
  });
});
