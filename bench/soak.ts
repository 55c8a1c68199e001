/**
 * `npm run soak` (issue 19; docs/operations.md#soak; not part of `npm test`): one `sluice serve`
 * process (role all, SQLite in a temporary folder) as a real child process under mixed load for
 * SOAK_SECONDS (default 600), everything on 127.0.0.1:
 *
 *   collection   SOAK_INPUTS (default 1 000) rss inputs polling a local fake upstream every
 *                SOAK_POLL_INTERVAL s (default 60); each feed offers 2 new entries a minute
 *                (the last 10 in every answer); 1 feed in 200 answers 503 every other minute
 *   reads        GET /v1/content and /v1/count at SOAK_READS requests/s (default 400,
 *                autocannon), over three collections and query variants, 1 in 10 uncached
 *   moderation   every 0.5 s: unpublished items of the moderated collection published, and
 *                published ones unpublished, through PATCH /v1/queue (bulk)
 *   streams      three content streams (Server-Sent Events) per public collection, open all along
 *   management   every 3 s: an input created (a new feed), an input replaced (its filter set
 *                attached or detached), and a filter set created or updated
 *
 * It samples the child's resident memory every second (/proc/<pid>/status VmRSS) and its
 * /metrics (METRICS_PORT) every minute, and ends with checks, printed with the figures and
 * `os.loadavg()` (the machine may be shared: read the figures with the load):
 *
 *   - no 5xx: the reads, moderation and management answers, and the process's own
 *     sluice_http_request_duration_seconds;
 *   - no failed poll the upstream did not cause: sluice_poll_duration_seconds{outcome="error"|
 *     "filter_error"} is 0, and source_error polls are at most the 503s the upstream sent;
 *   - memory flat: the peak RSS of the last minute within 10 % of the second minute's (the floor,
 *     the lowest RSS of each, is printed too: garbage collection moves the peaks; minutes
 *     are SOAK_SECONDS/3 long when the run is shorter than 3 minutes);
 *   - the database as expected: the items stored equal the distinct entries the upstream served
 *     (less at most the last polls' 10 entries each), and the file holds at most 16 KiB an item.
 *
 * Exits 1 when a check fails. The last line printed is one JSON object of the figures.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import { hashSecret, randomToken } from '../src/auth/secrets.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { createCollection } from '../src/store/collections.ts';
import { createConsumer } from '../src/store/consumers.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { histogramQuantile } from './figures.ts';
import { random } from './random.ts';
import { serverRuntime } from './runtime.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const INPUTS = Number(process.env.SOAK_INPUTS ?? 1000);
const READS = Number(process.env.SOAK_READS ?? 400);
const POLL_INTERVAL = Number(process.env.SOAK_POLL_INTERVAL ?? 60);
const CONCURRENCY = 32;
/** Entries in every feed answer; a new entry every NEW_ENTRY_MS. */
const WINDOW = 10;
const NEW_ENTRY_MS = 30_000;
const FAILING_EVERY = 200;
/** Length of a "minute" of the memory check, s. */
const MINUTE = Math.min(60, Math.floor(SECONDS / 3));
const MAX_BYTES_PER_ITEM = 16 * 1024;

const WORDS = 'harbour council vote market river season team coach report school rain energy price street music festival study health court bridge ferry tide storm museum library train garden'.split(' ');
const xml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fake upstream: feed `n` offers entries 0 … count(n) − 1, the last WINDOW in each answer. */
function startUpstream(t0: number) {
  const servedUpTo = new Map<number, number>();
  let distinctServed = 0;
  let failures = 0;
  let answers = 0;
  let frozenAt: number | undefined;
  const count = (n: number, now: number) => 3 + Math.floor(((frozenAt ?? now) - t0 + (n % 60) * 500) / NEW_ENTRY_MS);
  const server = createServer((req, res) => {
    const n = Number(/^\/feed\/(\d+)$/.exec(req.url ?? '')?.[1] ?? NaN);
    if (!Number.isInteger(n)) return void res.writeHead(404).end();
    const now = Date.now();
    if (n % FAILING_EVERY === 7 && Math.floor((now - t0) / 60_000) % 2 === 1 && frozenAt === undefined) {
      failures++;
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
    }
    const hi = count(n, now);
    const lo = Math.max(0, hi - WINDOW);
    const entries: string[] = [];
    for (let k = hi - 1; k >= lo; k--) {
      const rnd = random(n * 100_003 + k);
      const words = (m: number) => Array.from({ length: m }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
      entries.push(
        `<item><title>${xml(`${words(6)} ${n}-${k}`)}</title><link>http://soak.example/${n}/${k}</link><guid isPermaLink="false">soak-${n}-${k}</guid>` +
          `<description>${xml(`${words(40)} (${n}/${k})`)}</description><pubDate>${new Date(t0 + k * NEW_ENTRY_MS).toUTCString()}</pubDate></item>`,
      );
    }
    answers++;
    res.writeHead(200, { 'content-type': 'application/rss+xml' });
    res.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>Feed ${n}</title><link>http://soak.example/${n}</link><description>soak</description>${entries.join('')}</channel></rss>`, () => {
      const before = servedUpTo.get(n) ?? 0;
      if (hi > before) {
        distinctServed += hi - Math.max(before, lo);
        servedUpTo.set(n, hi);
      }
    });
  });
  return {
    server,
    freeze: () => (frozenAt = Date.now()),
    get figures() {
      return { distinctServed, failures, answers };
    },
  };
}

/** The samples of an exposition text whose name is `name` and whose labels include `labels`, summed. */
function metric(text: string, name: string, labels: Record<string, string | RegExp> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const found: Record<string, string> = {};
    for (const pair of line.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => (typeof v === 'string' ? found[k] === v : v.test(found[k] ?? '')))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

function rssOf(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-soak-'));
  const dbPath = join(dir, 'soak.db');
  const t0 = Date.now();
  const upstream = startUpstream(t0);
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  const feedBase = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/feed`;

  // The tenant: a contract, three public collections and a moderated one, a client with a token.
  const db = openDb(`sqlite:${dbPath}`);
  await migrateToLatest(db);
  const contract = await createContract(db, 'Soak Harbour News', 'soak');
  const collections: Awaited<ReturnType<typeof createCollection>>[] = [];
  for (const name of ['Port', 'City', 'Weather', 'Moderated']) collections.push(await createCollection(db, contract.id, { name }, 'soak'));
  const client = await createConsumer(db, { type: 'client', name: 'soak robot', email: null, language: null, username: null, passwordHash: null, clientId: randomToken().slice(0, 24), secretHash: await hashSecret(randomToken()) });
  await grant(db, client.id, contract.id);
  const { access_token: token } = await issueTokens(db, client.id, { ttlSeconds: SECONDS + 3600, withRefresh: false });
  await db.destroy();

  const stderr = createWriteStream(join(dir, 'serve.log'));
  // As `npm start` runs it (its Node flags and environment): the memory measured is the service's.
  const runtime = serverRuntime();
  const child = spawn(process.execPath, [...runtime.execArgv, new URL('../src/cli.ts', import.meta.url).pathname, 'serve'], {
    env: {
      ...runtime.env,
      DATA_DIR: dir, DATABASE_URL: `sqlite:${dbPath}`, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn', SLUICE_BOOTSTRAP: 'false', ALLOW_PRIVATE_FETCH: 'true',
      POLL_INTERVAL: String(POLL_INTERVAL), COLLECT_CONCURRENCY: String(CONCURRENCY), RATE_LIMIT_PUBLIC: '0', RATE_LIMIT_CONSUMER: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.pipe(stderr);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const first = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
    exited.then((code) => {
      throw new Error(`sluice serve exited (${code}); see ${join(dir, 'serve.log')}`);
    }),
  ]);
  const summary = JSON.parse(first) as { url: string; metricsUrl: string };
  const pid = child.pid!;
  const scrape = async () => (await fetch(summary.metricsUrl)).text();
  console.log(`sluice serve pid ${pid} at ${summary.url}, metrics ${summary.metricsUrl}; data ${dir}; ${SECONDS} s, ${INPUTS} inputs every ${POLL_INTERVAL} s, ${READS} reads/s`);

  const statuses = new Map<string, Map<number, number>>();
  const note = (what: string, status: number) => {
    const of = statuses.get(what) ?? new Map<number, number>();
    of.set(status, (of.get(status) ?? 0) + 1);
    statuses.set(what, of);
  };
  const api = async (what: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${summary.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    note(what, res.status);
    const text = await res.text();
    if (res.status >= 300) console.log(`${what}: ${method} ${path} → ${res.status} ${text.slice(0, 300)}`);
    return res.status < 300 && text ? (JSON.parse(text) as unknown) : undefined;
  };

  // The inputs, through the management API: 3 public collections (published at once) and a moderated one.
  const inputIds: string[] = [];
  const inputBody = (n: number) => {
    const collection = collections[n % 10 === 9 ? 3 : n % 3]!;
    return { contractId: contract.id, collectionId: collection.id, service: 'rss', type: 'feed', input: `${feedBase}/${n}`, display: collection.name !== 'Moderated' };
  };
  for (let start = 0; start < INPUTS; start += 250) {
    const created = (await api('inputs.create', 'POST', '/collection/inputs', Array.from({ length: Math.min(250, INPUTS - start) }, (_, i) => inputBody(start + i)))) as { _id: string }[] | undefined;
    if (!created) throw new Error('creating the inputs failed');
    inputIds.push(...created.map((input) => input._id));
  }
  const set = (await api('sets.create', 'POST', '/collection/sets', {
    name: 'No casino', contractId: contract.id, rules: [{ operator: 'pattern', field: 'text', value: '/casino/i', not: false }], preCondition: { operator: 'exists', field: 'text', not: false },
  })) as { _id: string };
  console.log(`created ${inputIds.length} inputs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  const rss: { at: number; bytes: number }[] = [];
  const sampler = setInterval(() => {
    const bytes = rssOf(pid);
    if (bytes) rss.push({ at: (Date.now() - started) / 1000, bytes });
  }, 1000);

  // Reads: autocannon at READS requests/s.
  const slug = contract.slug;
  const publicQs = collections.slice(0, 3).map((c) => c.slug);
  let r = 0;
  const readPath = () => {
    const i = r++;
    const q = publicQs[i % 3]!;
    const variant = Math.floor(i / 3) % 6;
    const uncached = i % 10 === 0 ? `&until=${Math.floor(Date.now() / 1000) - (i % 300)}` : '';
    if (variant === 5) return `/v1/count/${slug}?q=${q}${uncached}`;
    return `/v1/content/${slug}?q=${q}${['', '&count=50', '&offset=20', '&sort=kudos', '&count=5'][variant]}${uncached}`;
  };
  const reads = autocannon({
    url: summary.url,
    connections: 16,
    overallRate: READS,
    duration: SECONDS,
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: readPath() }) }],
  });

  // Publications listening: three content streams (Server-Sent Events) per public collection, open all along.
  const streams = await Promise.all(
    publicQs.flatMap((q) =>
      [0, 1, 2].map(async () => {
        const controller = new AbortController();
        const res = await fetch(`${summary.url}/v1/content/${slug}/stream?q=${q}`, { signal: controller.signal });
        note('content.stream', res.status);
        const stream = { controller, bytes: 0, reading: Promise.resolve() };
        stream.reading = (async () => {
          try {
            for await (const chunk of res.body!) stream.bytes += (chunk as Uint8Array).byteLength;
          } catch {
            // aborted at the end
          }
        })();
        return stream;
      }),
    ),
  );

  // Moderation: publish the moderated collection's arrivals, unpublish some published, back and forth.
  const moderated = collections[3]!.slug;
  let moderations = 0;
  const moderation = (async () => {
    for (let round = 0; Date.now() < deadline; round++) {
      const state = round % 3 === 2 ? 'published' : 'unpublished';
      const items = (await api('queue.read', 'GET', `/v1/queue/${slug}?q=${moderated}&state=${state}&count=20`)) as { id: string }[] | undefined;
      if (items?.length) {
        await api('queue.moderate', 'PATCH', `/v1/queue/${slug}?q=${moderated}`, { state: state === 'published' ? 'unpublished' : 'published', ids: items.map((item) => item.id) });
        moderations += items.length;
      }
      await sleep(500);
    }
  })();

  // Management: new inputs (new feeds), inputs replaced, the filter set updated.
  let managed = 0;
  const management = (async () => {
    for (let round = 0; Date.now() < deadline; round++) {
      const n = INPUTS + round;
      const created = (await api('inputs.create', 'POST', '/collection/inputs', inputBody(n))) as { _id: string } | undefined;
      if (created) inputIds.push(created._id);
      const m = (round * 7919) % INPUTS;
      await api('inputs.replace', 'PUT', `/collection/inputs/${inputIds[m]}`, { ...inputBody(m), ...(round % 2 === 0 ? { filterId: set._id } : {}) });
      if (round % 3 === 0) await api('sets.update', 'PATCH', `/collection/sets/${set._id}`, { name: `No casino ${round}` });
      if (round % 10 === 0) await api('sets.create', 'POST', '/collection/sets', { name: `Set ${round}`, contractId: contract.id, rules: [{ operator: 'pattern', field: 'title', value: '/jackpot/i', not: false }], preCondition: { operator: 'exists', field: 'text', not: false } });
      managed++;
      await sleep(3000);
    }
  })();

  // Progress every minute; the scrape after the first two minutes is the baseline of the steady lag.
  let settled: string | undefined;
  const progress = setInterval(() => {
    void scrape().then((text) => {
      const at = Math.round((Date.now() - started) / 1000);
      if (settled === undefined && at >= 2 * MINUTE) settled = text;
      const peak = Math.max(...rss.filter((s) => s.at > at - 60).map((s) => s.bytes));
      console.log(
        `${at} s: rss peak ${(peak / 2 ** 20).toFixed(0)} MB, polls ${metric(text, 'sluice_poll_duration_seconds_count')}, items ${metric(text, 'sluice_collected_items_total', { outcome: 'stored' })}, ` +
          `heap ${(metric(text, 'nodejs_heap_size_used_bytes') / 2 ** 20).toFixed(0)}/${(metric(text, 'nodejs_heap_size_total_bytes') / 2 ** 20).toFixed(0)} MB, external ${(metric(text, 'nodejs_external_memory_bytes') / 2 ** 20).toFixed(0)} MB, ` +
          `lag p99 ≤ ${histogramQuantile(text, 'sluice_collection_lag_seconds', 0.99)} s, requests ${metric(text, 'sluice_http_request_duration_seconds_count')}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      );
    });
  }, Number(process.env.SOAK_PROGRESS_SECONDS ?? 60) * 1000);

  const readResult = await reads;
  await Promise.all([moderation, management]);
  const openStreams = metric(await scrape(), 'sluice_stream_connections', { audience: 'public' });
  for (const stream of streams) stream.controller.abort();
  await Promise.all(streams.map((stream) => stream.reading));
  clearInterval(progress);
  clearInterval(sampler);

  // Settle: no new entries from now; the polls under way finish.
  upstream.freeze();
  await sleep(5000);
  const text = await scrape();
  const load = loadavg();
  child.kill('SIGTERM');
  const code = await exited;

  const sqlite = new SqliteDatabase(dbPath, { readonly: true });
  const items = (sqlite.prepare('select count(*) as n from items').get() as { n: number }).n;
  sqlite.close();
  const size = (path: string) => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  const dbBytes = size(dbPath) + size(`${dbPath}-wal`);

  const readStatus = readResult.statusCodeStats as unknown as Record<string, { count: number }>;
  const fiveXx = (of: Map<number, number> | Record<string, { count: number }>) =>
    of instanceof Map ? [...of].filter(([s]) => s >= 500).reduce((sum, [, c]) => sum + c, 0) : Object.entries(of).filter(([s]) => Number(s) >= 500).reduce((sum, [, v]) => sum + v.count, 0);
  const served = upstream.figures;
  const polls = {
    total: metric(text, 'sluice_poll_duration_seconds_count'),
    success: metric(text, 'sluice_poll_duration_seconds_count', { outcome: 'success' }),
    sourceError: metric(text, 'sluice_poll_duration_seconds_count', { outcome: 'source_error' }),
    error: metric(text, 'sluice_poll_duration_seconds_count', { outcome: 'error' }),
    filterError: metric(text, 'sluice_poll_duration_seconds_count', { outcome: 'filter_error' }),
  };
  const peakIn = (from: number, to: number) => Math.max(0, ...rss.filter((s) => s.at >= from && s.at < to).map((s) => s.bytes));
  /** The lowest RSS of a minute: what is left after garbage collection, the figure a leak moves. */
  const floorIn = (from: number, to: number) => Math.min(...rss.filter((s) => s.at >= from && s.at < to).map((s) => s.bytes));
  const secondMinute = peakIn(MINUTE, 2 * MINUTE);
  const lastMinute = peakIn(SECONDS - MINUTE, SECONDS + 1);
  const figures = {
    seconds: SECONDS,
    inputs: inputIds.length,
    loadavg: load.map((l) => Number(l.toFixed(2))),
    reads: { requestsPerSecond: Math.round(readResult.requests.average), p50Ms: readResult.latency.p50, p99Ms: readResult.latency.p99, total: readResult.requests.total, non2xx: readResult.non2xx, errors: readResult.errors, timeouts: readResult.timeouts },
    moderatedItems: moderations,
    streams: { open: openStreams, bytesReceived: streams.reduce((sum, stream) => sum + stream.bytes, 0) },
    managementRounds: managed,
    fiveXx: { reads: fiveXx(readStatus), api: [...statuses.values()].reduce((sum, of) => sum + fiveXx(of), 0), metrics: metric(text, 'sluice_http_request_duration_seconds_count', { status_code: /^5/ }) },
    apiStatuses: Object.fromEntries([...statuses].map(([what, of]) => [what, Object.fromEntries(of)])),
    polls,
    pollsPerSecond: Number((polls.total / (SECONDS + 5)).toFixed(1)),
    lagSeconds: {
      p50: histogramQuantile(text, 'sluice_collection_lag_seconds', 0.5),
      p99: histogramQuantile(text, 'sluice_collection_lag_seconds', 0.99),
      // Without the first two minutes, whose first polls of every input all fall due at once.
      steadyP50: settled ? histogramQuantile(text, 'sluice_collection_lag_seconds', 0.5, settled) : null,
      steadyP99: settled ? histogramQuantile(text, 'sluice_collection_lag_seconds', 0.99, settled) : null,
    },
    upstream: served,
    items: { inDatabase: items, distinctServed: served.distinctServed, storedByMetrics: metric(text, 'sluice_collected_items_total', { outcome: 'stored' }) + metric(text, 'sluice_collected_items_total', { outcome: 'duplicate' }) },
    pageCache: { hits: metric(text, 'sluice_page_cache_hits_total'), misses: metric(text, 'sluice_page_cache_misses_total') },
    memory: { minuteSeconds: MINUTE, secondMinutePeakMB: Math.round(secondMinute / 2 ** 20), lastMinutePeakMB: Math.round(lastMinute / 2 ** 20), ratio: Number((lastMinute / secondMinute).toFixed(3)), secondMinuteFloorMB: Math.round(floorIn(MINUTE, 2 * MINUTE) / 2 ** 20), lastMinuteFloorMB: Math.round(floorIn(SECONDS - MINUTE, SECONDS + 1) / 2 ** 20), overallPeakMB: Math.round(Math.max(...rss.map((s) => s.bytes)) / 2 ** 20) },
    database: { bytes: dbBytes, bytesPerItem: Math.round(dbBytes / Math.max(1, items)) },
    exitCode: code,
  };
  const checks: [string, boolean][] = [
    ['no 5xx', figures.fiveXx.reads === 0 && figures.fiveXx.api === 0 && figures.fiveXx.metrics === 0],
    ['no failed poll the upstream did not cause', polls.error === 0 && polls.filterError === 0 && polls.sourceError <= served.failures],
    ['memory flat (last minute peak within 10 % of the second minute)', lastMinute > 0 && secondMinute > 0 && lastMinute <= secondMinute * 1.1],
    ['items stored = distinct entries served (less the last polls in flight)', items <= served.distinctServed && items >= served.distinctServed - WINDOW * CONCURRENCY],
    [`database at most ${MAX_BYTES_PER_ITEM} bytes an item`, dbBytes <= Math.max(1, items) * MAX_BYTES_PER_ITEM],
    ['sluice serve stopped cleanly', code === 0],
  ];
  for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  console.log(JSON.stringify({ ...figures, checks: Object.fromEntries(checks) }));
  upstream.server.close();
  if (checks.every(([, ok]) => ok)) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir} (serve.log) for a look`);
  return checks.every(([, ok]) => ok) ? 0 : 1;
}

process.exitCode = await main();
