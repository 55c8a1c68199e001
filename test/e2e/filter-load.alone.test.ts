/**
 * No tenant can stall the service through its filters (docs/filters.md#bounds): tenant A runs
 * the costliest filter the bounds allow (a set of three rules whose patterns, `[ab]{990}`-like
 * and case-insensitive, keep about 200 000 threads alive per character: just under
 * MAX_COMPILED_SIZE) in a dry run over 1 000 items and on a poll of a real feed, both at once,
 * while a second client reads /healthz, tenant B's public content and B's queue over real HTTP
 * on 127.0.0.1. The filter runs in the worker pool: A's dry run answers 400 naming filterId (over
 * its budget), A's poll fails with lastError and stores nothing, and B's requests keep their p99
 * under 100 ms (the bound of issue 14), over every request due while A's work ran (latency
 * counted from when a request was due, so a stall counts for every request it delays).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { loadConfig } from '../../src/config.ts';
import { MAX_COMPILED_SIZE } from '../../src/filter/limits.ts';
import { filterPool } from '../../src/filter/pool.ts';
import { withLanguage } from '../../src/lib/language.ts';
import { build, buildItem, buildTenant, seedItems, inputRow } from '../helper.ts';
import { secondClient as readWhile } from '../second-client.ts';
import { ab } from '../filter-cost.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';

const services = loadConfig({}).services;
/** The second client's pace: one request due every 10 ms. */
const INTERVAL_MS = 10;
/** The bound of issue 14 on the second client's p99 while the worst filter runs. */
const P99_BOUND_MS = 100;
const ATTEMPTS = 5;
const fetcher = createFetcher({ allowPrivate: true });
let server: SourceServer;


const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const feed = `<?xml version="1.0"?><rss version="2.0"><channel><title>ab</title><link>https://ab.example/</link><description>d</description>${Array.from(
  { length: 50 },
  (_, i) => `<item><title>item ${i}</title><link>https://ab.example/${i}</link><guid>https://ab.example/${i}</guid><pubDate>Mon, 23 Nov 2026 06:00:00 GMT</pubDate><description>${esc(ab(2_000, i))}</description></item>`,
).join('')}</channel></rss>`;

beforeAll(async () => {
  server = await startSourceServer(() => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed }));
  // Warm-up, as a running service is after its first poll: the pool's threads and the language
  // model (loaded once, about half a second, on first use) are ready.
  await filterPool().check('warm-up', { kind: 'set', set: { id: 'w', name: 'warm', rules: [], active: true } }, []);
  await withLanguage(buildItem({ id: 'warm-up', text: 'A sentence to load the language model with.' }));
});

afterAll(async () => {
  await fetcher.close();
  await server.close();
});

/** The p-th percentile (0–100) of `values`, nearest rank. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('the worst filter the bounds allow', () => {
  it('runs off the event loop: /healthz and another contract keep p99 under 100 ms during a dry run and a poll', { timeout: 180_000 }, async () => {
    // The second client sends about 100 requests a second over several attempts, more than the API
    // rate limits allow one consumer or address in a minute: they are off here (they have tests of
    // their own), so that every answer measured is the read itself.
    const ctx = await build({ RATE_LIMIT_CONSUMER: '0', RATE_LIMIT_PUBLIC: '0' });
    const a = await buildTenant(ctx.db, 'Tenant A');
    const b = await buildTenant(ctx.db, 'Tenant B');
    await seedItems(ctx.db, b, Array.from({ length: 30 }, (_, i) => buildItem({ id: `b${i}` })));
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });

    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}access_token=${token}`, {
        method,
        ...(body ? { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    // The costliest set the bounds allow: three rules, each an alternation of 66 patterns of
    // size 994, together just under MAX_COMPILED_SIZE.
    const patterns = (rule: number) => Array.from({ length: 66 }, (_, i) => `/a[ab]{990}c${rule}_${i}/i`);
    const rules = [0, 1, 2].map((rule) => ({ operator: 'patternin', field: 'text', value: patterns(rule), not: false }));
    const created = await call('POST', '/collection/sets', a.token, { contractId: a.contract.id, name: 'costly', preCondition: { operator: 'exists', field: 'id', not: false }, rules });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // One more pattern and the set is refused.
    const over = await call('POST', '/collection/sets', a.token, {
      contractId: a.contract.id,
      name: 'too costly',
      preCondition: { operator: 'exists', field: 'id', not: false },
      rules: [...rules, { operator: 'patternin', field: 'text', value: [...patterns(3), '/a[ab]{990}c/i'], not: false }],
    });
    expect(over.status).toBe(400);
    expect(over.body.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'rules', code: 1003 });
    expect(over.body.errors[0].message).toContain(String(MAX_COMPILED_SIZE));

    const filterId = created.body._id as string;
    const input = await call('POST', '/collection/inputs', a.token, { contractId: a.contract.id, collectionId: a.collection.id, service: 'rss', type: 'feed', input: `${server.base}/feed`, filterId });
    expect(input.status, JSON.stringify(input.body)).toBe(201);

    // A's work: a dry run over 1 000 items (about 1 MiB, the body limit) and a poll, at once.
    const items = Array.from({ length: 1_000 }, (_, i) => ({ id: `x${i}`, text: ab(1_000, i) }));
    const dryRunBody = JSON.stringify({ contractId: a.contract.id, filterId, items }); // the client's own work, done before
    const runA = async () => {
      const [dryRun, stored] = await Promise.all([
        call('POST', '/collection/filters/test', a.token, dryRunBody),
        inputRow(ctx.db, input.body._id).then((row) => refreshInput(ctx.db, row!, { fetch: fetcher, services, pollInterval: 300 })),
      ]);
      expect(dryRun.status).toBe(400);
      expect(dryRun.body.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'filterId', propertyValue: filterId, code: 1003 });
      expect(dryRun.body.errors[0].message).toMatch(/did not judge the 1000 items within \d+ ms/);
      expect(stored).toBe(0);
      const status = (await call('GET', `/collection/inputs/${input.body._id}`, a.token)).body.status;
      expect(status.lastError).toMatch(/^the filter did not judge the 50 new items within \d+ ms/);
      expect((await call('GET', `/v1/queue/${a.contract.slug}?q=${a.collection.slug}`, a.token)).body).toEqual([]);
    };

    const secondClient = (busy: () => boolean) => readWhile(base, b, busy, { intervalMs: INTERVAL_MS, max: 5_000 });
    const figures = (latencies: number[]) =>
      `${latencies.length} requests, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`;

    // Baseline, same run: the second client alone for 2 s (tells the machine's own noise).
    const idleUntil = performance.now() + 2_000;
    console.log(`second client, A idle: ${figures(await secondClient(() => performance.now() < idleUntil))}`);

    // Other sessions share this machine's two cores; a stall of the whole machine can land in one
    // attempt, so the scenario runs up to five times and the best attempt must hold the bound. A
    // stall of our own making (filters on the event loop) is in every attempt and fails it.
    const p99s: number[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS && !(p99s.at(-1)! < P99_BOUND_MS); attempt++) {
      let busy = true;
      const work = runA().finally(() => (busy = false));
      const latencies = await secondClient(() => busy);
      await work;
      expect(latencies.length).toBeGreaterThanOrEqual(500);
      p99s.push(percentile(latencies, 99));
      console.log(`second client, A at work (attempt ${attempt}): ${figures(latencies)}`);
    }
    expect(Math.min(...p99s)).toBeLessThan(P99_BOUND_MS);
  });
});
