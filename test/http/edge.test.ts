/**
 * What every request meets before its route (issue 14, items 1, 4 and 11; docs/api.md#limits,
 * #empty-parameters, #errors): empty query parameters are absent, bodies are bounded in depth and
 * size, the router's and the HTTP parser's own errors, a wrong method and a slow body all answer
 * with the error object, and the error handler cannot fail.
 */
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { MAX_ARRAY, MAX_BULK, MAX_DEPTH, MAX_STRING } from '../../src/http/limits.ts';
import { COMPONENTS } from '../../src/http/openapi.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { exchange, listen, parseAnswer as parse } from './raw-socket.ts';

const json = { 'content-type': 'application/json' };
const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

describe('empty query parameters are absent', () => {
  async function setup() {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_a', date: new Date(Date.now() - 60_000).toISOString() }), buildItem({ id: 'rss_b', date: new Date(Date.now() - 120_000).toISOString() })]);
    return { ...ctx, tenant };
  }

  it('callback= gives plain JSON on queue, content, count and collections, as an existing client sends it', async () => {
    const { app, tenant } = await setup();
    const { slug } = tenant.contract;
    const q = `q=${tenant.collection.slug}`;
    for (const url of [`/v1/queue/${slug}?${q}&callback=&access_token=${tenant.token}`, `/v1/content/${slug}?${q}&callback=`, `/v1/count/${slug}?${q}&callback=`, `/v1/collections/${slug}?callback=`]) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(() => res.json(), url).not.toThrow();
    }
    // The client's habit: read every item's children.
    const items = (await app.inject({ method: 'GET', url: `/v1/content/${slug}?${q}&callback=` })).json() as { children: unknown[] }[];
    expect(items.map((item) => item.children.length)).toEqual([0, 0]);
  });

  it('since=, until=, count=, offset=, sort=, order=, service=, type=, language=, location= take their defaults', async () => {
    const { app, tenant } = await setup();
    const empty = 'since=&until=&count=&offset=&sort=&order=&service=&type=&language=&location=&callback=';
    const res = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&${empty}` });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { id: string }[]).map((item) => item.id)).toEqual(['rss_a', 'rss_b']);
    const count = await app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=${tenant.collection.slug}&since=&until=&service=&type=` });
    expect(count.json()).toEqual({ count: '2' });
    // A repeated parameter keeps its given value.
    const repeated = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&count=&count=1` });
    expect((repeated.json() as unknown[]).length).toBe(1);
  });

  it('still refuses what is given and wrong, and reports an empty required parameter missing', async () => {
    const { app, tenant } = await setup();
    const base = `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}`;
    expectError(await app.inject({ method: 'GET', url: `${base}&callback=alert(1)` }), 400, { name: 'ValidationError', code: 1005, propertyName: 'callback' });
    expectError(await app.inject({ method: 'GET', url: `${base}&count=0` }), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
    expectError(await app.inject({ method: 'GET', url: `${base}&since=yesterday` }), 400, { name: 'ValidationError', code: 1002, propertyName: 'since' });
    expectError(await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=&callback=` }), 400, { name: 'ValidationError', code: 1001, propertyName: 'q' });
    // An empty token is no token.
    expectError(await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&access_token=` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });
});

describe('content items always have the interface shape', () => {
  const validItem = new Ajv({ strict: false, validateFormats: false }).compile(COMPONENTS.find((schema) => (schema as { $id?: string }).$id === 'ContentItem')!);

  it('answers items stored before the fix (no url, no children, properties of the wrong type) in shape', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    const date = new Date(Date.now() - 60_000).toISOString();
    const legacy = [
      // A feed entry without link, stored with url null and no children.
      { ...buildItem({ id: 'rss_nolink', date }), url: null, media: [{ type: 'embed', url: 'https://example.org/a.mp3', embed: '<audio></audio>' }] },
      // Wrong types everywhere the old code could have let them through.
      { ...buildItem({ id: 'rss_odd', date }), url: null, title: 5, tags: 'news', children: 'none', kudos: { score: 1, rss_views: 'many' }, language: null, extra: true },
      // Children, one of them without url.
      { ...buildItem({ id: 'facebook_1', date, service: 'facebook' }), children: [{ ...buildItem({ id: 'facebook_1_c', date, type: 'comment' }), url: null }] },
    ] as never[];
    await seedItems(db, tenant, legacy);
    const res = await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&access_token=${tenant.token}` });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json() as Record<string, any>[];
    expect(items).toHaveLength(3);
    for (const item of items) expect(validItem(item), `${item.id}: ${JSON.stringify(validItem.errors)}`).toBe(true);
    const byId = Object.fromEntries(items.map((item) => [item.id, item]));
    expect(byId.rss_nolink!.url).toBe('https://example.org/a.mp3');
    expect(byId.rss_nolink!.children).toEqual([]);
    expect(byId.rss_odd).toMatchObject({ tags: [], children: [], kudos: { score: 1 } });
    expect(byId.rss_odd).not.toHaveProperty('title');
    expect(byId.rss_odd).not.toHaveProperty('extra');
    expect(byId.facebook_1!.children[0]).toMatchObject({ id: 'facebook_1_c', url: byId.facebook_1!.url, children: [] });
    // The moderation answer is in shape too.
    const moderated = await app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=rss_odd&access_token=${tenant.token}`, headers: json, payload: '{"state":"unpublished"}' });
    expect(moderated.statusCode, moderated.body).toBe(200);
    expect(validItem(moderated.json())).toBe(true);
  });
});

describe('bodies are bounded at the edge', () => {
  it(`refuses a body nested deeper than ${MAX_DEPTH} levels with 400 on every route, the PATCH of the queue included`, async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    const token = `access_token=${tenant.token}`;
    const deep = nested(5000);
    for (const [method, url, payload] of [
      ['PATCH', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=x&${token}`, `{"state":${deep}}`],
      ['POST', `/collection/inputs?${token}`, deep],
      ['POST', `/collection/filters/test?${token}`, `{"contractId":"${tenant.contract.id}","filterId":"${'0'.repeat(24)}","items":[{"id":"rss_1","text":${nested(10_000, '"x"')}}]}`],
      ['POST', '/v1/oauth/token', `{"grant_type":${deep}}`],
    ] as const) {
      const res = await app.inject({ method, url, headers: json, payload });
      expectError(res, 400, { name: 'ValidationError', code: 1003, propertyName: 'body' });
    }
    // Exactly the bound is accepted by the edge (and judged by the route).
    const atBound = await app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=x&${token}`, headers: json, payload: `{"state":${nested(MAX_DEPTH - 1)}}` });
    expectError(atBound, 400, { name: 'ValidationError', code: 1002, propertyName: 'state' });
    // Brackets inside strings are text, not depth.
    const inString = await app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=x&${token}`, headers: json, payload: `{"state":"${'['.repeat(5000)}\\""}` });
    expectError(inString, 400, { name: 'ValidationError', code: 1004, propertyName: 'state' });
  });

  it('refuses a bulk body over the bound, an array or a string over theirs, naming where', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    const token = `access_token=${tenant.token}`;
    const inputs = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ service: 'rss', type: 'feed', input: `https://example.org/${i}.xml`, contractId: tenant.contract.id, collectionId: tenant.collection.id })));
    const bulk = await app.inject({ method: 'POST', url: `/collection/inputs?${token}`, headers: json, payload: inputs(1400) });
    expect(expectError(bulk, 400, { name: 'ValidationError', code: 1003, propertyName: 'body' }).errors[0]!.message).toContain(String(MAX_BULK));
    const list = await app.inject({ method: 'POST', url: `/collection/lists?${token}`, headers: json, payload: JSON.stringify({ contractId: tenant.contract.id, name: 'big', type: 'words', entries: Array(MAX_ARRAY + 1).fill('w') }) });
    expectError(list, 400, { name: 'ValidationError', code: 1003, propertyName: 'entries' });
    const long = await app.inject({ method: 'POST', url: `/collection/lists?${token}`, headers: json, payload: JSON.stringify({ contractId: tenant.contract.id, name: 'x'.repeat(MAX_STRING + 1), type: 'words', entries: [] }) });
    expectError(long, 400, { name: 'ValidationError', code: 1003, propertyName: 'name' });
    // The largest bulk body allowed is stored whole (in several statements).
    const created = await app.inject({ method: 'POST', url: `/collection/inputs?${token}`, headers: json, payload: inputs(MAX_BULK) });
    expect(created.statusCode, created.body.slice(0, 300)).toBe(201);
    expect((created.json() as unknown[]).length).toBe(MAX_BULK);
  });

  it('refuses U+0000 in path and query parameters, JSON and form bodies (PostgreSQL cannot store it), naming where', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    const { slug } = tenant.contract;
    const nul = async (method: 'GET' | 'POST', url: string, propertyName: string, payload?: string, type = 'application/json') => {
      const res = await app.inject({ method, url, ...(payload === undefined ? {} : { headers: { 'content-type': type }, payload }) });
      expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName });
    };
    await nul('GET', `/v1/content/a%00b/stream?q=${tenant.collection.slug}`, 'contract');
    await nul('GET', `/v1/content/${slug}?q=news%00`, 'q');
    await nul('GET', `/v1/queue/${slug}?q=${tenant.collection.slug}&text=a%00&access_token=${tenant.token}`, 'text');
    await nul('POST', `/collection/lists?access_token=${tenant.token}`, 'entries[1]', JSON.stringify({ contractId: tenant.contract.id, name: 'n', type: 'words', entries: ['ok', 'a\u0000b'] }));
    await nul('POST', `/collection/lists?access_token=${tenant.token}`, 'body', JSON.stringify({ ['k\u0000']: 1 }));
    await nul('POST', '/v1/oauth/token', 'client_id', 'grant_type=client_credentials&client_id=a%00b&client_secret=x', 'application/x-www-form-urlencoded');
  });
});

describe('the router answers with the error object', () => {
  it('answers a known path with another method 405 with Allow, an unknown path 404', async () => {
    const { app } = await build();
    const put = await app.inject({ method: 'PUT', url: '/v1/queue/acme' });
    expectError(put, 405, { name: 'ValidationError', code: 1004, propertyName: 'method' });
    expect(put.headers.allow).toBe('GET, HEAD, PATCH');
    const post = await app.inject({ method: 'POST', url: '/collection/inputs/0123456789abcdef01234567' });
    expectError(post, 405, { name: 'ValidationError', code: 1004, propertyName: 'method' });
    expect(post.headers.allow).toBe('DELETE, GET, HEAD, PUT');
    expectError(await app.inject({ method: 'PUT', url: '/v1/nothing' }), 404, { name: 'NotFoundError', code: 4001 });
  });

  it('takes path parameters up to the interface bound, answers longer ones 400 and very long ones 414, and bad escapes 400', async () => {
    const { app } = await build();
    // 150 characters: past Fastify's default of 100, within the interface's 200.
    expectError(await app.inject({ method: 'GET', url: `/v1/collections/${'a'.repeat(150)}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
    expectError(await app.inject({ method: 'GET', url: `/v1/collections/${'a'.repeat(201)}` }), 400, { name: 'ValidationError', code: 1003, propertyName: 'contract' });
    expectError(await app.inject({ method: 'GET', url: `/v1/collections/${'a'.repeat(5000)}` }), 414, { name: 'ValidationError', code: 1003, propertyName: 'path' });
    expectError(await app.inject({ method: 'GET', url: '/v1/collections/%E0%A4%A' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'path' });
  });
});

describe('the error handler never fails', () => {
  it('answers the fixed 500 error object when the error cannot be rendered, and maps an error that throws when read', async () => {
    const { app } = await build();
    // Routes of the test only: each names a public operation of the permission table (docs/api.md#roles-and-scopes).
    const config = { operation: 'GET /healthz' };
    // An error whose rendering throws (JSON cannot serialize a BigInt).
    app.get('/test/unrenderable', { config }, async () => {
      throw new ApiError(400, [{ name: 'ValidationError', message: 'x', code: 1002, propertyValue: 10n as never }]);
    });
    // An error whose properties throw when the handler reads them.
    app.get('/test/hostile', { config }, async () => {
      throw Object.defineProperty(new Error('x'), 'validation', { get: () => { throw new Error('boom'); } });
    });
    for (const url of ['/test/unrenderable', '/test/hostile']) {
      expectError(await app.inject({ method: 'GET', url }), 500, { name: 'InternalError', code: 5001 });
    }
  });
});

describe('over a real socket', () => {
  const servers: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()!.close();
  });

  const listenFor = async (requestTimeoutMs?: number) => {
    const server = await listen(requestTimeoutMs);
    servers.push(server);
    return server.port;
  };

  it('answers headers too large 431 and a malformed request 400 with the error object', async () => {
    const port = await listenFor();
    const big = parse(String(await exchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`])));
    expect(big.status).toBe(431);
    expect(big.body.errors[0]).toMatchObject({ name: 'ValidationError', code: 1003 });
    expect(big.body.requestId).toBe(big.requestId);
    const bad = parse(String(await exchange(port, ['NOT A REQUEST\r\n\r\n'])));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ name: 'ValidationError', code: 1005 });
  });

  it('times out a body sent too slowly with 408 and the error object', async () => {
    const port = await listenFor(600);
    const body = '{"grant_type":"client_credentials"}';
    const chunks = [`POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, ...body.split('')];
    const raw = await exchange(port, chunks, 100);
    const answer = parse(String(raw));
    expect(answer.status).toBe(408);
    expect(answer.body.errors[0]).toMatchObject({ name: 'ValidationError', code: 1003, propertyName: 'request' });
    // The server cut the request before the client had sent all of its body.
    expect(raw.written).toBeLessThan(chunks.length);
  });
});
