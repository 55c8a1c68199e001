/**
 * The console's types of the API (src/console/api-types.ts, issue 31 point 4): the committed
 * src/console/app/api.gen.ts is what the OpenAPI document served at `GET /openapi.json` gives, so
 * that a field added to or removed from the API changes the console's types (and `tsc -p
 * src/console/app` then checks every screen against it). When this fails, run
 * `npm run types:api` and commit the file. Plus what the generator makes of small documents.
 */
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypes, type OpenApiDocument } from '../src/console/api-types.ts';
import { build } from './helper.ts';

describe('the console types', () => {
  it('are those of the served OpenAPI document (npm run types:api writes them)', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    await expect(await apiTypes(res.json())).toMatchFileSnapshot(API_TYPES_FILE, 'src/console/app/api.gen.ts is stale: run npm run types:api');
  });
});

/** A document with one route, `GET /things/{id}`, answering `thing`, plus the given other responses. */
const documentOf = (thing: object, responses: Record<string, unknown> = {}): OpenApiDocument =>
  ({
    paths: {
      '/things/{id}': {
        parameters: [],
        get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema: thing } } }, ...responses } },
      },
    },
  }) as unknown as OpenApiDocument;

const THING = { type: 'object', required: ['_id'], properties: { _id: { type: 'string' } } };

describe('apiTypes', () => {
  it.each([
    ['a field the API answers', THING, /'200': \{\s*_id: string;\s*\};/],
    ['a field added to the API', { ...THING, properties: { ...THING.properties, colour: { type: 'string', enum: ['red', 'blue'] } } }, /_id: string;\s*colour\?: 'red' \| 'blue';/],
    ['a field that may be null', { ...THING, required: ['_id', 'until'], properties: { ...THING.properties, until: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }, /until: string \| null;/],
    ['a map of numbers', { type: 'object', properties: { score: { type: 'number' } }, required: ['score'], additionalProperties: { type: 'number' } }, /score: number;\s*\[k: string\]: number \| undefined;/],
  ])('%s', async (_case, thing, expected) => {
    expect(await apiTypes(documentOf(thing))).toMatch(expected);
  });

  it('drops a field the API no longer answers', async () => {
    const source = await apiTypes(documentOf({ type: 'object', properties: { name: { type: 'string' } } }));
    expect(source).not.toMatch(/_id/);
    expect(source).toMatch(/name\?: string;/);
  });

  it('names a shared component and references it, whatever its $id', async () => {
    const doc = documentOf({ $ref: '#/components/schemas/Thing' });
    doc.components = { schemas: { Thing: { ...THING, $id: 'Thing' } as never } };
    const source = await apiTypes(doc);
    expect(source).toMatch(/'200': Thing;/);
    expect(source).toMatch(/export interface Thing \{\s*_id: string;\s*\}/);
  });

  it('keeps success answers only: JSON bodies, null for none; not errors, HTML or path parameters', async () => {
    const source = await apiTypes(
      documentOf(THING, {
        204: { description: 'gone', content: {} },
        303: { description: 'see other' },
        302: { description: 'a page', content: { 'text/html': { schema: { type: 'string' } } } },
        404: { description: 'NotFoundError', content: { 'application/json': { schema: { type: 'object', properties: { errors: { type: 'array' } } } } } },
      }),
    );
    expect(source).toMatch(/'204': null;\s*'303': null;\s*\};/);
    expect(source).not.toMatch(/'302'|'404'|errors|parameters/);
  });

  it('types the JSON body a route takes', async () => {
    const doc = documentOf(THING);
    (doc.paths['/things/{id}']!.get as { requestBody?: unknown }).requestBody = {
      content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } } },
    };
    expect(await apiTypes(doc)).toMatch(/requestBody: \{\s*name: string;\s*\};/);
  });
});
