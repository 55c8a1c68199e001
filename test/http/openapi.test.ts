/**
 * The self-description (issue 4, item 8): `GET /openapi.json` is an OpenAPI 3.1 document that a
 * maintained validator accepts and that lists every route of interface §4 and decisions §4/§5;
 * `GET /docs` renders it.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { build } from '../helper.ts';

const ROUTES = [
  // Authorization API (interface §4.1; /v1/authorize is served by the login work).
  'post /v1/oauth/token',
  'get /v1/oauth/token/info',
  'get /v1/oauth/me',
  // Management API (interface §4.2–§4.6, decisions §4, §5).
  ...['/collection/inputs', '/collection/lists', '/collection/sets', '/collection/chains', '/publication/customizations', '/collection/collections'].flatMap((path) => [
    `post ${path}`,
    `get ${path}`,
    `delete ${path}`,
    `get ${path}/{id}`,
    `${path === '/collection/inputs' ? 'put' : 'patch'} ${path}/{id}`,
    `delete ${path}/{id}`,
  ]),
  // Queue and content API (interface §4.7).
  'get /v1/queue/{contract}',
  'patch /v1/queue/{contract}',
  'get /v1/content/{contract}',
  'get /v1/count/{contract}',
  'get /v1/collections/{contract}',
];

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

    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    for (const route of ROUTES) expect(listed, route).toContain(route);
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
