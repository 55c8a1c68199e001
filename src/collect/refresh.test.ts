/**
 * The collector against a real SQLite file and a local HTTP server standing in for the sources:
 * outcomes recorded in the input's status, backoff after failures, Retry-After honoured, the
 * display flag, the private-address guard, and the scheduler picking up new inputs.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant, type TestContext, inputRow } from '../../test/helper.ts';
import { loadConfig } from '../config.ts';
import { storeItems } from '../store/items/write.ts';
import { createFetcher } from './fetch.ts';
import { nextDelaySeconds, nextPollDelayMs, refreshInput, SOURCE_POLL_MIN_MS } from './refresh.ts';
import { startCollector } from './scheduler.ts';
import { ownsEntries } from '../services/table.ts';

const guardian = readFileSync(new URL('../../test/fixtures/rss/guardian-rss2-media-content.rss', import.meta.url));
const heise = readFileSync(new URL('../../test/fixtures/rss/heise-atom.atom', import.meta.url));
const userland = readFileSync(new URL('../../test/fixtures/rss/userland-rss092-description-only.rss', import.meta.url));
/** What `/changing` serves next: a whole feed with an ETag, or the same feed cut short. */
let changing: 'whole' | 'truncated' = 'whole';
/** A feed that names no language: one German entry, one too short to tell. */
const unnamed = `<?xml version="1.0"?><rss version="2.0"><channel><title>Lokal</title><link>https://lokal.example/</link>
<item><guid>de</guid><title>Neue Brücke über den Fluss</title><description>Die Stadt hat heute beschlossen, dass die alte Brücke im nächsten Jahr durch einen Neubau ersetzt wird.</description></item>
<item><guid>short</guid><title>ok</title></item></channel></rss>`;

let server: Server;
let base: string;
let hits: Record<string, number> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    if (path === '/guardian') return void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(guardian);
    if (path === '/heise') return void res.writeHead(200, { 'content-type': 'application/atom+xml' }).end(heise);
    if (path === '/userland') return void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(userland);
    if (path === '/changing') {
      const body = changing === 'whole' ? heise : heise.subarray(0, Math.floor(heise.length / 2));
      return void res.writeHead(200, { 'content-type': 'application/atom+xml', etag: changing === 'whole' ? '"v1"' : '"v2"' }).end(body);
    }
    if (path === '/unnamed') return void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(unnamed);
    if (path === '/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>Hello</body></html>');
    if (path === '/limited') return void res.writeHead(429, { 'retry-after': '7200' }).end();
    if (path === '/slow') return; // never answers
    res.writeHead(404).end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function createInput(ctx: TestContext, tenant: Awaited<ReturnType<typeof buildTenant>>, path: string, extra: Record<string, unknown> = {}) {
  const response = await ctx.app.inject({
    method: 'POST',
    url: `/collection/inputs?access_token=${tenant.token}`,
    payload: { service: 'rss', type: 'feed', input: base + path, contractId: tenant.contract.id, collectionId: tenant.collection.id, ...extra },
  });
  expect(response.statusCode).toBe(201);
  return (await inputRow(ctx.db, response.json()._id))!;
}

async function queue(ctx: TestContext, tenant: Awaited<ReturnType<typeof buildTenant>>) {
  const response = await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${tenant.token}`);
  return response.json() as { id: string; state: string; title?: string; language?: string }[];
}

describe('nextDelaySeconds', () => {
  it.each([
    [300, 0, 0, 300],
    [300, 1, 0, 600],
    [300, 2, 0, 1200],
    [300, 3, 0, 2400],
    [300, 4, 0, 3600],
    [300, 10, 0, 3600],
    [7200, 3, 0, 7200],
    [300, 1, 7_200_000, 7200],
    [300, 0, 1500, 300],
  ])('poll every %i s, %i failures, Retry-After %i ms → %i s', (interval, failures, retryAfter, expected) => {
    expect(nextDelaySeconds(interval, failures, retryAfter)).toBe(expected);
  });
});

describe('nextPollDelayMs: a source\'s own wait (CollectResult.pollAfterMs) replaces the interval, held between 5 s and a day', () => {
  it.each<[string, number | undefined, number]>([
    ['none: the interval', undefined, 300_000],
    ['8 s (YouTube live chat)', 8000, 8000],
    ['longer than the interval: as the source says', 600_000, 600_000],
    ['0: the minimum', 0, SOURCE_POLL_MIN_MS],
    ['negative: the minimum', -1000, SOURCE_POLL_MIN_MS],
    ['a fraction: rounded up', 5000.2, 5001],
    ['not a number: the interval', Number.NaN, 300_000],
    ['infinite: the interval', Number.POSITIVE_INFINITY, 300_000],
    ['ten years: a day at most', 10 * 365 * 86_400_000, 86_400_000],
  ])('%s', (_name, pollAfterMs, delay) => expect(nextPollDelayMs(300, pollAfterMs)).toBe(delay));
});

describe('refreshInput', () => {
  const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 500 });
  afterAll(() => fetcher.close());

  it("reports a feed's dropped and undated entries in the input's status (HTTP API), and only the last poll's", async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/userland');
    const status = async () => {
      const res = await ctx.app.inject(`/collection/inputs/${input.id}?access_token=${tenant.token}`);
      expect(res.statusCode).toBe(200);
      return res.json().status as Record<string, unknown>;
    };
    expect((await status()).warnings).toEqual([]);
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 })).toBe(4);
    expect(await status()).toMatchObject({
      lastError: null,
      collected: 4,
      warnings: [
        { code: 'dropped', count: 1, message: '1 entry dropped: no guid, link, title, description or media to identify it' },
        { code: 'undated', count: 4, message: "4 entries have no readable date: dated with the feed's date" },
      ],
    });
    // Another tenant sees neither the input nor its status.
    const other = await buildTenant(ctx.db, 'Other Corp');
    expect((await ctx.app.inject(`/collection/inputs/${input.id}?access_token=${other.token}`)).statusCode).toBe(403);

    // Pointed at a clean feed, the next poll replaces the warnings.
    const put = await ctx.app.inject({ method: 'PUT', url: `/collection/inputs/${input.id}?access_token=${tenant.token}`,
      payload: { service: 'rss', type: 'feed', input: `${base}/heise`, contractId: tenant.contract.id } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().status.warnings).toEqual([]);
    await refreshInput(ctx.db, (await inputRow(ctx.db, input.id))!, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 });
    expect(await status()).toMatchObject({ collected: 19, warnings: [] });
  });

  it('fails the poll on a truncated feed and keeps the cursor and the stored items', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    changing = 'whole';
    const input = await createInput(ctx, tenant, '/changing');
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 })).toBe(15);
    const polled = (await inputRow(ctx.db, input.id))!;
    expect(JSON.parse(polled.sourceState)).toEqual({ etag: '"v1"' });

    changing = 'truncated';
    expect(await refreshInput(ctx.db, polled, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 })).toBe(0);
    const failed = (await inputRow(ctx.db, input.id))!;
    expect(failed).toMatchObject({ failures: 1, collected: 15, sourceState: polled.sourceState, lastSuccess: polled.lastSuccess,
      lastError: 'not a feed: the document ends before its root element is closed (truncated?)' });
    expect((await queue(ctx, tenant)).length).toBe(15);
  });

  it('stores a feed once, records success and schedules the next poll', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/guardian');
    const before = Date.now();
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 300 })).toBe(55);
    const after = (await inputRow(ctx.db, input.id))!;
    expect(after).toMatchObject({ collected: 55, failures: 0, lastError: null });
    expect(after.lastSuccess).not.toBeNull();
    expect(after.nextRunAt).toBeGreaterThanOrEqual(before + 300_000);
    expect((await queue(ctx, tenant)).length).toBe(55);

    // Polled again: the same entries are not stored again, nor counted.
    expect(await refreshInput(ctx.db, after, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 300 })).toBe(0);
    expect((await inputRow(ctx.db, input.id))!.collected).toBe(55);
    expect((await queue(ctx, tenant)).length).toBe(55);
  });

  it.each([
    ['/missing', 'HTTP 404'],
    ['/page', 'not a feed'],
    ['/slow', 'timed out'],
  ])('records the failure of %s and backs off exponentially', async (path, message) => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, path);
    const t0 = Date.now();
    await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 });
    const once = (await inputRow(ctx.db, input.id))!;
    expect(once.lastError).toContain(message);
    expect(once).toMatchObject({ failures: 1, collected: 0, lastSuccess: null });
    expect(once.lastRun).not.toBeNull();
    expect(once.nextRunAt).toBeGreaterThanOrEqual(t0 + 120_000);
    await refreshInput(ctx.db, once, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 });
    const twice = (await inputRow(ctx.db, input.id))!;
    expect(twice.failures).toBe(2);
    expect(twice.nextRunAt).toBeGreaterThanOrEqual(t0 + 240_000);
    const response = await ctx.app.inject(`/collection/inputs/${input.id}?access_token=${tenant.token}`);
    expect(response.json().status.lastError).toContain(message);
  });

  it('does not call a rate-limited source again before its Retry-After', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/limited');
    const t0 = Date.now();
    await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 });
    const after = (await inputRow(ctx.db, input.id))!;
    expect(after.lastError).toContain('429');
    expect(after.nextRunAt).toBeGreaterThanOrEqual(t0 + 7_200_000);
  });

  it('detects the language of items whose source names none, before storing them; the store keeps what it is given', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/unnamed');
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 })).toBe(2);
    const items = await queue(ctx, tenant);
    expect(items.find((item) => item.title === 'Neue Brücke über den Fluss')?.language).toBe('de');
    expect(items.find((item) => item.title === 'ok')).not.toHaveProperty('language');
    // The store itself detects nothing: an item written straight through it keeps no language.
    const german = buildItem({ id: 'rss_direct', text: 'Die Stadt hat heute beschlossen, dass die alte Brücke im nächsten Jahr ersetzt wird.' });
    await ctx.db.transaction().execute((trx) =>
      storeItems(trx, { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: input.id, state: 'published' }, [german], ownsEntries));
    expect((await queue(ctx, tenant)).find((item) => item.id === 'rss_direct')).not.toHaveProperty('language');
  });

  it('queues the items of an input with display false as unpublished', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/heise', { display: false });
    await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 });
    const items = await queue(ctx, tenant);
    expect(items.length).toBe(15);
    expect(items.every((item) => item.state === 'unpublished')).toBe(true);
    const content = await ctx.app.inject(`/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0`);
    expect(content.json()).toEqual([]);
  });

  it('drops the result of a poll when the input changed meanwhile', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/guardian');
    await new Promise((r) => setTimeout(r, 5));
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/collection/inputs/${input.id}?access_token=${tenant.token}`,
      payload: { service: 'rss', type: 'feed', input: `${base}/heise` },
    });
    expect(put.statusCode).toBe(200);
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({}).services, pollInterval: 60 })).toBe(0);
    expect(await queue(ctx, tenant)).toEqual([]);
  });

  it('refuses private addresses unless ALLOW_PRIVATE_FETCH is set', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const input = await createInput(ctx, tenant, '/guardian?guarded');
    const guarded = createFetcher({ allowPrivate: false });
    try {
      await refreshInput(ctx.db, input, { fetch: guarded, services: loadConfig({}).services, pollInterval: 60 });
    } finally {
      await guarded.close();
    }
    expect((await inputRow(ctx.db, input.id))!.lastError).toMatch(/not allowed|blocked|refused/i);
    expect(hits['/guardian?guarded']).toBeUndefined();
  });
});

describe('the scheduler', () => {
  it('polls a new input within a tick, and a failing input does not stop the others', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', POLL_INTERVAL: '300' });
    const tenant = await buildTenant(ctx.db);
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 50);
    try {
      const failing = await createInput(ctx, tenant, '/missing-too');
      const good = await createInput(ctx, tenant, '/heise');
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && !(await inputRow(ctx.db, good.id))!.lastSuccess) await new Promise((r) => setTimeout(r, 50));
      await collector.idle();
      expect((await inputRow(ctx.db, good.id))!).toMatchObject({ collected: 15, lastError: null });
      expect((await inputRow(ctx.db, failing.id))!.lastError).toBe('HTTP 404');
      // Not due again for a while: another tick fetches nothing.
      const heiseHits = hits['/heise'];
      await collector.tick();
      await collector.idle();
      expect(hits['/heise']).toBe(heiseHits);
    } finally {
      await collector.stop();
    }
  });
});
