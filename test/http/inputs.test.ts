/**
 * Inputs on the management API (docs/api.md#inputs, docs/api.md#input-status): create one or
 * several (all or nothing), list, get, replace; token, contract access and validation errors.
 */
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { grant } from '../../src/store/contracts.ts';
import { createCollection } from '../../src/store/collections.ts';
import { build, buildClient, buildTenant, expectError, changeInput } from '../helper.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

function inputBody(tenant: Tenant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: tenant.collection.id, ...overrides };
}

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const other = await buildTenant(ctx.db, 'Other Corp');
  const post = (body: unknown, token = tenant.token) =>
    ctx.app.inject({ method: 'POST', url: `/collection/inputs?access_token=${encodeURIComponent(token)}`, payload: body as object });
  const list = (query: string, token = tenant.token) =>
    ctx.app.inject({ method: 'GET', url: `/collection/inputs?${query}${query ? '&' : ''}access_token=${encodeURIComponent(token)}` });
  const get = (id: string, token = tenant.token) => ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}?access_token=${encodeURIComponent(token)}` });
  const put = (id: string, body: unknown, token = tenant.token) =>
    ctx.app.inject({ method: 'PUT', url: `/collection/inputs/${id}?access_token=${encodeURIComponent(token)}`, payload: body as object });
  // filterId must name a filter set or chain of the contract (docs/api.md#inputs).
  const set = await ctx.app.inject({
    method: 'POST',
    url: `/collection/sets?access_token=${encodeURIComponent(tenant.token)}`,
    payload: { name: 'Spam', contractId: tenant.contract.id, rules: [], preCondition: { operator: 'exists', field: 'text', not: false } },
  });
  const filterId: string = set.json()._id;
  return { ...ctx, tenant, other, post, list, get, put, filterId };
}

describe('POST /collection/inputs', () => {
  it('creates one input → 201 with every field of §2.1 and §2.3 and a status object', async () => {
    const { post, tenant } = await setup();
    const before = Date.now();
    const res = await post(inputBody(tenant, { service: 'youtube', type: 'channel', input: 'UC_x5XG1OV2P6uZZ5FSM9Ttw' }));
    expect(res.statusCode, res.body).toBe(201);
    const input = res.json();
    expect(Object.keys(input).sort()).toEqual(
      ['_id', 'active', 'collectionId', 'contractId', 'created', 'createdBy', 'display', 'input', 'lastModified', 'lastModifiedBy', 'service', 'status', 'type'].sort(),
    );
    expect(input._id).toMatch(/^[0-9a-f]{24}$/);
    expect(input).toMatchObject({
      service: 'youtube',
      type: 'channel',
      input: 'UC_x5XG1OV2P6uZZ5FSM9Ttw',
      contractId: tenant.contract.id,
      collectionId: tenant.collection.id,
      display: true,
      active: true,
      createdBy: tenant.consumer.name,
      lastModifiedBy: tenant.consumer.name,
    });
    expect(input).not.toHaveProperty('filterId');
    expect(input).not.toHaveProperty('latitude');
    expect(input.created).toMatch(ISO_MS);
    expect(input.lastModified).toMatch(ISO_MS);
    expect(Date.parse(input.created)).toBeGreaterThanOrEqual(before);
    expect(input.status).toEqual({ lastRun: null, lastSuccess: null, lastError: null, nextRun: expect.stringMatching(ISO_MS), collected: 0, rejected: 0, warnings: [], feed: { mode: 'poll', since: input.created, lastEvent: null } });
    expect(Math.abs(Date.parse(input.status.nextRun) - Date.now())).toBeLessThan(10_000);
  });

  it('stores optional fields: filterId, display false, active false, location fields for type location', async () => {
    const { post, get, tenant, filterId: FILTER_ID } = await setup();
    const res = await post(
      inputBody(tenant, { service: 'instagram', type: 'location', input: 'Berlin', latitude: 52.52, longitude: 13.405, radius: 500, filterId: FILTER_ID, display: false, active: false }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({ filterId: FILTER_ID, latitude: 52.52, longitude: 13.405, radius: 500, display: false, active: false });
    const read = await get(created._id);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
  });

  it('ignores unknown fields and does not echo them back', async () => {
    const { post, get, tenant } = await setup();
    const res = await post(inputBody(tenant, { colour: 'blue', _id: 'ffffffffffffffffffffffff', status: { collected: 99 } }));
    expect(res.statusCode, res.body).toBe(201);
    const input = res.json();
    expect(input).not.toHaveProperty('colour');
    expect(input._id).not.toBe('ffffffffffffffffffffffff');
    expect(input.status.collected).toBe(0);
    expect((await get(input._id)).json()).not.toHaveProperty('colour');
  });

  it('creates an array → 201 array, in the order sent', async () => {
    const { post, list, tenant } = await setup();
    const bodies = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'].map((input) => inputBody(tenant, { input }));
    const res = await post(bodies);
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    expect(Array.isArray(created)).toBe(true);
    expect(created.map((i: { input: string }) => i.input)).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']);
    expect(new Set(created.map((i: { _id: string }) => i._id)).size).toBe(6);
    const listed = await list(`contract_id=${tenant.contract.id}`);
    expect(listed.json()).toHaveLength(6);
  });

  it('rejects an array with one bad element → 400 naming [i].property, and stores nothing', async () => {
    const { post, list, tenant } = await setup();
    const res = await post([inputBody(tenant), inputBody(tenant, { input: 'ok' }), inputBody(tenant, { service: 'myspace' }), inputBody(tenant, { type: 'page' })]);
    expectError(res, 400, { name: 'ValidationError', code: 1004, propertyName: '[2].service' }, { name: 'ValidationError', code: 1004, propertyName: '[3].type' });
    const listed = await list(`contract_id=${tenant.contract.id}`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([]);
  });

  it('rejects an array where one element names a foreign collection → 403, and stores nothing', async () => {
    const { post, list, tenant, other } = await setup();
    const res = await post([inputBody(tenant), inputBody(tenant, { collectionId: other.collection.id })]);
    expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: '[1].collectionId' });
    expect((await list(`contract_id=${tenant.contract.id}`)).json()).toEqual([]);
  });

  it('rejects an empty array with 400', async () => {
    const { post } = await setup();
    expectError(await post([]), 400, { name: 'ValidationError', code: 1003, propertyName: 'body' });
  });

  it('creates 1000 inputs at once, and refuses 1001 with 400 naming body, storing none', async () => {
    const { post, list, tenant } = await setup();
    const feeds = (count: number) => Array.from({ length: count }, (_, i) => inputBody(tenant, { service: 'rss', type: 'feed', input: `https://example.com/${i}.xml` }));
    expectError(await post(feeds(1001)), 400, { name: 'ValidationError', code: 1003, propertyName: 'body' });
    expect((await list(`contract_id=${tenant.contract.id}`)).json()).toEqual([]);
    const res = await post(feeds(1000));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().map((input: { input: string }) => input.input)).toEqual(feeds(1000).map((body) => body.input));
  });

  it('answers a missing, unknown or expired token with 401', async () => {
    const { app, db, tenant, post } = await setup();
    const entry = { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' };
    expectError(await app.inject({ method: 'POST', url: '/collection/inputs', payload: inputBody(tenant) }), 401, entry);
    expectError(await post(inputBody(tenant), 'not-a-token'), 401, entry);
    const { access_token: expired } = await issueTokens(db, tenant.consumer.id, { ttlSeconds: 60, withRefresh: false, now: Date.now() - 3600_000 });
    expectError(await post(inputBody(tenant), expired), 401, entry);
  });

  it('answers a contract the client was not granted with 403, and stores nothing', async () => {
    const { post, tenant, other, list } = await setup();
    const res = await post(inputBody(tenant, { contractId: other.contract.id, collectionId: other.collection.id }));
    expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
    expect((await list(`contract_id=${other.contract.id}`, other.token)).json()).toEqual([]);
  });

  it('answers a collection of another contract with 403 naming collectionId', async () => {
    const { post, tenant, other } = await setup();
    const res = await post(inputBody(tenant, { collectionId: other.collection.id }));
    const body = expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collectionId' });
    expect(JSON.stringify(body)).not.toContain(other.collection.name);
  });

  it('answers an unknown collection with 404 naming collectionId', async () => {
    const { post, tenant } = await setup();
    expectError(await post(inputBody(tenant, { collectionId: 'bbbbbbbbbbbbbbbbbbbbbbbb' })), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collectionId' });
  });

  it('validates the body: one entry per offending property with the codes of docs/api.md#error-codes', async () => {
    const { app, post, tenant } = await setup();
    const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

    expectError(await post(inputBody(tenant, { service: 'myspace' })), 400, v(1004, 'service'));
    expectError(await post(inputBody(tenant, { service: 'facebook', type: 'tag' })), 400, v(1004, 'type'));
    expectError(await post({ service: 'twitter', contractId: tenant.contract.id }), 400, v(1001, 'type'), v(1001, 'input'), v(1001, 'collectionId'));
    expectError(await post(inputBody(tenant, { contractId: undefined })), 400, v(1001, 'contractId'));
    expectError(await post(inputBody(tenant, { input: 42 })), 400, v(1002, 'input'));
    expectError(await post(inputBody(tenant, { display: 'yes' })), 400, v(1002, 'display'));
    expectError(await post(inputBody(tenant, { collectionId: 'nope' })), 400, v(1005, 'collectionId'));
    expectError(await post(inputBody(tenant, { filterId: 'XYZ' })), 400, v(1005, 'filterId'));
    const notAnObject = await app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(tenant.token)}`,
      headers: { 'content-type': 'application/json' },
      payload: '"just a string"',
    });
    expectError(notAnObject, 400, v(1002, '(body)'));

    const location = { service: 'twitter', type: 'location', input: 'Paris', latitude: 48.85, longitude: 2.35, radius: 1000 };
    expectError(await post(inputBody(tenant, { ...location, latitude: 91 })), 400, v(1003, 'latitude'));
    expectError(await post(inputBody(tenant, { ...location, latitude: -90.5 })), 400, v(1003, 'latitude'));
    expectError(await post(inputBody(tenant, { ...location, longitude: 180.1 })), 400, v(1003, 'longitude'));
    expectError(await post(inputBody(tenant, { ...location, radius: 0 })), 400, v(1003, 'radius'));
    expectError(await post(inputBody(tenant, { ...location, radius: 50_001 })), 400, v(1003, 'radius'));
    // Location fields are required for type location …
    expectError(await post(inputBody(tenant, { service: 'twitter', type: 'location', input: 'Paris' })), 400, v(1001, 'latitude'), v(1001, 'longitude'), v(1001, 'radius'));
    expectError(await post(inputBody(tenant, { ...location, radius: undefined })), 400, v(1001, 'radius'));
    // … and refused for every other type.
    expectError(await post(inputBody(tenant, { latitude: 10 })), 400, v(1002, 'latitude'));
    expectError(await post(inputBody(tenant, { latitude: 10, longitude: 10, radius: 10 })), 400, v(1002, 'latitude'), v(1002, 'longitude'), v(1002, 'radius'));

    // rss inputs must be absolute http(s) URLs.
    expectError(await post(inputBody(tenant, { service: 'rss', type: 'feed', input: 'example.com/feed.xml' })), 400, v(1005, 'input'));
    expectError(await post(inputBody(tenant, { service: 'rss', type: 'feed', input: 'ftp://example.com/feed.xml' })), 400, v(1005, 'input'));
    const rss = await post(inputBody(tenant, { service: 'rss', type: 'feed', input: 'https://example.com/feed.xml' }));
    expect(rss.statusCode, rss.body).toBe(201);

    // A valid location input is accepted.
    expect((await post(inputBody(tenant, location))).statusCode).toBe(201);
  });

  it('answers malformed JSON with 400 ValidationError', async () => {
    const { app, tenant } = await setup();
    const res = await app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(tenant.token)}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"service": "twitter", ',
    });
    expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName: 'body' });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const { app, tenant } = await setup();
    const res = await app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(tenant.token)}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(inputBody(tenant, { input: 'x'.repeat(1024 * 1024 + 10) })),
    });
    expectError(res, 413, { name: 'ValidationError', code: 1003, propertyName: 'body' });
  });
});

describe('GET /collection/inputs', () => {
  it('lists by contract_id and by collection_id', async () => {
    const { db, post, list, tenant, other } = await setup();
    const second = await createCollection(db, tenant.contract.id, { name: 'Sports' }, 'test');
    const a = (await post(inputBody(tenant, { input: 'a' }))).json();
    const b = (await post(inputBody(tenant, { input: 'b', collectionId: second.id }))).json();
    const c = (await post(inputBody(tenant, { input: 'c' }))).json();
    expect((await post(inputBody(other, { input: 'foreign' }), other.token)).statusCode).toBe(201);

    const all = await list(`contract_id=${tenant.contract.id}`);
    expect(all.statusCode).toBe(200);
    expect(all.json().map((i: { _id: string }) => i._id).sort()).toEqual([a._id, b._id, c._id].sort());
    expect(all.json().find((i: { _id: string }) => i._id === a._id)).toEqual(a);

    const inWorld = await list(`contract_id=${tenant.contract.id}&collection_id=${tenant.collection.id}`);
    expect(inWorld.json().map((i: { _id: string }) => i._id).sort()).toEqual([a._id, c._id].sort());
    const inSports = await list(`contract_id=${tenant.contract.id}&collection_id=${second.id}`);
    expect(inSports.json().map((i: { input: string }) => i.input)).toEqual(['b']);
  });

  it('answers an empty contract with an empty array', async () => {
    const { list, tenant } = await setup();
    const res = await list(`contract_id=${tenant.contract.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('answers a missing or malformed contract_id with 400 naming contract_id', async () => {
    const { list, tenant } = await setup();
    expectError(await list(''), 400, { name: 'ValidationError', code: 1001, propertyName: 'contract_id' });
    expectError(await list('contract_id=acme'), 400, { name: 'ValidationError', code: 1005, propertyName: 'contract_id' });
    expectError(await list(`contract_id=${tenant.contract.id}&collection_id=zzz`), 400, { name: 'ValidationError', code: 1005, propertyName: 'collection_id' });
  });

  it('answers 401 without a token, 403 for a contract not granted, 403/404 for a foreign/unknown collection_id', async () => {
    const { app, list, tenant, other } = await setup();
    expectError(await app.inject({ method: 'GET', url: `/collection/inputs?contract_id=${tenant.contract.id}` }), 401, {
      name: 'AuthenticationError',
      code: 2001,
      propertyName: 'access_token',
    });
    expectError(await list(`contract_id=${other.contract.id}`), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract_id' });
    expectError(await list(`contract_id=${tenant.contract.id}&collection_id=${other.collection.id}`), 403, {
      name: 'ForbiddenError',
      code: 3001,
      propertyName: 'collection_id',
    });
    expectError(await list(`contract_id=${tenant.contract.id}&collection_id=cccccccccccccccccccccccc`), 404, {
      name: 'NotFoundError',
      code: 4001,
      propertyName: 'collection_id',
    });
  });
});

describe('GET /collection/inputs/{id}', () => {
  it('returns the input', async () => {
    const { post, get, tenant } = await setup();
    const created = (await post(inputBody(tenant))).json();
    const res = await get(created._id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it('answers a malformed id with 400 and an unknown well-formed id with 404', async () => {
    const { get } = await setup();
    expectError(await get('123'), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
    expectError(await get('AAAAAAAAAAAAAAAAAAAAAAAA'), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
    expectError(await get('dddddddddddddddddddddddd'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
  });

  it("answers another tenant's input with 403 and none of its data", async () => {
    const { post, get, put, other } = await setup();
    const foreign = (await post(inputBody(other, { input: 'secret-keyword-xyz' }), other.token)).json();
    for (const res of [await get(foreign._id), await put(foreign._id, { service: 'twitter', type: 'tag', input: 'hijack' })]) {
      const body = expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
      const text = JSON.stringify(body);
      expect(text).not.toContain('secret-keyword-xyz');
      expect(text).not.toContain(other.collection.id);
      expect(text).not.toContain(other.contract.id);
      expect(text).not.toContain('"service"');
    }
    // The PUT changed nothing.
    expect((await get(foreign._id, other.token)).json()).toEqual(foreign);
  });

  it('answers 401 without a valid token', async () => {
    const { app, post, tenant } = await setup();
    const created = (await post(inputBody(tenant))).json();
    expectError(await app.inject({ method: 'GET', url: `/collection/inputs/${created._id}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await app.inject({ method: 'GET', url: `/collection/inputs/${created._id}`, headers: { authorization: 'Bearer nope' } }), 401, {
      name: 'AuthenticationError',
      code: 2001,
      propertyName: 'access_token',
    });
  });
});

describe('PUT /collection/inputs/{id}', () => {
  it('replaces the updatable fields and records who changed it when', async () => {
    const { db, post, put, get, tenant, filterId: FILTER_ID } = await setup();
    const editor = await buildClient(db, 'Editor robot');
    await grant(db, editor.consumer.id, tenant.contract.id);
    const second = await createCollection(db, tenant.contract.id, { name: 'Sports' }, 'test');
    const created = (await post(inputBody(tenant, { filterId: FILTER_ID }))).json();
    expect(created.filterId).toBe(FILTER_ID);
    // Push the schedule far out so that the reset is visible.
    await changeInput(db, created._id, { nextRunAt: Date.now() + 86_400_000 });
    await new Promise((resolve) => setTimeout(resolve, 5));

    const res = await put(created._id, { service: 'youtube', type: 'keyword', input: 'cats', collectionId: second.id, display: false, active: true }, editor.token);
    expect(res.statusCode, res.body).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({
      _id: created._id,
      service: 'youtube',
      type: 'keyword',
      input: 'cats',
      contractId: tenant.contract.id,
      collectionId: second.id,
      display: false,
      active: true,
      created: created.created,
      createdBy: tenant.consumer.name,
      lastModifiedBy: 'Editor robot',
    });
    expect(updated).not.toHaveProperty('filterId'); // a PUT without filterId clears it
    expect(updated.lastModified).toMatch(ISO_MS);
    expect(Date.parse(updated.lastModified)).toBeGreaterThan(Date.parse(created.lastModified));
    expect(Math.abs(Date.parse(updated.status.nextRun) - Date.now())).toBeLessThan(10_000);
    expect((await get(created._id)).json()).toEqual(updated);

    // Deactivating: active false is stored, and an inactive input has no next run.
    const off = await put(created._id, { service: 'youtube', type: 'keyword', input: 'cats', active: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ active: false, display: true, collectionId: second.id, lastModifiedBy: tenant.consumer.name });
    expect(off.json().status.nextRun).toBeNull();
  });

  it('refuses to change contractId', async () => {
    const { post, put, get, tenant, other } = await setup();
    const created = (await post(inputBody(tenant))).json();
    expectError(await put(created._id, { service: 'twitter', type: 'tag', input: 'news', contractId: other.contract.id }), 400, {
      name: 'ValidationError',
      code: 1005,
      propertyName: 'contractId',
    });
    // Sending the same contractId is fine.
    expect((await put(created._id, { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id })).statusCode).toBe(200);
    expect((await get(created._id)).json().contractId).toBe(tenant.contract.id);
  });

  it('validates the replacement like a creation', async () => {
    const { post, put, tenant, other } = await setup();
    const created = (await post(inputBody(tenant))).json();
    const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });
    expectError(await put(created._id, { service: 'twitter', type: 'tag' }), 400, v(1001, 'input'));
    expectError(await put(created._id, { service: 'twitter', type: 'page', input: 'x' }), 400, v(1004, 'type'));
    expectError(await put(created._id, { service: 'twitter', type: 'location', input: 'x', latitude: 100, longitude: 0, radius: 5 }), 400, v(1003, 'latitude'));
    expectError(await put(created._id, { service: 'twitter', type: 'tag', input: 'x', radius: 5 }), 400, v(1002, 'radius'));
    expectError(await put(created._id, { service: 'rss', type: 'feed', input: 'not a url' }), 400, v(1005, 'input'));
    expectError(await put(created._id, { service: 'twitter', type: 'tag', input: 'x', collectionId: other.collection.id }), 403, {
      name: 'ForbiddenError',
      code: 3001,
      propertyName: 'collectionId',
    });
    expectError(await put(created._id, { service: 'twitter', type: 'tag', input: 'x', collectionId: 'eeeeeeeeeeeeeeeeeeeeeeee' }), 404, {
      name: 'NotFoundError',
      code: 4001,
      propertyName: 'collectionId',
    });
  });

  it('answers malformed and unknown ids with 400 and 404', async () => {
    const { put } = await setup();
    const body = { service: 'twitter', type: 'tag', input: 'x' };
    expectError(await put('xyz', body), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
    expectError(await put('ffffffffffffffffffffffff', body), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
  });
});
