/**
 * Collection at scale (issue 19, docs/services.md#polling), through HTTP on a real database with
 * the collector of that database (the in-process pool on SQLite, the claiming one on PostgreSQL)
 * polling local feed servers: an input's `interval` (validated against the operator's limits,
 * naming `interval`; used for its next run); polls refill their slots without waiting for a tick;
 * politeness (a server counting requests under way per host never sees more than
 * COLLECT_HOST_CONCURRENCY, while a busy host does not hold the others up); a 304 Not Modified
 * stores nothing and moves the schedule; only inputs that may run are polled (active, in an
 * active collection of an active contract). Plus the table of `pollIntervalOf`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { pollIntervalOf } from '../../src/collect/interval.ts';
import { type Collector, startCollector } from '../../src/collect/scheduler.ts';
import { startSharedCollector } from '../../src/collect/postgres-collector.ts';
import { isPostgres } from '../../src/store/db.ts';
import { build, buildTenant, expectError, type TestContext, changeInput } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

const feedInput = (tenant: Tenant, url: string, extra: Record<string, unknown> = {}) => ({
  contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: url, ...extra,
});

const rss = (path: string) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>${path}</title><link>http://example.com/</link><description>d</description>` +
  `<item><title>Item of ${path}</title><link>http://example.com${path}/1</link><guid>${path}-1</guid><pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>`;

interface FeedServers {
  /** Base URL per host, e.g. `http://127.0.0.1:port`. */
  bases: string[];
  /** Requests in arrival order: host (`Host` header) and path. */
  arrivals: { host: string; path: string; ifNoneMatch: string | undefined }[];
  /** The most requests under way at once, per `Host` header. */
  peak: Map<string, number>;
  /** What the next answers are: a status per path (default 200 with the feed and an ETag). */
  status: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Feed servers on loopback addresses (one per address: distinct remote hosts to the collector)
 * sharing one handler that answers each request after `delayMs`, counting requests under way per
 * host; a request with the feed's ETag in If-None-Match gets 304.
 */
async function startFeedServers(addresses: string[], delayMs: number): Promise<FeedServers> {
  const underWay = new Map<string, number>();
  const servers: Server[] = [];
  const state: FeedServers = { bases: [], arrivals: [], peak: new Map(), status: new Map(), close: async () => {} };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const host = req.headers.host ?? '';
    const path = req.url ?? '/';
    const ifNoneMatch = req.headers['if-none-match'];
    state.arrivals.push({ host, path, ifNoneMatch });
    underWay.set(host, (underWay.get(host) ?? 0) + 1);
    state.peak.set(host, Math.max(state.peak.get(host) ?? 0, underWay.get(host)!));
    setTimeout(() => {
      underWay.set(host, underWay.get(host)! - 1);
      const etag = `"${path}-v1"`;
      const status = state.status.get(path) ?? 200;
      if (status !== 200) return void res.writeHead(status).end();
      if (ifNoneMatch === etag) return void res.writeHead(304, { etag }).end();
      res.writeHead(200, { 'content-type': 'application/rss+xml', etag }).end(rss(path));
    }, delayMs);
  };
  for (const address of addresses) {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    servers.push(server);
    state.bases.push(`http://${address}:${(server.address() as AddressInfo).port}`);
  }
  state.close = async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  };
  return state;
}

let running: { collector?: Collector; servers?: FeedServers } = {};
afterEach(async () => {
  await running.collector?.stop();
  await running.servers?.close();
  running = {};
});

/** The collector of the test's database, its own tick far away: it polls when `tick()` is called (and at start). */
async function collectorOf(ctx: TestContext): Promise<Collector> {
  const collector = isPostgres(ctx.db) ? await startSharedCollector({ db: ctx.db, config: ctx.config }, 3_600_000) : startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  running.collector = collector;
  return collector;
}

async function inputsOf(ctx: TestContext, tenant: Tenant) {
  const res = await call(ctx, tenant, 'GET', `/collection/inputs?contract_id=${tenant.contract.id}`);
  expect(res.statusCode, res.body).toBe(200);
  type Shown = { _id: string; input: string; interval?: number; status: { lastSuccess: string | null; lastError: string | null; nextRun: string | null; collected: number } };
  return (res.json() as Shown[]).sort((a, b) => a.input.localeCompare(b.input));
}

describe('an input’s interval', () => {
  it('is refused outside the operator’s limits, naming interval; shown when set; removed by a replace without it', async () => {
    const ctx = await build({ POLL_INTERVAL_MIN: '120', POLL_INTERVAL_MAX: '7200' });
    const tenant = await buildTenant(ctx.db);
    const url = 'http://feeds.example.com/a.xml';
    for (const interval of [119, 7201]) {
      expectError(await call(ctx, tenant, 'POST', '/collection/inputs', feedInput(tenant, url, { interval })), 400, { name: 'ValidationError', code: 1003, propertyName: 'interval' });
    }
    for (const interval of [0, 1.5, 'often']) {
      const res = await call(ctx, tenant, 'POST', '/collection/inputs', feedInput(tenant, url, { interval }));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().errors.map((e: { propertyName: string }) => e.propertyName)).toContain('interval');
    }
    expectError(await call(ctx, tenant, 'POST', '/collection/inputs', [feedInput(tenant, url), feedInput(tenant, url, { interval: 60 })]), 400, { name: 'ValidationError', code: 1003, propertyName: '[1].interval' });
    expect(await inputsOf(ctx, tenant)).toEqual([]);

    const created = await call(ctx, tenant, 'POST', '/collection/inputs', feedInput(tenant, url, { interval: 120 }));
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json()._id;
    expect(created.json().interval).toBe(120);
    expect((await call(ctx, tenant, 'GET', `/collection/inputs/${id}`)).json().interval).toBe(120);
    expectError(await call(ctx, tenant, 'PUT', `/collection/inputs/${id}`, feedInput(tenant, url, { interval: 7201 })), 400, { name: 'ValidationError', code: 1003, propertyName: 'interval' });
    const replaced = await call(ctx, tenant, 'PUT', `/collection/inputs/${id}`, feedInput(tenant, url, { interval: 7200 }));
    expect(replaced.json().interval).toBe(7200);
    const cleared = await call(ctx, tenant, 'PUT', `/collection/inputs/${id}`, feedInput(tenant, url));
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).not.toHaveProperty('interval');
  });

  it('sets the next run after a poll; an input without one keeps the service’s interval', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1'], 0));
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', POLL_INTERVAL: '300', POLL_INTERVAL_RSS: '900' });
    const tenant = await buildTenant(ctx.db);
    const base = servers.bases[0]!;
    const res = await call(ctx, tenant, 'POST', '/collection/inputs', [feedInput(tenant, `${base}/own`, { interval: 3600 }), feedInput(tenant, `${base}/service`)]);
    expect(res.statusCode, res.body).toBe(201);
    const collector = await collectorOf(ctx);
    await collector.tick();
    await collector.idle();
    const gaps = Object.fromEntries((await inputsOf(ctx, tenant)).map((input) => [new URL(input.input).pathname, Date.parse(input.status.nextRun!) - Date.parse(input.status.lastSuccess!)]));
    expect(gaps).toEqual({ '/own': 3_600_000, '/service': 900_000 });
  });

  it.each([
    { input: { service: 'rss', pollInterval: null, feedMode: 'poll' }, expected: 300, case: 'none: POLL_INTERVAL' },
    { input: { service: 'twitter', pollInterval: null, feedMode: 'poll' }, expected: 900, case: 'none: the service’s' },
    { input: { service: 'twitter', pollInterval: 600, feedMode: 'poll' }, expected: 600, case: 'its own over the service’s' },
    { input: { service: 'rss', pollInterval: 30, feedMode: 'poll' }, expected: 60, case: 'below a raised minimum: the minimum' },
    { input: { service: 'rss', pollInterval: 90_000, feedMode: 'poll' }, expected: 86_400, case: 'above a lowered maximum: the maximum' },
    { input: { service: 'rss', pollInterval: null, feedMode: 'push' }, expected: 3600, case: 'pushed: the safety net, PUSH_POLL_INTERVAL' },
    { input: { service: 'mastodon', pollInterval: 600, feedMode: 'stream' }, expected: 3600, case: 'streamed: at least PUSH_POLL_INTERVAL' },
    { input: { service: 'rss', pollInterval: 7200, feedMode: 'push' }, expected: 7200, case: 'pushed with a longer interval of its own: that' },
  ] as const)('pollIntervalOf: $case', ({ input, expected }) => {
    expect(pollIntervalOf(input, { pollInterval: 300, pollIntervals: { twitter: 900 }, pollIntervalMin: 60, pollIntervalMax: 86_400, pushPollInterval: 3600 })).toBe(expected);
  });
});

describe('the pool of polls', () => {
  it('polls only the inputs that may run: not an inactive input, nor one of an inactive collection or contract', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1'], 0));
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db);
    const other = await buildTenant(ctx.db, 'Other News');
    const base = servers.bases[0]!;
    const shelved = await call(ctx, tenant, 'POST', '/collection/collections', { contractId: tenant.contract.id, name: 'Shelved' });
    expect(shelved.statusCode, shelved.body).toBe(201);
    const bodies = [
      feedInput(tenant, `${base}/live`),
      feedInput(tenant, `${base}/inactive-input`, { active: false }),
      feedInput(tenant, `${base}/inactive-collection`, { collectionId: shelved.json()._id }),
    ];
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', bodies)).statusCode).toBe(201);
    expect((await call(ctx, other, 'POST', '/collection/inputs', feedInput(other, `${base}/inactive-contract`))).statusCode).toBe(201);
    expect((await call(ctx, tenant, 'PATCH', `/collection/collections/${shelved.json()._id}`, { active: false })).statusCode).toBe(200);
    await ctx.db.updateTable('contracts').set({ active: 0 }).where('id', '=', other.contract.id).execute();
    const collector = await collectorOf(ctx);
    await collector.tick();
    await collector.idle();
    expect(servers.arrivals.map((arrival) => arrival.path)).toEqual(['/live']);
  });

  it('starts the next due input as a poll ends: one tick polls every due input, COLLECT_CONCURRENCY at a time', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1'], 5));
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', COLLECT_CONCURRENCY: '2', COLLECT_HOST_CONCURRENCY: '2' });
    const tenant = await buildTenant(ctx.db);
    const res = await call(ctx, tenant, 'POST', '/collection/inputs', Array.from({ length: 12 }, (_, i) => feedInput(tenant, `${servers.bases[0]}/feed-${i}`)));
    expect(res.statusCode, res.body).toBe(201);
    // The tick is an hour away: only the start's look for due inputs and the refills poll.
    const collector = await collectorOf(ctx);
    await collector.tick();
    await collector.idle();
    expect(servers.arrivals).toHaveLength(12);
    expect(servers.peak.get(new URL(servers.bases[0]!).host)).toBe(2);
    const inputs = await inputsOf(ctx, tenant);
    expect(inputs.filter((input) => input.status.lastSuccess !== null && input.status.collected === 1)).toHaveLength(12);
  });

  it('keeps to COLLECT_HOST_CONCURRENCY per host while the inputs of other hosts go on', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1', '127.0.0.2'], 40));
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', COLLECT_CONCURRENCY: '16', COLLECT_HOST_CONCURRENCY: '2' });
    const tenant = await buildTenant(ctx.db);
    const [busy, other] = servers.bases as [string, string];
    const bodies = [...Array.from({ length: 10 }, (_, i) => feedInput(tenant, `${busy}/busy-${i}`)), ...Array.from({ length: 3 }, (_, i) => feedInput(tenant, `${other}/other-${i}`))];
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', bodies)).statusCode).toBe(201);
    const collector = await collectorOf(ctx);
    await collector.tick();
    await collector.idle();
    expect(servers.arrivals).toHaveLength(13);
    const busyHost = new URL(busy).host;
    const otherHost = new URL(other).host;
    expect(Object.fromEntries(servers.peak)).toEqual({ [busyHost]: 2, [otherHost]: 2 });
    // The other host's three polls did not wait behind the busy host's ten.
    const lastOther = servers.arrivals.findLastIndex((a) => a.host === otherHost);
    const lastBusy = servers.arrivals.findLastIndex((a) => a.host === busyHost);
    expect(lastOther).toBeLessThan(lastBusy);
    expect((await inputsOf(ctx, tenant)).every((input) => input.status.collected === 1)).toBe(true);
  });

  it('the fetcher bounds requests under way per origin (redirects and API calls included)', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1'], 30));
    const fetcher = createFetcher({ allowPrivate: true, connectionsPerOrigin: 2 });
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => fetcher(`${servers.bases[0]}/direct-${i}`)));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      expect([...servers.peak.values()]).toEqual([2]);
    } finally {
      await fetcher.close();
    }
  });
});

describe('a 304 Not Modified', () => {
  it('stores nothing and moves the schedule; the conditional request carries the ETag; a failing input recovers on it', async () => {
    const servers = (running.servers = await startFeedServers(['127.0.0.1'], 0));
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db);
    const created = await call(ctx, tenant, 'POST', '/collection/inputs', [feedInput(tenant, `${servers.bases[0]}/steady`), feedInput(tenant, `${servers.bases[0]}/flaky`)]);
    expect(created.statusCode, created.body).toBe(201);
    const ids = (created.json() as { _id: string }[]).map((input) => input._id);
    const collector = await collectorOf(ctx);
    const pollAgain = async () => {
      for (const id of ids) await changeInput(ctx.db, id, { nextRunAt: 0 });
      await collector.tick();
      await collector.idle();
    };
    await collector.tick();
    await collector.idle();
    const first = await inputsOf(ctx, tenant);
    expect(first.map((input) => input.status.collected)).toEqual([1, 1]);

    // The flaky feed fails once (500), then both answer 304.
    servers.status.set('/flaky', 500);
    await pollAgain();
    // In the order of their URLs: flaky, steady.
    expect((await inputsOf(ctx, tenant)).map((input) => input.status.lastError)).toEqual(['HTTP 500', null]);
    servers.status.delete('/flaky');
    const before = await inputsOf(ctx, tenant);
    servers.arrivals.length = 0;
    await pollAgain();
    expect(servers.arrivals.map((a) => a.ifNoneMatch).sort()).toEqual(['"/flaky-v1"', '"/steady-v1"']);
    const after = await inputsOf(ctx, tenant);
    expect(after.map((input) => input.status.collected)).toEqual([1, 1]);
    expect(after.map((input) => input.status.lastError)).toEqual([null, null]);
    for (const [i, input] of after.entries()) {
      expect(Date.parse(input.status.lastSuccess!)).toBeGreaterThan(Date.parse(before[i]!.status.lastSuccess!));
      expect(Date.parse(input.status.nextRun!) - Date.parse(input.status.lastSuccess!)).toBe(300_000);
    }
  });
});
