/**
 * Holding items for review (issue 37 point 1; docs/filters.md#hold-for-review), end to end: a
 * real feed (test/fixtures/rss) served on 127.0.0.1, an input that publishes at once governed by
 * a set with `action: "hold"`, collected with `refreshInput`: the items the set matches enter the
 * queue unpublished with `held` (no rejection recorded), the queue's `held` filter reads them,
 * publishing one clears its hold; the dry run names the action; applying a holding set unpublishes
 * and holds published items (counted as `held`), and its revert releases them. The attacks: an
 * unknown action (400 naming `action`), an unknown `held` value (400), a held item never shown
 * on the public content read. And a scripted burst of the same text from 30 authors: a high
 * spam score, held by a set `spam > 0.7` (issue 37 point 4).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { ingestPushed } from '../../src/collect/ingest.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { loadConfig } from '../../src/config.ts';
import { build, buildItem, buildTenant, expectError, type TestContext, inputRow } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';

const feed = readFileSync(new URL('../fixtures/rss/guardian-rss2-media-content.rss', import.meta.url));
const services = loadConfig({}).services;
const fetcher = createFetcher({ allowPrivate: true });

let server: SourceServer;
let ctx: TestContext;
let tenant: Awaited<ReturnType<typeof buildTenant>>;

beforeAll(async () => {
  server = await startSourceServer((req) => (req.url === '/guardian' ? { status: 200, headers: { 'content-type': 'application/xml' }, body: feed } : { status: 404 }));
});
beforeEach(async () => {
  ctx = await build();
  tenant = await buildTenant(ctx.db);
});
afterAll(async () => {
  await fetcher.close();
  await server.close();
});

type Json = Record<string, any>;

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const response = await ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${tenant.token}`, ...(payload ? { payload: payload as Json } : {}) });
  return { status: response.statusCode, body: response.body ? response.json() : undefined, response };
}

async function create(path: string, payload: Json): Promise<Json> {
  const { status, body } = await api('POST', path, { contractId: tenant.contract.id, ...payload });
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

const poll = async (id: string) => refreshInput(ctx.db, (await inputRow(ctx.db, id))!, { fetch: fetcher, services, pollInterval: 300 });
const always = { operator: 'exists', field: 'id' };
const trump = { operator: 'pattern', field: 'title', value: '/trump/i' };
const queue = async (extra = '') => (await api('GET', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=200${extra}`)).body as Json[];

describe('a filter set that holds', () => {
  it('holds the items it matches unpublished with their reason, records no rejection, and publishing releases them', async () => {
    const set = await create('/collection/sets', { name: 'hold Trump', preCondition: always, rules: [trump], action: 'hold' });
    expect(set.action).toBe('hold');
    const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id, filterId: set._id, display: true });
    await poll(input._id);

    const all = await queue();
    const held = await queue('&held=true');
    expect(held.length).toBeGreaterThan(1);
    for (const item of held) {
      expect(item.title).toMatch(/trump/i);
      expect(item).toMatchObject({ state: 'unpublished', held: { set: { id: set._id, name: 'hold Trump' }, rule: 0, reason: 'rule 0: title matches /trump/i' } });
    }
    // The others were published at once (the input's display), without `held`.
    const others = await queue('&held=false');
    expect(others.length + held.length).toBe(all.length);
    expect(others.every((item) => item.state === 'published' && item.held === undefined)).toBe(true);
    // Held is no rejection.
    expect((await api('GET', `/collection/inputs/${input._id}/rejections`)).body).toEqual([]);
    // Never on the public read.
    const content = (await api('GET', `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=100`)).body as Json[];
    expect(content.map((item) => item.id)).not.toContain(held[0]!.id);

    // Publishing one releases it from the hold.
    const chosen = held[0]!;
    const published = await api('PATCH', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${encodeURIComponent(chosen.id)}`, { state: 'published' });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect((await queue('&held=true')).map((item) => item.id)).not.toContain(chosen.id);
    const now = (await queue()).find((item) => item.id === chosen.id)!;
    expect(now.state).toBe('published');
    expect(now.held).toBeUndefined();
  });

  it('the dry run and a filter application show the action; the revert releases what the application held', async () => {
    const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id, display: true });
    await poll(input._id);
    const set = await create('/collection/sets', { name: 'hold Trump', preCondition: always, rules: [trump], action: 'hold' });

    const dry = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: set._id, collectionId: tenant.collection.id, since: 0 });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const matched = (dry.body.results as Json[]).filter((r) => !r.accepted);
    expect(matched.length).toBeGreaterThan(1);
    expect(matched.every((r) => r.action === 'hold')).toBe(true);
    expect(dry.body.hits).toEqual([{ set: { id: set._id, name: 'hold Trump' }, rule: 0, action: 'hold', count: matched.length }]);
    const unsaved = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, set: { preCondition: always, rules: [trump] }, items: [{ id: 'x_1', title: 'Trump' }] });
    expect(unsaved.body.results[0]).toMatchObject({ accepted: false, action: 'reject' });

    const applied = await api('POST', '/collection/filters/apply', { contractId: tenant.contract.id, filterId: set._id, collectionId: tenant.collection.id });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body).toMatchObject({ rejected: 0, held: matched.length, unpublished: matched.length, auditId: expect.any(String) });
    const held = await queue('&held=true');
    expect(held.map((item) => item.id).sort()).toEqual(matched.map((r) => r.id).sort());
    expect(held.every((item) => item.state === 'unpublished' && item.held.set.id === set._id)).toBe(true);

    const reverted = await api('POST', `/collection/audit/${applied.body.auditId}/revert`);
    expect(reverted.status, JSON.stringify(reverted.body)).toBe(201);
    expect(await queue('&held=true')).toEqual([]);
  });

  it('refuses an unknown action and an unknown held filter (400 naming them); a set defaults to reject', async () => {
    const plain = await create('/collection/sets', { name: 'plain', preCondition: always, rules: [trump] });
    expect(plain.action).toBe('reject');
    expectError((await api('POST', '/collection/sets', { contractId: tenant.contract.id, name: 'x', preCondition: always, rules: [], action: 'delete' })).response, 400, { name: 'ValidationError', code: 1004, propertyName: 'action' });
    expectError((await api('PATCH', `/collection/sets/${plain._id}`, { action: 'hide' })).response, 400, { name: 'ValidationError', code: 1004, propertyName: 'action' });
    const changed = await api('PATCH', `/collection/sets/${plain._id}`, { action: 'hold' });
    expect(changed.body.action).toBe('hold');
    expectError((await api('GET', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&held=maybe`)).response, 400, { name: 'ValidationError', code: 1004, propertyName: 'held' });
  });
});

describe('spam score (docs/filters.md#spam-score)', () => {
  it('a burst of the same text from 30 authors scores high and is held by a set spam > 0.7 with action hold; other items pass', async () => {
    const set = await create('/collection/sets', { name: 'hold spam', preCondition: always, rules: [{ operator: 'gt', field: 'spam', value: 0.7 }], action: 'hold' });
    const created = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id, filterId: set._id, display: true });
    const input = (await inputRow(ctx.db, created._id))!;
    const text = 'Win a free cruise today, click the link in our profile now';
    const date = new Date().toISOString();
    const burst = Array.from({ length: 30 }, (_, i) => buildItem({ id: `rss_burst${i}`, title: '', text, date, author: { name: `Bot ${i}`, username: `bot${i}`, userid: `b${i}`, url: null } }));
    const plain = buildItem({ id: 'rss_plain', title: '', text: 'The council met today to discuss the harbour budget for next year', date });
    expect(await ingestPushed(ctx.db, input, [...burst, plain], {})).toBe(31);

    const held = await queue('&held=true');
    expect(held.map((item) => item.id).sort()).toEqual(burst.map((item) => item.id).sort());
    expect(held[0]).toMatchObject({ state: 'unpublished', held: { set: { id: set._id, name: 'hold spam' }, rule: 0, reason: expect.stringMatching(/^rule 0: spam [0-9.]+ is greater than 0\.7$/) } });
    const others = await queue('&held=false');
    expect(others.map((item) => `${item.id}:${item.state}`)).toEqual(['rss_plain:published']);
  });
});
