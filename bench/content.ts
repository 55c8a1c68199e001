/**
 * `npm run bench:content` (issue 6): fills a fresh SQLite database (or, with
 * DATABASE_URL=postgres://…, an empty PostgreSQL database) with 1 000 000 items over
 * 100 collections (dates over 30 days, 10 languages, 5 % with a location, bodies of a realistic
 * size), starts the real server in a child process on 127.0.0.1, and measures with autocannon:
 *
 *   baseline          a minimal JSON route of the same server
 *   baseline_bytes    the same route answering as many bytes as a default content page (what
 *                     moving the page's bytes costs server and load generator; printed beside
 *                     the content run's ratio to it)
 *   content           GET /v1/content, default parameters, rotating collections (cached pages)
 *   content_uncached  the same with a different `until` on every request (every read misses the page
 *                     cache by query; its page lies among the collection's newest items, which the
 *                     collection's head answers, and most pages hold the same items as one built
 *                     before: docs/operations.md#reads-at-scale)
 *   content_deep      the same 20 days back: every page is read with SQL (past the head)
 *   content_built     pages of the head at offsets 0–159 in turn: every page is built anew (no
 *                     page of the same items kept), from the head and the items' JSON kept
 *   content_kudos / _trending / _language / _since / _offset500   one parameter each, uncached
 *                     (_trending: sort=trending, the order of a ranked collection, issue 20)
 *   queue             GET /v1/queue with every filter (service, type, language, location, since, until, sort, order)
 *   count             GET /v1/count, uncached
 *   search            GET /v1/content with `search` of two words (docs/api.md#search) over 30 days, uncached;
 *                     the size of the full-text index per item and the search SQL alone (p50/p90/p99
 *                     of 200 searches in the parent process, before the server starts) are printed with it
 *   beacon_off / beacon_on   the uncached content read alone, then the same while a second load
 *                     generator sends the walls' analytics beacons (docs/api.md#analytics-beacon:
 *                     1 in 10 a view, the others 20 impressions and a click among 40 of the
 *                     collection's items, as a wall shows) at BENCH_BEACON_RATE per second (default 200: a
 *                     thousand viewers, one batch each every 5 s): counting must not
 *                     slow the public reads; the ratio on/off of requests/s and p99 is printed.
 *   beacon_control    the same, the second generator sending as many requests to a path no route
 *                     serves: what any request at that rate costs the reads, without counting
 *
 * It prints requests/s, p50 and p99 of each, as ratios to the baseline too; the server's own p99
 * (the bucket of its request-duration metric under which 99 % of the run's requests were
 * answered: from the moment Fastify takes the request to the response sent, waits for the
 * database connection and the other requests' handlers included, but not the time a request
 * waits to be read while the event loop serves others); the server's peak memory;
 * and the query plans of the measured reads. The last line is one JSON object.
 * Cost growth (issue 31 point 6): a second database holds a tenth of the items in a tenth of the
 * collections, each as large as at the full size (every read then does the same work and only
 * the database's size differs: `<BENCH_DB>.small`, or on PostgreSQL the schema `bench_small`),
 * served by a second child; each read of READS runs there, then at the full size over as many
 * collections (so that what the process keeps per collection is as large too), then at the full
 * size over all of them; each read's server p99 (exact: the run's `reply.elapsedTime`s) at the full
 * size over the same at a tenth is printed (and beside it the full size over all its collections
 * against the tenth), with the goals of docs/operations.md#reads-at-scale.
 * Environment: BENCH_ITEMS (default 1000000; the smaller size a tenth), BENCH_DURATION seconds per run (default 8),
 * BENCH_RUNS=<names,…> measures only those runs (and the baseline). BENCH_DB=<path> keeps the SQLite database there. A database filled by an earlier run (a kept
 * SQLite file, or the PostgreSQL database) is reused, migrated to the code's schema first, so a
 * change to the read path is measured again without the fill.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { CompiledQuery, sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import type { ContentItem } from '../src/item.ts';
import { registry } from '../src/lib/metrics.ts';
import { loadConfig } from '../src/config.ts';
import { createCollection, listCollections } from '../src/store/collections.ts';
import { createConsumer, findClient } from '../src/store/consumers.ts';
import { createContract, findContract, grant } from '../src/store/contracts.ts';
import { type Db, isPostgres, openDb } from '../src/store/db.ts';
import { compileCount, compilePage, type ItemQuery, type Page } from '../src/store/items/read-sql.ts';
import { storeItems } from '../src/store/items/write.ts';
import { compileSearch } from '../src/store/item-search.ts';
import { parseSearch } from '../src/lib/search-query.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { histogramQuantile, quantile } from './figures.ts';
import { random } from './random.ts';
import { serverRuntime } from './runtime.ts';
import { ownsEntries } from '../src/services/table.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 1_000_000);
const COLLECTIONS = 100;
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'sv', 'pl', 'ja'];
const SERVICES = ['rss', 'twitter', 'youtube', 'instagram', 'mastodon'];
const TYPES: ContentItem['type'][] = ['link', 'status', 'video', 'image', 'embed'];
const CITIES = [
  { latitude: 52.52, longitude: 13.405 },
  { latitude: 48.8566, longitude: 2.3522 },
  { latitude: 40.7128, longitude: -74.006 },
];
const DAY = 86_400_000;


const WORDS = 'news city council vote market river season team coach report school rain energy price street music festival study health court bridge'.split(' ');
/**
 * A vocabulary of 10 000 made-up words (four syllables each), drawn with a Zipf-like (log-uniform)
 * law: word r about as often as 1/r, as in real text. Half of an item's words come from it, half
 * from WORDS: a search for two of its words selects a realistic share of the items
 * (`SEARCH_PAIRS`), not nearly all of them as two of WORDS would.
 */
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'te', 'vo', 'zi', 'pa'];
const VOCABULARY = Array.from({ length: 10_000 }, (_, k) => [1000, 100, 10, 1].map((d) => SYLLABLES[Math.floor(k / d) % 10]).join(''));
const zipfWord = (rnd: () => number) => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length ** rnd()) - 1)]!;
/** The two-word queries of the search run: words of ranks 20–400 (each in about 2–15 % of the items). */
const SEARCH_PAIRS = Array.from({ length: 50 }, (_, k) => `${VOCABULARY[20 + ((k * 37) % 380)]} ${VOCABULARY[21 + ((k * 53) % 379)]}`);

function makeItem(rnd: () => number, n: number, now: number): ContentItem {
  const service = SERVICES[n % SERVICES.length]!;
  const words = (k: number) => Array.from({ length: k }, () => (rnd() < 0.5 ? WORDS[Math.floor(rnd() * WORDS.length)] : zipfWord(rnd))).join(' ');
  const item: ContentItem = {
    id: `${service}_${n.toString(36)}`,
    service,
    type: TYPES[Math.floor(rnd() * TYPES.length)]!,
    title: words(8),
    text: `<p>${words(60)}</p>`,
    tags: [WORDS[n % WORDS.length]!, WORDS[(n >> 3) % WORDS.length]!],
    url: `https://example.com/${service}/${n}`,
    date: new Date(now - Math.floor(rnd() * 30 * DAY)).toISOString(),
    author: { name: `Author ${n % 997}`, username: `author${n % 997}`, userid: String(n % 997), url: `https://example.com/u/${n % 997}` },
    media: rnd() < 0.5 ? [{ type: 'image', url: `https://img.example.com/${n}.jpg`, width: 1200, height: 800 }] : null,
    kudos: { score: Math.floor(rnd() * 1000), [`${service}_likes`]: Math.floor(rnd() * 500) },
    language: LANGUAGES[Math.floor(rnd() * LANGUAGES.length)]!,
  };
  if (rnd() < 0.05) {
    const city = CITIES[n % CITIES.length]!;
    item.location = { latitude: city.latitude + (rnd() - 0.5) * 0.004, longitude: city.longitude + (rnd() - 0.5) * 0.004 };
  }
  return item;
}

/** The contract, collections and a token of a database filled before (BENCH_DB), or undefined. */
async function filled(db: Db, count: number) {
  const contract = await findContract(db, 'bench');
  if (!contract) return undefined;
  const collections = await listCollections(db, contract.id);
  const consumer = await findClient(db, 'bench');
  if (collections.length !== count || !consumer) return undefined;
  const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 86_400, withRefresh: false });
  return { contract, collections, token };
}

/**
 * Fills `db` with `count` collections of contract `bench`, each of ITEMS / COLLECTIONS items
 * (seeded: the same items each time).
 */
async function fill(db: Db, now: number, count: number) {
  const contract = await createContract(db, 'bench', 'bench');
  const collections = [];
  for (let c = 0; c < count; c++) collections.push(await createCollection(db, contract.id, { name: `c${c}`, dedupe: 'off' }, 'bench'));
  const consumer = await createConsumer(db, { type: 'client', name: 'bench', email: null, language: null, username: null, passwordHash: null, clientId: 'bench', secretHash: null });
  await grant(db, consumer.id, contract.id);
  const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 86_400, withRefresh: false });
  const rnd = random(42);
  const perCollection = Math.ceil(ITEMS / COLLECTIONS);
  let n = 0;
  for (const collection of collections) {
    for (let done = 0; done < perCollection; done += 2000) {
      const batch = Array.from({ length: Math.min(2000, perCollection - done) }, () => makeItem(rnd, n++, now));
      await db.transaction().execute((trx) =>
        storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId: '0'.repeat(24), state: rnd() < 0.9 ? 'published' : 'unpublished' }, batch, ownsEntries, now),
      );
    }
  }
  return { contract, collections, token };
}

/** Child process: the real app on 127.0.0.1, plus the baseline route; reports its port and peak memory. */
async function serveChild(databaseUrl: string) {
  // Rate limits counted (their cost is part of a read) but too high to refuse the load of one address.
  const limits = { RATE_LIMIT_CONSUMER: '1000000000', RATE_LIMIT_PUBLIC: '1000000000', RATE_LIMIT_BEACON: '0' };
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', PORT: '0', ...limits });
  const db = openDb(config.databaseUrl);
  const app = await buildApp(config, { db });
  // The bench's own routes are public like /healthz (the permission table names every route: src/http/permissions.ts).
  const bench = { config: { operation: 'GET /healthz' } };
  app.get('/bench/baseline', bench, async () => ({ status: 'ok' }));
  // The same minimal route answering a body of `bytes` bytes (one made per size): what moving a
  // page's bytes costs the server and the load generator, without the content route's work.
  const bodies = new Map<number, Buffer>();
  app.get<{ Querystring: { bytes?: string } }>('/bench/bytes', bench, async (request, reply) => {
    const size = Math.min(Number(request.query.bytes) || 0, 1 << 20);
    let body = bodies.get(size);
    if (!body) bodies.set(size, (body = Buffer.alloc(size, 0x20)));
    return reply.type('application/json; charset=utf-8').send(body);
  });
  // Each answered request's server time (ms, `reply.elapsedTime`, what sluice_http_request_duration_seconds
  // observes), kept exactly for the run's p99: the metric's buckets (1, 2.5, 5 ms…) cannot tell 1.3×.
  let elapsed: number[] = [];
  app.addHook('onResponse', (_request, reply, done) => {
    if (elapsed.length < 5_000_000) elapsed.push(reply.elapsedTime);
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  process.on('message', (message) => {
    if (message === 'memory') process.send!({ maxRssBytes: process.resourceUsage().maxRSS * 1024, ...process.memoryUsage() });
    // An answer always comes: the parent waits for one (`ask`).
    if (message === 'metrics') void registry.metrics().then((text) => process.send!(text), () => process.send!(''));
    // The p99 of the server times since the last ask (NaN without requests), and a new count from here.
    if (message === 'elapsed') {
      process.send!({ p99Ms: quantile(elapsed, 0.99) });
      elapsed = [];
    }
    if (message === 'stop') void app.close().then(() => db.destroy()).then(() => process.exit(0));
  });
}

function ask<T>(child: ChildProcess, message?: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    if (message) child.send(message);
  });
}

interface Figures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** The server's own time for 99 % of the run's requests was at most this (ms, a bucket bound of `sluice_http_request_duration_seconds`). */
  serverP99AtMostMs?: number;
  /** The server's own p99 exactly (ms): the nearest-rank p99 of the run's `reply.elapsedTime`, what that metric observes; the growth between sizes is computed from it. */
  serverP99Ms?: number;
}

/** The server's p99 as printed: `≤ 1 ms`, `> 10000 ms` past the largest bucket, `?` without one. */
function serverP99(ms: number | undefined): string {
  if (ms === undefined) return '?';
  return Number.isFinite(ms) ? `≤ ${ms} ms` : '> 10000 ms';
}

/**
 * Loads `path` with autocannon (10 connections): a 1 s warm-up, then DURATION seconds measured.
 * `child`, when given, is asked for its metrics (exposition text) around the measured part, for
 * the server's own p99.
 */
async function measure(port: number, path: (i: number) => string, child?: ChildProcess): Promise<Figures> {
  let i = 0;
  const run = (duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: 10,
      duration,
      requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: path(i++) }) }],
    });
  await run(1); // warm-up: JIT, SQLite page cache, and for cached routes the page cache
  const before = child && (await ask<string>(child, 'metrics'));
  if (child) await ask(child, 'elapsed');
  const result = await run(DURATION);
  const exact = child ? (await ask<{ p99Ms: number | null }>(child, 'elapsed')).p99Ms : null;
  // The server's own p99: the request-duration bucket under which it answered 99 % of this run's requests.
  const after = child && before ? await ask<string>(child, 'metrics') : undefined;
  const server = after ? histogramQuantile(after, 'sluice_http_request_duration_seconds', 0.99, before) * 1000 : Number.NaN;
  return {
    requestsPerSecond: Math.round(result.requests.average), p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx, errors: result.errors,
    ...(Number.isNaN(server) ? {} : { serverP99AtMostMs: server }),
    // null over IPC: NaN is not JSON.
    ...(typeof exact === 'number' && Number.isFinite(exact) ? { serverP99Ms: exact } : {}),
  };
}

/** Beacons per second of the beacon_on run (BENCH_BEACON_RATE). */
const BEACON_RATE = Number(process.env.BENCH_BEACON_RATE ?? 200);

/**
 * Child process: sends analytics beacons to the server on `port` for `seconds` at BEACON_RATE per
 * second, for the collections `slugs` of contract `contract` (1 in 10 a view from one of 50 sites,
 * the others 20 impressions and a click among 40 of the collection's items, as a wall shows);
 * reports how many were sent and answered 2xx. `control`: the same requests to a path no route
 * serves (404), to tell the cost of counting from the cost of any request at that rate.
 */
async function beaconLoad(port: number, seconds: number, contract: string, slugs: string[], control: boolean): Promise<void> {
  const perCollection = Math.ceil(ITEMS / COLLECTIONS);
  const itemId = (n: number) => `${SERVICES[n % SERVICES.length]}_${n.toString(36)}`;
  const body = (i: number) => {
    const c = i % slugs.length;
    const pick = (k: number) => itemId(c * perCollection + ((i * 7 + k) % Math.min(40, perCollection)));
    const events = i % 10 === 0 ? { view: true, origin: `https://site${i % 50}.example` } : { impressions: Array.from({ length: 20 }, (_, k) => pick(k)), clicks: [pick(20)] };
    return { path: `/v1/publication/${contract}/beacon${control ? '-control' : ''}`, json: JSON.stringify({ q: slugs[c], page: 'wall', ...events }) };
  };
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 4,
    duration: seconds,
    overallRate: BEACON_RATE,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        setupRequest: (request) => {
          const next = body(i++);
          return { ...request, path: next.path, body: next.json };
        },
      },
    ],
  });
  process.send!({ sent: result.requests.total, answered2xx: result['2xx'] });
  process.exit(0);
}

/**
 * Bytes of the body of `path` as sent (fetch would decompress it), after one read before so that
 * the page is kept. autocannon reads every body as UTF-8 text, which costs it far more for a
 * compressed body than the server spends sending it, so the load runs send no Accept-Encoding.
 */
async function wireBytes(port: number, path: string, headers: Record<string, string>): Promise<number> {
  const once = () =>
    new Promise<number>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path, headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length)).on('end', () => resolve(bytes)).on('error', reject);
      }).on('error', reject);
    });
  await once();
  return once();
}

async function plans(db: Db, contractId: string, collectionId: string, now: number): Promise<string[]> {
  const base: ItemQuery = { contractId, collectionId, sinceMs: now - DAY, untilMs: now };
  const page: Page = { count: 20, offset: 0, sort: 'time', order: 'desc' };
  const cases: [string, CompiledQuery][] = [
    ['content', compilePage(db, { ...base, state: 'published' }, page)],
    ['content kudos', compilePage(db, { ...base, state: 'published' }, { ...page, sort: 'kudos' })],
    ['content trending', compilePage(db, { ...base, state: 'published' }, { ...page, sort: 'trending' })],
    ['content language', compilePage(db, { ...base, state: 'published', languages: ['de'] }, page)],
    ['queue all filters', compilePage(db, { ...base, sinceMs: now - 30 * DAY, services: ['rss'], types: ['link'], languages: ['en'], location: { ...CITIES[0]!, radius: 200 } }, { ...page, sort: 'kudos', order: 'asc' })],
    ['count', compileCount(db, { ...base, state: 'published' })],
    ['search', compileSearch(db, { ...base, sinceMs: now - 30 * DAY, state: 'published' }, { ...page, sort: 'relevance' }, parseSearch(SEARCH_PAIRS[0]!))],
  ];
  const out: string[] = [];
  for (const [name, query] of cases) {
    if (isPostgres(db)) {
      const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]));
      out.push(`${name}: ${rows.map((r) => r['QUERY PLAN'].trim()).join(' | ')}`);
    } else {
      const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
      out.push(`${name}: ${rows.map((r) => r.detail).join(' | ')}`);
    }
  }
  return out;
}

/** Bytes of the full-text index per item (issue 36): SQLite's FTS5 tables (dbstat), PostgreSQL's `search` column and GIN index. */
async function searchIndexBytesPerItem(db: Db): Promise<number> {
  if (isPostgres(db)) {
    const { rows } = await sql<{ bytes: string; n: string }>`select (select sum(pg_column_size(search)) from items) + pg_relation_size('items_search') as bytes, (select count(*) from items) as n`.execute(db);
    return Number(rows[0]!.bytes) / Number(rows[0]!.n);
  }
  const { rows } = await sql<{ bytes: number; n: number }>`select (select sum(pgsize) from dbstat where name like 'items_search%') as bytes, (select count(*) from items) as n`.execute(db);
  return Number(rows[0]!.bytes) / Number(rows[0]!.n);
}

/**
 * The search run's SQL alone, in this process (no server, no HTTP): 200 two-word searches
 * (`SEARCH_PAIRS`) over as many collections, most relevant first, 30 days; p50, p90, p99 in ms.
 */
async function searchSqlAlone(db: Db, contractId: string, collectionIds: string[], now: number): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const query = compileSearch(db, { contractId, collectionId: collectionIds[i % collectionIds.length]!, sinceMs: now - 30 * DAY, untilMs: now, state: 'published' }, { count: 20, offset: 0, sort: 'relevance', order: 'desc' }, parseSearch(SEARCH_PAIRS[i % SEARCH_PAIRS.length]!));
    const started = performance.now();
    await db.executeQuery(query);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  return `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms over ${times.length} queries`;
}

/** What the runs of one filled database need: its items, the bench contract, collections and token, and the time its items were dated from. */
interface Filled {
  items: number;
  contract: { id: string; slug: string };
  collections: { id: string; slug: string }[];
  token: string;
  now: number;
}

/**
 * Opens `databaseUrl`, migrates it, and reuses the items filled before or fills `count`
 * collections (`fill`); with
 * `details`, prints the query plans, the full-text index's size and the search SQL alone.
 */
async function prepare(databaseUrl: string, count: number, details: boolean): Promise<Filled> {
  const db = openDb(databaseUrl);
  try {
    await migrateToLatest(db);
    let now = Date.now();
    const started = performance.now();
    const kept = await filled(db, count);
    if (kept) {
      // The items' dates were spread over the 30 days before the fill: read as of then.
      const { rows } = await sql<{ at: number }>`select max(created_at) as at from items`.execute(db);
      now = Number(rows[0]!.at);
      console.log(`reused the items filled before in ${databaseUrl.startsWith('postgres') ? 'the PostgreSQL database' : databaseUrl}`);
    }
    const { contract, collections, token } = kept ?? (await fill(db, now, count));
    if (!kept) console.log(`filled ${count * Math.ceil(ITEMS / COLLECTIONS)} items in ${count} collections in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // A freshly loaded PostgreSQL table has no visibility map yet: its index-only scans read the
    // table until autovacuum comes, which it then does in the middle of the runs (offset 500 at
    // 7 requests/s). Vacuumed once here, as an operator would after a bulk load.
    if (!kept && isPostgres(db)) await sql`vacuum analyze items`.execute(db);
    if (details) {
      for (const line of await plans(db, contract.id, collections[0]!.id, now)) console.log(`plan ${line}`);
      console.log(`full-text index: ${Math.round(await searchIndexBytesPerItem(db))} bytes per item`);
      console.log(`search SQL alone: ${await searchSqlAlone(db, contract.id, collections.map((c) => c.id), now)}`);
    }
    return { items: count * Math.ceil(ITEMS / COLLECTIONS), contract, collections, token, now };
  } finally {
    await db.destroy();
  }
}

/**
 * The database of the smaller size beside `databaseUrl`: on SQLite the file `<path>.small`, on
 * PostgreSQL the schema `bench_small` of the same database (created here; libpq `options`).
 */
async function smallDatabase(databaseUrl: string): Promise<string> {
  if (!databaseUrl.startsWith('postgres')) return `${databaseUrl}.small`;
  const db = openDb(databaseUrl);
  try {
    await sql`create schema if not exists bench_small`.execute(db);
  } finally {
    await db.destroy();
  }
  const url = new URL(databaseUrl);
  url.searchParams.set('options', '-c search_path=bench_small');
  return url.toString();
}

/** A child server on the database; resolves with it and its port. */
async function serve(databaseUrl: string): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(new URL(import.meta.url).pathname, ['--serve', databaseUrl], { stdio: 'inherit', ...serverRuntime() });
  const { port } = await ask<{ port: number }>(child);
  return { child, port };
}

/** The reads measured at both sizes (every run but the baselines and the beacon runs). */
const READS = ['content', 'content_uncached', 'content_deep', 'content_built', 'content_kudos', 'content_trending', 'content_language', 'content_since', 'content_offset500', 'queue', 'count', 'search'];

/** The paths of each run on a filled database (`pageBytes`: the size of its default content page, for baseline_bytes). */
function runsOf(target: Filled, pageBytes: number): Record<string, (i: number) => string> {
  const { contract, collections, token } = target;
  const s = Math.floor(target.now / 1000);
  // Every request of an uncached run asks a page never asked before: a new `until` once every collection was read.
  const q = (i: number) => `q=${collections[i % collections.length]!.slug}`;
  const until = (i: number) => `until=${s - (Math.floor(i / collections.length) % 3000)}`;
  const content = `/v1/content/${contract.slug}`;
  const city = CITIES[0]!;
  return {
    baseline: () => '/bench/baseline',
    baseline_bytes: () => `/bench/bytes?bytes=${pageBytes}`,
    content: (i) => `${content}?${q(i)}`,
    content_uncached: (i) => `${content}?${q(i)}&${until(i)}`,
    content_deep: (i) => `${content}?${q(i)}&until=${s - 20 * 86_400 - (Math.floor(i / collections.length) % 3000)}&since=${s - 21 * 86_400}`,
    content_built: (i) => `${content}?${q(i)}&${until(i)}&offset=${Math.floor(i / collections.length) % 160}`,
    content_kudos: (i) => `${content}?${q(i)}&${until(i)}&sort=kudos`,
    content_trending: (i) => `${content}?${q(i)}&${until(i)}&sort=trending`,
    content_language: (i) => `${content}?${q(i)}&${until(i)}&language=${LANGUAGES[i % LANGUAGES.length]}`,
    content_since: (i) => `${content}?${q(i)}&${until(i)}&since=${s - 7 * 86_400}`,
    content_offset500: (i) => `${content}?${q(i)}&${until(i)}&since=${s - 7 * 86_400}&offset=500`,
    queue: (i) =>
      `/v1/queue/${contract.slug}?${q(i)}&access_token=${token}&service=rss,twitter,youtube&type=link,status,video&language=en,de,fr` +
      `&location=${city.longitude},${city.latitude},200&since=${s - 30 * 86_400}&until=${s}&sort=kudos&order=asc`,
    count: (i) => `/v1/count/${contract.slug}?${q(i)}&${until(i)}`,
    // Full-text search (issue 36): two words over the collection's 30 days, most relevant first, uncached.
    search: (i) => `${content}?${q(i)}&${until(i)}&since=${s - 30 * 86_400}&search=${encodeURIComponent(SEARCH_PAIRS[i % SEARCH_PAIRS.length]!)}`,
  };
}

/** The server p99 as printed: the metric's bucket bound and, in brackets, the exact figure. */
function serverP99Both(figures: Figures): string {
  return `${serverP99(figures.serverP99AtMostMs)}${figures.serverP99Ms !== undefined ? ` (${figures.serverP99Ms.toFixed(2)} ms)` : ''}`;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  // DATABASE_URL=postgres://… (an empty database) measures PostgreSQL; else a fresh SQLite file.
  const postgres = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined;
  const databaseUrl = postgres ?? `sqlite:${process.env.BENCH_DB ?? join(dir, 'bench.db')}`;
  const children: ChildProcess[] = [];
  try {
    // The same reads at a tenth of the items (issue 31 point 6: cost growth), in a database of its
    // own: a tenth of the collections, each as large as at the full size, so that every read does
    // the same work on pages of the same items (offset 500 finds as many items behind it) and
    // only the database's size differs.
    const smallUrl = await smallDatabase(databaseUrl);
    const small = await prepare(smallUrl, COLLECTIONS / 10, false);
    const big = await prepare(databaseUrl, COLLECTIONS, true);

    const { child, port } = await serve(databaseUrl);
    children.push(child);
    const smallServer = await serve(smallUrl);
    children.push(smallServer.child);
    const content = `/v1/content/${big.contract.slug}?q=${big.collections[0]!.slug}`;
    // The size of a default content page, for the baseline of the same size.
    const pageBytes = (await (await fetch(`http://127.0.0.1:${port}${content}`)).arrayBuffer()).byteLength;
    // The same page as a browser gets it once kept (asked a second time): gzip-compressed.
    const gzipBytes = await wireBytes(port, content, { 'accept-encoding': 'gzip, deflate, br' });
    console.log(`a default content page: ${pageBytes} bytes; kept and sent to a client that accepts gzip: ${gzipBytes} bytes`);
    const runs = runsOf(big, pageBytes);
    const smallRuns = runsOf(small, pageBytes);
    // The full size read over as many collections as the smaller size has: the per-collection
    // state a process keeps (heads, pages, items' JSON) is then as large at both sizes, and only
    // the database's size differs between the two figures the growth compares.
    const sameCollections = small.collections.length;
    const tenthRuns = runsOf({ ...big, collections: big.collections.slice(0, sameCollections) }, pageBytes);
    const tenthResults: Record<string, Figures> = {};
    const results: Record<string, Figures & { ratio?: { requestsPerSecond: number; p50: number; p99: number } }> = {};
    const smallResults: Record<string, Figures> = {};
    // The smaller size's server warmed up as the other is by the baselines (JIT, page cache), its figures dropped.
    await measure(smallServer.port, smallRuns.content_uncached!);
    console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (before the runs)`);
    // BENCH_RUNS=baseline,content,… measures only those (the baseline always).
    const only = process.env.BENCH_RUNS?.split(',');
    for (const [name, path] of Object.entries(runs)) {
      if (only && name !== 'baseline' && !only.includes(name)) continue;
      // The read at the smaller size first, right before the same read at the full size.
      if (READS.includes(name)) {
        const figures = (smallResults[name] = await measure(smallServer.port, smallRuns[name]!, smallServer.child));
        console.log(`${`${name}@${small.items}`.padEnd(26)} ${String(figures.requestsPerSecond).padStart(7)} req/s  p50 ${String(figures.p50Ms).padStart(3)} ms  p99 ${String(figures.p99Ms).padStart(3)} ms  server p99 ${serverP99Both(figures)}`);
        const tenth = (tenthResults[name] = await measure(port, tenthRuns[name]!, child));
        console.log(`${`${name}@${big.items}/${sameCollections}`.padEnd(26)} ${String(tenth.requestsPerSecond).padStart(7)} req/s  p50 ${String(tenth.p50Ms).padStart(3)} ms  p99 ${String(tenth.p99Ms).padStart(3)} ms  server p99 ${serverP99Both(tenth)}`);
      }
      const figures = await measure(port, path, child);
      const base = results.baseline ?? figures;
      const ratio = {
        requestsPerSecond: +(figures.requestsPerSecond / base.requestsPerSecond).toFixed(2),
        p50: +(figures.p50Ms / Math.max(base.p50Ms, 1)).toFixed(2),
        p99: +(figures.p99Ms / Math.max(base.p99Ms, 1)).toFixed(2),
      };
      results[name] = { ...figures, ratio };
      const after = await ask<{ maxRssBytes: number }>(child, 'memory');
      console.log(
        `${name.padEnd(26)} ${String(figures.requestsPerSecond).padStart(7)} req/s  p50 ${String(figures.p50Ms).padStart(3)} ms  p99 ${String(figures.p99Ms).padStart(3)} ms  ` +
          `ratio req/s ${ratio.requestsPerSecond}  p50 ${ratio.p50}  p99 ${ratio.p99}  server p99 ${serverP99Both(figures)}  non2xx ${figures.non2xx}  errors ${figures.errors}  ` +
          `peak memory so far ${Math.round(after.maxRssBytes / 1024 / 1024)} MB  load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
    // Beacon traffic on against off, in the same run (issue 35 point 4): the uncached content read.
    if (!only || only.includes('beacon_off') || only.includes('beacon_on')) {
      const off = await measure(port, runs.content_uncached!, child);
      // The beacons come from a process of their own, so that the two load generators do not share an event loop.
      const alongside = async (control: boolean) => {
        const args = ['--beacons', String(port), String(DURATION + 1), big.contract.slug, JSON.stringify(big.collections.map((c) => c.slug)), control ? 'control' : 'beacon'];
        const sender = fork(new URL(import.meta.url).pathname, args, { stdio: 'inherit' });
        const [figures, sent] = await Promise.all([measure(port, runs.content_uncached!, child), ask<{ sent: number; answered2xx: number }>(sender)]);
        return { ...figures, sent };
      };
      const on = await alongside(false);
      const control = await alongside(true);
      for (const [name, figures] of [['beacon_off', off], ['beacon_on', on], ['beacon_control', control]] as const) {
        results[name] = figures;
        console.log(`${name.padEnd(26)} ${String(figures.requestsPerSecond).padStart(7)} req/s  p50 ${String(figures.p50Ms).padStart(3)} ms  p99 ${String(figures.p99Ms).padStart(3)} ms  server p99 ${serverP99Both(figures)}  non2xx ${figures.non2xx}  errors ${figures.errors}`);
      }
      const ratio = (a: Figures, b: Figures) => ({ requestsPerSecond: +(a.requestsPerSecond / b.requestsPerSecond).toFixed(2), p50: +(a.p50Ms / Math.max(b.p50Ms, 1)).toFixed(2), p99: +(a.p99Ms / Math.max(b.p99Ms, 1)).toFixed(2) });
      const onOff = ratio(on, off);
      const onControl = ratio(on, control);
      results.beacon_on = { ...on, ratio: onOff };
      console.log(`beacons: ${on.sent.sent} sent at ${BEACON_RATE}/s, ${on.sent.answered2xx} answered 2xx; control: ${control.sent.sent} requests to an unserved path`);
      console.log(`content reads with the beacon on against off: ${onOff.requestsPerSecond} of the requests/s, p99 ${onOff.p99}×; against the control (as many requests, no counting): ${onControl.requestsPerSecond} of the requests/s, p99 ${onControl.p99}×`);
    }
    const memory = await ask<{ maxRssBytes: number; rss: number; heapUsed: number; heapTotal: number; external: number }>(child, 'memory');
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    const peakMemoryMB = mb(memory.maxRssBytes);
    console.log(`server peak memory ${peakMemoryMB} MB (at the end: rss ${mb(memory.rss)} MB, V8 heap ${mb(memory.heapUsed)} of ${mb(memory.heapTotal)} MB, external ${mb(memory.external)} MB)`);
    const load = loadavg().map((l) => +l.toFixed(2));
    console.log(`load average ${load.join(' ')} (after the runs)`);
    // Cost growth (issue 31 point 6): each read's server p99 (exact) at the full size over the same
    // at a tenth, both over as many collections (`tenthResults`); the full size over all its
    // collections beside it (`overAll`: the per-collection state ten times as large too).
    const growth: Record<string, { smallMs: number; bigMs: number; ratio: number; overAll?: number }> = {};
    for (const name of READS) {
      const a = smallResults[name]?.serverP99Ms;
      const b = tenthResults[name]?.serverP99Ms;
      if (a === undefined || b === undefined) continue;
      const all = results[name]?.serverP99Ms;
      growth[name] = { smallMs: +a.toFixed(3), bigMs: +b.toFixed(3), ratio: +(b / a).toFixed(2), ...(all !== undefined ? { overAll: +(all / a).toFixed(2) } : {}) };
      console.log(
        `server p99 of ${name.padEnd(18)} at ${big.items} items over the same at ${small.items} (${sameCollections} collections each): ${growth[name].ratio} (${b.toFixed(2)} ms against ${a.toFixed(2)} ms)` +
          (all !== undefined ? `; over all ${big.collections.length} collections: ${growth[name].overAll}` : ''),
      );
    }
    // The goals of issues 19 and 31 (docs/operations.md#reads-at-scale).
    // The one-parameter variants (content_deep and content_built, which show the paths the head and the pages by items do not serve, have no goal).
    const variants = Object.keys(results).filter((k) => k.startsWith('content_') && !['content_uncached', 'content_deep', 'content_built'].includes(k));
    const p99 = (name: string, ms: number) => (results[name] ? results[name].p99Ms <= ms : undefined);
    const sameBytes = results.content && results.baseline_bytes ? +(results.content.requestsPerSecond / results.baseline_bytes.requestsPerSecond).toFixed(2) : undefined;
    if (sameBytes !== undefined) console.log(`cached content against the baseline route answering the same ${pageBytes} bytes: ${sameBytes} of its requests/s`);
    if (results.content_uncached) console.log(`uncached content against the baseline: ${results.content_uncached.ratio!.requestsPerSecond} of its requests/s`);
    const goals = {
      cachedContentAtLeast08OfBaseline: results.content ? results.content.ratio!.requestsPerSecond >= 0.8 : undefined,
      cachedContentAtLeast09OfSameBytes: sameBytes !== undefined ? sameBytes >= 0.9 : undefined,
      uncachedAtLeast035OfBaseline: results.content_uncached ? results.content_uncached.ratio!.requestsPerSecond >= 0.35 : undefined,
      serverP99GrowthAtMost13: Object.keys(growth).length ? Object.values(growth).every((g) => g.ratio <= 1.3) : undefined,
      uncachedContentP99AtMost5ms: p99('content_uncached', 5),
      oneParameterVariantsP99AtMost8ms: variants.every((k) => results[k]!.p99Ms <= 8),
      queueP99AtMost10ms: p99('queue', 10),
      countP99AtMost2ms: p99('count', 2),
      // Server-side (issue 36): the server's own p99 of the search run.
      searchServerP99AtMost10ms: results.search?.serverP99AtMostMs !== undefined ? results.search.serverP99AtMostMs <= 10 : undefined,
      memoryAtMost250MB: peakMemoryMB <= 250,
    };
    for (const running of children) running.send('stop');
    console.log(JSON.stringify({ items: ITEMS, smallItems: small.items, collections: COLLECTIONS, durationSeconds: DURATION, connections: 10, loadAverage: load, results, smallResults, tenthResults, growth, peakMemoryMB, goals }));
  } finally {
    for (const running of children) running.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') await serveChild(process.argv[3]!);
else if (process.argv[2] === '--beacons') await beaconLoad(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!, JSON.parse(process.argv[6]!) as string[], process.argv[7] === 'control');
else await main();
