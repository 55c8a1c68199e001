/**
 * `GET /metrics` through HTTP against a real database (docs/operations.md#metrics): the guard
 * (METRICS_TOKEN; nothing served without it; the METRICS_PORT listener), the metric names and
 * labels, values that move with requests, polls, items, streams and webhook deliveries, route
 * labels that are patterns (never raw URLs), and the Grafana dashboard naming only exported
 * metrics.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDelivery } from '../../src/collect/deliver.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { startSharedCollector } from '../../src/collect/postgres-collector.ts';
import { loadConfig } from '../../src/config.ts';
import { registry } from '../../src/lib/metrics.ts';
import { serve } from '../../src/server.ts';
import { build, buildItem, buildTenant, expectError, freshDatabaseEnv, seedItems, type TestContext, tempDir, testPostgresUrl } from '../helper.ts';
import { startSourceServer } from '../source-server.ts';
import { startReceiver } from '../webhook-receiver.ts';
import { connect } from './sse.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The samples of the exposition text: `name{labels} value` lines, labels parsed. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `labels`. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(ctx: TestContext): Promise<string> {
  const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.body;
}

const RSS = (ids: string[]) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed</title><link>https://example.com/</link><description>d</description>${ids
    .map((id) => `<item><title>Story ${id} about the harbour</title><link>https://example.com/${id}</link><guid isPermaLink="false">${id}</guid><description>Text of ${id}</description><pubDate>${new Date().toUTCString()}</pubDate></item>`)
    .join('')}</channel></rss>`;

describe('GET /metrics: the guard', () => {
  it('answers 401 with the error object without a token or with a wrong one, 200 with the token', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN });
    const missing = expectError(await ctx.app.inject({ method: 'GET', url: '/metrics' }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'Authorization' });
    expect(missing.errors[0]!.message).toContain('metrics token');
    const wrong = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } });
    expectError(wrong, 401, { name: 'AuthenticationError', code: 2001, propertyName: 'Authorization' });
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    // The token in the query string or as Basic is not accepted.
    expectError(await ctx.app.inject({ method: 'GET', url: `/metrics?access_token=${TOKEN}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'Authorization' });
    expectError(await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'Authorization' });
    const text = await scrape(ctx);
    expect(text).toContain('# TYPE sluice_http_request_duration_seconds histogram');
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('is not served at all without METRICS_TOKEN on the main port (404)', async () => {
    const ctx = await build();
    expectError(await ctx.app.inject({ method: 'GET', url: '/metrics' }), 404, { name: 'NotFoundError', code: 4001 });
  });

  it('refuses a METRICS_TOKEN shorter than 16 characters naming the variable', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/^METRICS_TOKEN: must be at least 16 characters/);
  });

  it('serves /metrics alone on METRICS_PORT, a listener of its own on loopback, with the token when one is set', async () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...(await freshDatabaseEnv()) };
    const open = await serve(loadConfig(env), 'api');
    closers.push(() => open.close());
    const url = open.summary.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(url).not.toContain(`:${(open.app.server.address() as AddressInfo).port}/`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toContain('sluice_http_request_duration_seconds');
    // The listener serves nothing else; the main port has no /metrics without a token.
    const other = await fetch(url.replace('/metrics', '/healthz'));
    expect(other.status).toBe(404);
    expect(((await other.json()) as { errors: unknown[] }).errors[0]).toMatchObject({ name: 'NotFoundError', code: 4001 });
    expect((await fetch(`${open.summary.url}/metrics`)).status).toBe(404);

    const guarded = await serve(loadConfig({ ...env, DATA_DIR: tempDir(), ...(await freshDatabaseEnv()), METRICS_TOKEN: TOKEN }), 'api');
    closers.push(() => guarded.close());
    const refused = await fetch(guarded.summary.metricsUrl!, { headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    const body = (await refused.json()) as { requestId: string; errors: unknown[] };
    expect(body.errors).toEqual([expect.objectContaining({ name: 'AuthenticationError', code: 2001, propertyName: 'Authorization' })]);
    expect(refused.headers.get('x-request-id')).toBe(body.requestId);
    expect((await fetch(guarded.summary.metricsUrl!)).status).toBe(401);
    expect((await fetch(guarded.summary.metricsUrl!, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});

describe('GET /metrics: values move', () => {
  it('counts HTTP requests by route pattern, method and status, never the raw URL; counts page cache hits and misses', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN });
    const tenant = await buildTenant(ctx.db, 'Harbour Daily');
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_one' }), buildItem({ id: 'rss_two' })]);
    const route = { method: 'GET', route: '/v1/content/:contract', status_code: '200' };
    const before = await scrape(ctx);
    const url = `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&count=7`;
    for (let i = 0; i < 3; i++) expect((await ctx.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    const unmatched = await ctx.app.inject({ method: 'GET', url: '/no-such-route-7f3a9' });
    expect(unmatched.statusCode).toBe(404);
    const after = await scrape(ctx);

    expect(value(after, 'sluice_http_request_duration_seconds_count', route) - value(before, 'sluice_http_request_duration_seconds_count', route)).toBe(3);
    expect(value(after, 'sluice_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(value(after, 'sluice_http_request_duration_seconds_count', route));
    expect(value(after, 'sluice_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    const notFound = { route: 'unmatched', status_code: '404' };
    expect(value(after, 'sluice_http_request_duration_seconds_count', notFound) - value(before, 'sluice_http_request_duration_seconds_count', notFound)).toBe(1);
    // No raw URL, slug or query in any label.
    expect(after).not.toContain(tenant.contract.slug);
    expect(after).not.toContain('no-such-route-7f3a9');
    expect(after).not.toContain('count=7');
    // The first two reads built the page (it is kept from its second miss on), the third was answered from the cache.
    expect(value(after, 'sluice_page_cache_misses_total') - value(before, 'sluice_page_cache_misses_total')).toBe(2);
    expect(value(after, 'sluice_page_cache_hits_total') - value(before, 'sluice_page_cache_hits_total')).toBe(1);
    // The previous scrape is itself counted, under its pattern.
    expect(value(after, 'sluice_http_request_duration_seconds_count', { route: '/metrics', status_code: '200' })).toBeGreaterThanOrEqual(1);
  });

  it('reports the database: pool connections on PostgreSQL, file sizes on SQLite', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN });
    const text = await scrape(ctx);
    if (testPostgresUrl) {
      expect(samples(text).filter((s) => s.name === 'sluice_db_pool_connections').map((s) => s.labels.state).sort()).toEqual(['idle', 'in_use']);
      expect(value(text, 'sluice_db_pool_connections')).toBeGreaterThanOrEqual(1);
      expect(value(text, 'sluice_db_pool_max_connections')).toBeGreaterThanOrEqual(10);
      expect(text).toContain('sluice_db_pool_waiting_queries ');
    } else {
      // The migrated schema is in the database file or still in its write-ahead log.
      expect(value(text, 'sluice_sqlite_file_size_bytes', { file: 'main' })).toBeGreaterThan(0);
      expect(value(text, 'sluice_sqlite_file_size_bytes')).toBeGreaterThan(16 * 1024);
      expect(samples(text).some((s) => s.name === 'sluice_db_pool_connections')).toBe(false);
    }
  });

  it('counts polls by service and outcome, items stored and rejected, the collection lag, and webhook deliveries', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN, ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_RETRY_MS: '60000' });
    const tenant = await buildTenant(ctx.db, 'Poll Gazette');
    const auth = { authorization: `Bearer ${tenant.token}` };
    let status = 200;
    const source = await startSourceServer(() => (status === 200 ? { status, headers: { 'content-type': 'application/rss+xml' }, body: RSS(['a1', 'a2', 'a3']) } : { status }));
    closers.push(() => source.close());
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const hook = await ctx.app.inject({ method: 'POST', url: '/collection/webhooks', headers: auth, payload: { name: 'Integrator', contractId: tenant.contract.id, url: `${receiver.url}/hook`, events: ['item.collected'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    receiver.secrets.set('/hook', hook.json().secret);
    // A filter set rejecting one story of the three.
    const filter = await ctx.app.inject({
      method: 'POST', url: '/collection/sets', headers: auth,
      payload: { name: 'No a2', contractId: tenant.contract.id, rules: [{ operator: 'pattern', field: 'url', value: '/a2$/', not: false }], preCondition: { operator: 'exists', field: 'text', not: false } },
    });
    expect(filter.statusCode, filter.body).toBe(201);
    const input = await ctx.app.inject({
      method: 'POST', url: '/collection/inputs', headers: auth,
      payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: `${source.base}/feed.xml`, filterId: filter.json()._id },
    });
    expect(input.statusCode, input.body).toBe(201);
    const before = await scrape(ctx);
    // The collector's first look is at its start.
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    closers.push(() => collector.stop());
    const poll = async () => {
      await collector.tick();
      await collector.idle();
    };
    await poll();
    const polled = await scrape(ctx);
    const ok = { service: 'rss', outcome: 'success' };
    expect(value(polled, 'sluice_poll_duration_seconds_count', ok) - value(before, 'sluice_poll_duration_seconds_count', ok)).toBe(1);
    const stored = value(polled, 'sluice_collected_items_total', { service: 'rss', outcome: 'stored' }) - value(before, 'sluice_collected_items_total', { service: 'rss', outcome: 'stored' });
    const rejected = value(polled, 'sluice_collected_items_total', { service: 'rss', outcome: 'rejected' }) - value(before, 'sluice_collected_items_total', { service: 'rss', outcome: 'rejected' });
    expect(stored).toBe(2);
    expect(rejected).toBe(1);
    expect(value(polled, 'sluice_collection_lag_seconds_count', { service: 'rss' }) - value(before, 'sluice_collection_lag_seconds_count', { service: 'rss' })).toBe(1);

    // The source fails: a source_error, not an error of Sluice's.
    status = 503;
    await ctx.db.updateTable('inputs').set({ nextRunAt: 0 }).execute();
    await poll();
    const failed = await scrape(ctx);
    const sourceError = { service: 'rss', outcome: 'source_error' };
    expect(value(failed, 'sluice_poll_duration_seconds_count', sourceError) - value(polled, 'sluice_poll_duration_seconds_count', sourceError)).toBe(1);
    expect(value(failed, 'sluice_poll_duration_seconds_count', { outcome: 'error' })).toBe(value(before, 'sluice_poll_duration_seconds_count', { outcome: 'error' }));

    // The item.collected events go out: one successful delivery per stored card.
    const delivery = startDelivery({ db: ctx.db, config: ctx.config }, 3_600_000);
    closers.push(() => delivery.stop());
    for (let i = 0; i < 200 && receiver.received.length < stored; i++) {
      await delivery.tick();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(receiver.received.length).toBe(stored);
    const delivered = await scrape(ctx);
    expect(value(delivered, 'sluice_webhook_delivery_duration_seconds_count', { outcome: 'success' }) - value(before, 'sluice_webhook_delivery_duration_seconds_count', { outcome: 'success' })).toBe(stored);
  });

  it('measures the collection lag from the time the input was due (on PostgreSQL through the shared collector, not from its lease)', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN, ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db, 'Lag Ledger');
    const source = await startSourceServer(() => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: RSS(['l1']) }));
    closers.push(() => source.close());
    const input = await ctx.app.inject({
      method: 'POST', url: '/collection/inputs', headers: { authorization: `Bearer ${tenant.token}` },
      payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: `${source.base}/lag.xml` },
    });
    expect(input.statusCode, input.body).toBe(201);
    // Due 40 s ago.
    await ctx.db.updateTable('inputs').set({ nextRunAt: Date.now() - 40_000 }).execute();
    const before = await scrape(ctx);
    const collector = testPostgresUrl ? await startSharedCollector({ db: ctx.db, config: ctx.config }, 3_600_000) : startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    closers.push(() => collector.stop());
    const polls = (text: string) => value(text, 'sluice_poll_duration_seconds_count', { service: 'rss', outcome: 'success' });
    let after = before;
    for (let i = 0; i < 200 && polls(after) === polls(before); i++) {
      await collector.tick();
      await collector.idle();
      after = await scrape(ctx);
      if (polls(after) === polls(before)) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(polls(after) - polls(before)).toBe(1);
    const lag = value(after, 'sluice_collection_lag_seconds_sum', { service: 'rss' }) - value(before, 'sluice_collection_lag_seconds_sum', { service: 'rss' });
    expect(lag).toBeGreaterThanOrEqual(40);
    expect(lag).toBeLessThan(40 + 60);
    expect(value(after, 'sluice_collection_lag_seconds_bucket', { service: 'rss', le: '30' }) - value(before, 'sluice_collection_lag_seconds_bucket', { service: 'rss', le: '30' })).toBe(0);
  });

  it('counts open streams by audience and drops them when they close', async () => {
    const ctx = await build({ METRICS_TOKEN: TOKEN });
    const tenant = await buildTenant(ctx.db, 'Stream Times');
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const before = await scrape(ctx);
    const stream = await connect(`${base}/v1/content/${tenant.contract.slug}/stream?q=${tenant.collection.slug}`);
    expect(stream.res.status).toBe(200);
    const during = await scrape(ctx);
    expect(value(during, 'sluice_stream_connections', { audience: 'public' }) - value(before, 'sluice_stream_connections', { audience: 'public' })).toBe(1);
    await stream.close();
    // The server notices the closed connection shortly after (at most 5 s, looking every 25 ms).
    let left = -1;
    for (let i = 0; i < 200 && left !== 0; i++) {
      left = value(await scrape(ctx), 'sluice_stream_connections', { audience: 'public' }) - value(before, 'sluice_stream_connections', { audience: 'public' });
      if (left !== 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(left).toBe(0);
  });
});

describe('docs/grafana-dashboard.json', () => {
  it('has panels whose every expression names metrics /metrics exports', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'));
    const exported = new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name));
    const exprs: string[] = [];
    const visit = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node && typeof node === 'object') {
        for (const [key, child] of Object.entries(node)) {
          if (key === 'expr' && typeof child === 'string') exprs.push(child);
          else visit(child);
        }
      }
    };
    visit(dashboard);
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    const used = new Set<string>();
    for (const expr of exprs) {
      const names = [...expr.matchAll(/\b((?:sluice|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) {
        const base = name.replace(/_(bucket|count|sum)$/, '');
        expect(exported.has(name) || exported.has(base), `${name} in ${expr}`).toBe(true);
        used.add(exported.has(name) ? name : base);
      }
    }
    // Every Sluice metric has a panel.
    for (const name of exported) if (name.startsWith('sluice_')) expect(used, name).toContain(name);
  });
});
