/**
 * The process's Prometheus metrics (docs/operations.md#metrics): one registry and every metric
 * definition, read by `GET /metrics` (`http/metrics.ts`) in the Prometheus text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/) through `prom-client`. The rest
 * of the code records with the one-line functions below; names follow Prometheus naming
 * (https://prometheus.io/docs/practices/naming/): a `sluice_` prefix, the unit in the name
 * (`_seconds`, `_bytes`), counters ending in `_total`. Durations are given to these functions in
 * milliseconds and exported in seconds. Labels take only bounded values: a route pattern, never
 * a raw URL; a service name; a fixed outcome.
 *
 * Histograms also count: `<name>_count` is the number of requests, polls or deliveries, so no
 * separate counter repeats it. prom-client's default process metrics (`process_*`, `nodejs_*`:
 * CPU, resident memory, heap, event loop lag, handles) are registered too.
 *
 * The registry is the process's: every app built in one process (tests build several) records
 * into it; database pools and files are tracked while open and dropped when closed.
 */
import { statSync } from 'node:fs';
import type SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Buckets of request durations, seconds (1 ms … 10 s). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
/** Buckets of poll and delivery durations and of the collection lag, seconds (10 ms … 5 min). */
const POLL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

const httpDuration = new Histogram({
  name: 'sluice_http_request_duration_seconds',
  help: 'HTTP requests answered, by method, route pattern (unmatched: no route) and status code, with their duration in seconds.',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [registry],
});

const pollDuration = new Histogram({
  name: 'sluice_poll_duration_seconds',
  help: 'Polls of inputs, by service and outcome (success; source_error: the source or the network failed; filter_error: the filter cannot be applied or ran out of time; error: Sluice failed; quota_wait: not run for a quota), with their duration in seconds.',
  labelNames: ['service', 'outcome'] as const,
  buckets: POLL_BUCKETS,
  registers: [registry],
});

const collectedItems = new Counter({
  name: 'sluice_collected_items_total',
  help: 'Items of successful polls, by service and outcome: stored (new in the collection), rejected (by its filter, first time), duplicate (merged into a card by de-duplication).',
  labelNames: ['service', 'outcome'] as const,
  registers: [registry],
});

const collectionLag = new Histogram({
  name: 'sluice_collection_lag_seconds',
  help: 'How late polls start: the poll start minus the time the input was due, seconds.',
  labelNames: ['service'] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 900],
  registers: [registry],
});

const streamConnections = new Gauge({
  name: 'sluice_stream_connections',
  help: 'Open Server-Sent Events streams, by audience (public: content stream, moderator: queue stream).',
  labelNames: ['audience'] as const,
  registers: [registry],
});

const pageCacheHits = new Counter({ name: 'sluice_page_cache_hits_total', help: 'Public reads (content, count) answered from the page cache.', registers: [registry] });
const pageCacheMisses = new Counter({ name: 'sluice_page_cache_misses_total', help: 'Public reads (content, count) whose page was built from the database.', registers: [registry] });

const webhookDuration = new Histogram({
  name: 'sluice_webhook_delivery_duration_seconds',
  help: 'Webhook delivery attempts, by outcome (success: a 2xx, http_error: another status, no_response: refused, timed out or failed), with their duration in seconds.',
  labelNames: ['outcome'] as const,
  buckets: POLL_BUCKETS,
  registers: [registry],
});

/** Open PostgreSQL pools and SQLite databases of this process (tests open several). */
const pgPools = new Set<pg.Pool>();
const sqliteFiles = new Set<{ database: SqliteDatabase.Database; path: string }>();

function openPools(): pg.Pool[] {
  for (const pool of pgPools) if (pool.ended) pgPools.delete(pool);
  return [...pgPools];
}

new Gauge({
  name: 'sluice_db_pool_connections',
  help: 'PostgreSQL pool connections, by state (idle, in_use); absent on SQLite.',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    const pools = openPools();
    if (!pools.length) return;
    const total = pools.reduce((sum, pool) => sum + pool.totalCount, 0);
    const idle = pools.reduce((sum, pool) => sum + pool.idleCount, 0);
    this.set({ state: 'idle' }, idle);
    this.set({ state: 'in_use' }, total - idle);
  },
});

new Gauge({
  name: 'sluice_db_pool_waiting_queries',
  help: 'Queries waiting for a free PostgreSQL pool connection; absent on SQLite.',
  registers: [registry],
  collect() {
    this.reset();
    const pools = openPools();
    if (pools.length) this.set(pools.reduce((sum, pool) => sum + pool.waitingCount, 0));
  },
});

new Gauge({
  name: 'sluice_db_pool_max_connections',
  help: 'Connections the PostgreSQL pool may open; absent on SQLite.',
  registers: [registry],
  collect() {
    this.reset();
    const pools = openPools();
    if (pools.length) this.set(pools.reduce((sum, pool) => sum + (pool.options.max ?? 10), 0));
  },
});

new Gauge({
  name: 'sluice_sqlite_file_size_bytes',
  help: 'Size of the SQLite database, by file (main: the database, wal: its write-ahead log); absent on PostgreSQL. SQLite has no pool: one connection serves the process.',
  labelNames: ['file'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const entry of sqliteFiles) {
      if (!entry.database.open) {
        sqliteFiles.delete(entry);
        continue;
      }
      this.inc({ file: 'main' }, fileSize(entry.path));
      this.inc({ file: 'wal' }, fileSize(`${entry.path}-wal`));
    }
  },
});

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** HTTP methods kept as label values; any other becomes `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Records an answered HTTP request; `route` is the route's pattern (`/v1/content/:contract`) or undefined when none matched. */
export function observeHttpRequest(method: string, route: string | undefined, statusCode: number, durationMs: number): void {
  httpDuration.observe({ method: METHODS.has(method) ? method : 'other', route: route ?? 'unmatched', status_code: String(statusCode) }, durationMs / 1000);
}

export type PollOutcome = 'success' | 'source_error' | 'filter_error' | 'error' | 'quota_wait';

/** Records a finished poll of an input of `service`. */
export function observePoll(service: string, outcome: PollOutcome, durationMs: number): void {
  pollDuration.observe({ service, outcome }, durationMs / 1000);
}

/** Records the items of a successful poll: new cards stored, first rejections, duplicates merged into cards. */
export function countCollectedItems(service: string, counts: { stored: number; rejected: number; duplicate: number }): void {
  for (const outcome of ['stored', 'rejected', 'duplicate'] as const) if (counts[outcome] > 0) collectedItems.inc({ service, outcome }, counts[outcome]);
}

/** Records how late a poll started: `lateMs` = poll start − due time (negative counts as 0). */
export function observeCollectionLag(service: string, lateMs: number): void {
  collectionLag.observe({ service }, Math.max(0, lateMs) / 1000);
}

/** Records a stream opening (+1) or closing (−1). */
export function countStream(audience: 'public' | 'moderator', delta: 1 | -1): void {
  streamConnections.inc({ audience }, delta);
}

/** Records a public read answered from the page cache (`hit`) or built (`miss`). */
export function countPageCache(hit: boolean): void {
  (hit ? pageCacheHits : pageCacheMisses).inc();
}

export type DeliveryOutcome = 'success' | 'http_error' | 'no_response';

/** Records a webhook delivery attempt. */
export function observeWebhookDelivery(outcome: DeliveryOutcome, durationMs: number): void {
  webhookDuration.observe({ outcome }, durationMs / 1000);
}

/** Reports this PostgreSQL pool's use while it is open (`sluice_db_pool_*`). */
export function trackPgPool(pool: pg.Pool): void {
  pgPools.add(pool);
}

/** Reports this SQLite database's file sizes while it is open (`sluice_sqlite_file_size_bytes`). */
export function trackSqliteFile(database: SqliteDatabase.Database, path: string): void {
  if (path !== ':memory:') sqliteFiles.add({ database, path });
}
