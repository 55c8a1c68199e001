/**
 * `npm run bench:collect` (issue 19, docs/services.md#polling): how many rss inputs collector
 * processes keep on schedule, against a local fake upstream (HTTP servers on BENCH_HOSTS loopback
 * addresses, default 50, i.e. 50 remote hosts to the collector's politeness, answering at once;
 * on PostgreSQL COLLECT_HOST_CONCURRENCY holds per host across the processes: issue 31).
 *
 * Two measures, on SQLite and, when a PostgreSQL URL is given (BENCH_DATABASE_URL, else
 * TEST_DATABASE_URL), on PostgreSQL:
 *
 *   schedule    BENCH_INPUTS rss inputs (default 10 000 on SQLite with one collector process,
 *               30 000 on PostgreSQL with three: `sluice serve --role collector` as real
 *               processes) on a BENCH_INTERVAL s interval (default 300), their first runs spread
 *               over one interval; the run lasts BENCH_DURATION s (default the interval + 30 s).
 *               Half the feeds never change (their stored ETag is answered 304 Not Modified),
 *               the other half give one new entry a poll (three entries a feed). The contract's
 *               filter is a chain of 3 sets. Printed: the poll lag (the request's arrival at the
 *               upstream − the input's due time: the seeded first run, then the end of the
 *               previous answer + the interval, a bound from below of the real due time, so the
 *               lag is if anything overstated) p50/p99/max, inputs due but never polled (counted
 *               with the lag they had reached at the end), polls, 304s, the collectors' CPU seconds
 *               per 1 000 polls (/proc, user + system) and peak memory (VmHWM) of each process.
 *   throughput  items/s from fetch to store (the collector's pool: fetch, parse, language,
 *               the 3-set chain in the filter pool, store): 200 inputs of 50 new entries each,
 *               after a warm-up of 40 such polls that is not measured (the collector's first
 *               second compiles code and loads the language detector and the filter threads),
 *               against a raw batched insert of the same items (`storeItems`, 1 000 a
 *               transaction) into another collection, in the same run: the ratio (goal ≥ 0.25).
 *               Also the collector's CPU per poll of a 304 against one of 50 new entries.
 *
 * Goal: p99 lag ≤ 5 s. Every figure is printed with the load average (the machine is shared);
 * the last line is one JSON object.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { startCollector } from '../src/collect/scheduler.ts';
import { startSharedCollector } from '../src/collect/postgres-collector.ts';
import type { ContentItem } from '../src/item.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { newId } from '../src/lib/ids.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract, setContractFilter } from '../src/store/contracts.ts';
import { type Db, isPostgres, openDb } from '../src/store/db.ts';
import { insertInputs } from '../src/store/inputs.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import type { NewInput } from '../src/store/tables.ts';
import { ownsEntries } from '../src/services/table.ts';

const INTERVAL_S = Number(process.env.BENCH_INTERVAL ?? 300);
const DURATION_S = Number(process.env.BENCH_DURATION ?? INTERVAL_S + 30);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 50);
const ROOT = new URL('../', import.meta.url).pathname;
const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const xml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const WORDS = 'news city council vote market river season team coach report school rain energy price street music festival study health court bridge storm island museum'.split(' ');

/** A fresh database: a SQLite file, or a new schema of the PostgreSQL database. */
export async function freshDatabase(kind: 'sqlite' | 'postgres', dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') return { url: `sqlite:${join(dir, `bench-${Date.now()}.db`)}`, drop: async () => {} };
  const schema = `bench_collect_${Date.now()}`;
  const admin = openDb(pgUrl!);
  await sql.raw(`create schema ${schema}`).execute(admin);
  await admin.destroy();
  const url = new URL(pgUrl!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const again = openDb(pgUrl!);
      await sql.raw(`drop schema ${schema} cascade`).execute(again);
      await again.destroy();
    },
  };
}

/** A contract whose filter is a chain of 3 sets (spam patterns, blocked authors, freshness), and a collection of it. */
export async function tenant(db: Db) {
  const now = Date.now();
  const contract = await createContract(db, `bench ${now}`, 'bench');
  // Collection's own cost: the bench's look-alike entries kept apart (bench:dedupe measures de-duplication).
  const collection = await createCollection(db, contract.id, { name: 'wall', dedupe: 'off' }, 'bench');
  const other = await createCollection(db, contract.id, { name: 'raw', dedupe: 'off' }, 'bench');
  const row = (id: string) => ({ id, contractId: contract.id, ...newRecordFields('bench', now) });
  const patterns = Array.from({ length: 200 }, (_, n) => `/\\bspamword${n}\\b/i`);
  await db.insertInto('filterLists').values([
    { ...row(newId(now)), name: 'words', type: 'patterns', entries: JSON.stringify(patterns), active: 1 },
    { ...row(newId(now)), name: 'blocked', type: 'strings', entries: JSON.stringify(Array.from({ length: 1000 }, (_, n) => `blocked${n}`)), active: 1 },
  ]).execute();
  const [words, blocked] = (await db.selectFrom('filterLists').select(['id', 'name']).where('contractId', '=', contract.id).orderBy('name', 'desc').execute()).map((l) => l.id);
  const sets = [
    { name: 'spam', rules: [{ operator: 'patternin', field: 'text', listId: words, not: false }, { operator: 'patternin', field: 'title', listId: words, not: false }], anyRule: 0 },
    { name: 'people', rules: [{ operator: 'in', field: 'user', listId: blocked, not: false }], anyRule: 0 },
    { name: 'fresh', rules: [{ operator: 'datediff', field: 'date', value: 5 * 365 * 86_400, not: false }], anyRule: 1 },
  ].map((set) => ({ ...row(newId(now)), name: set.name, rules: JSON.stringify(set.rules), preCondition: 'null', anyRule: set.anyRule, active: 1 }));
  await db.insertInto('filterSets').values(sets).execute();
  const chainId = newId(now);
  await db.insertInto('filterChains').values({ ...row(chainId), name: 'main', sets: JSON.stringify(sets.map((s) => s.id)), active: 1 }).execute();
  await setContractFilter(db, contract.id, chainId, 'bench');
  return { contract, collection, other };
}

export function inputRow(target: { contractId: string; collectionId: string }, url: string, nextRunAt: number, sourceState = '{}'): NewInput {
  const now = Date.now();
  return {
    id: newId(now), contractId: target.contractId, collectionId: target.collectionId, service: 'rss', type: 'feed', input: url,
    filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState, lastRun: null, lastSuccess: null, lastError: null,
    nextRunAt, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', now),
  };
}

interface FeedState {
  /** Served versions (200s). */
  version: number;
  /** Due time estimate, ms (undefined before its first due time is known). */
  due: number;
  polled: boolean;
}

/**
 * The fake upstream: feed `i` at `/f/<i>` on host `i % HOSTS`. A feed with `steady` never changes:
 * any If-None-Match gets 304. The others give `perPoll` new entries a poll (the newest three
 * stay listed when perPoll is 1). Each request's lag against the feed's due time is recorded.
 */
export async function startUpstream(perPoll: number, steady: (i: number) => boolean) {
  const feeds = new Map<number, FeedState>();
  const lags: number[] = [];
  let polls = 0;
  let notModified = 0;
  let window = { from: 0, to: Infinity };
  const servers: Server[] = [];
  const bases: string[] = [];
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const arrived = Date.now();
    const i = Number((req.url ?? '').split('/')[2]);
    const feed = feeds.get(i) ?? { version: 0, due: arrived, polled: false };
    feeds.set(i, feed);
    if (feed.due >= window.from && feed.due <= window.to) {
      lags.push(arrived - feed.due);
      polls++;
    }
    feed.polled = true;
    const done = () => (feed.due = Date.now() + INTERVAL_S * 1000);
    if (steady(i) && req.headers['if-none-match']) {
      notModified++;
      res.writeHead(304, { etag: '"v0"' }).end(done);
      return;
    }
    feed.version++;
    const first = Math.max(0, feed.version * perPoll - Math.max(perPoll, 3));
    const entries = [];
    for (let n = feed.version * perPoll - 1; n >= first; n--) {
      const w = (k: number) => WORDS[(i * 31 + n * 7 + k) % WORDS.length];
      entries.push(
        `<item><title>${xml(`${w(1)} ${w(2)} ${w(3)} story ${n}`)}</title><link>https://example.com/${i}/${n}</link><guid isPermaLink="false">f${i}-${n}</guid>` +
          `<description>${xml(`The ${w(4)} ${w(5)} met the ${w(6)} near the ${w(7)} for the ${w(8)} of the year.`)}</description>` +
          `<author>author${n % 50}@example.com (Author ${n % 50})</author><pubDate>${new Date(Date.now() - (feed.version * perPoll - n) * 60_000).toUTCString()}</pubDate></item>`,
      );
    }
    res.writeHead(200, { 'content-type': 'application/rss+xml', etag: `"v${feed.version}"` });
    res.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>Feed ${i}</title><link>https://example.com/${i}</link><description>bench</description>${entries.join('')}</channel></rss>`, done);
  };
  for (let h = 1; h <= HOSTS; h++) {
    const server = createServer({ keepAliveTimeout: 60_000 }, handler);
    await new Promise<void>((resolve) => server.listen(0, `127.0.0.${h}`, resolve));
    servers.push(server);
    bases.push(`http://127.0.0.${h}:${(server.address() as AddressInfo).port}`);
  }
  return {
    url: (i: number) => `${bases[i % HOSTS]}/f/${i}`,
    expect(i: number, due: number) {
      feeds.set(i, { version: 0, due, polled: false });
    },
    measure(from: number, to: number) {
      window = { from, to };
      lags.length = 0;
      polls = 0;
      notModified = 0;
    },
    /** The lags of the window, with inputs due in it and not polled by `end` at the lag they reached. */
    result(end: number) {
      let missed = 0;
      const all = [...lags];
      for (const feed of feeds.values()) {
        if (feed.due >= window.from && feed.due <= Math.min(window.to, end - 5_000)) {
          missed++;
          all.push(end - feed.due);
        }
      }
      all.sort((a, b) => a - b);
      const at = (q: number) => all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? 0;
      return { polls, notModified, missed, p50: at(0.5), p99: at(0.99), max: all.at(-1) ?? 0 };
    },
    close: () => Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))))),
  };
}

/** CPU seconds (user + system) and peak RSS (bytes) of a process, from /proc. */
function usage(pid: number): { cpu: number; peak: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = (Number(fields[11]) + Number(fields[12])) / 100;
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  return { cpu, peak };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** `sluice serve --role collector` as a real process (node src/main.ts, as `npm start` runs it); resolves once it listens. */
async function startCollectorProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts', '--role', 'collector'], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(await freePort()) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => process.stderr.write(chunk));
  for (let waited = 0; !out.includes('"status":"listening"'); waited += 100) {
    if (child.exitCode !== null || waited > 120_000) throw new Error(`the collector did not start: ${out}`);
    await sleep(100);
  }
  return child;
}

async function schedule(kind: 'sqlite' | 'postgres', dir: string, inputs: number, processes: number) {
  const database = await freshDatabase(kind, dir);
  const db = openDb(database.url);
  await migrateToLatest(db);
  const { contract, collection } = await tenant(db);
  const upstream = await startUpstream(1, (i) => i % 2 === 0);
  const start = Date.now() + 20_000 + processes * 5_000;
  const rows: NewInput[] = [];
  for (let i = 0; i < inputs; i++) {
    const due = start + Math.floor((i * INTERVAL_S * 1000) / inputs);
    upstream.expect(i, due);
    rows.push(inputRow({ contractId: contract.id, collectionId: collection.id }, upstream.url(i), due, i % 2 === 0 ? JSON.stringify({ etag: '"v0"' }) : '{}'));
  }
  for (let i = 0; i < rows.length; i += 5000) await db.transaction().execute((trx) => insertInputs(trx, rows.slice(i, i + 5000)));
  const env = { DATABASE_URL: database.url, DATA_DIR: dir, ALLOW_PRIVATE_FETCH: 'true', POLL_INTERVAL: String(INTERVAL_S), SLUICE_BOOTSTRAP: 'false', LOG_LEVEL: 'warn' };
  const children: ChildProcess[] = [];
  for (let p = 0; p < processes; p++) children.push(await startCollectorProcess(env));
  if (Date.now() > start) console.warn(`  (the collectors took ${Math.round((Date.now() - start) / 1000)} s more than planned to start)`);
  await sleep(Math.max(0, start - Date.now()));
  const end = start + DURATION_S * 1000;
  upstream.measure(start, end);
  const before = children.map((c) => usage(c.pid!));
  const loads: string[] = [];
  while (Date.now() < end) {
    await sleep(Math.min(30_000, end - Date.now()));
    loads.push(load());
  }
  const after = children.map((c) => usage(c.pid!));
  const result = upstream.result(Date.now());
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(undefined) : c.once('exit', resolve)))));
  await upstream.close();
  await db.destroy();
  await database.drop();
  const cpu = after.reduce((sum, u, i) => sum + u.cpu - before[i]!.cpu, 0);
  return {
    database: kind, inputs, processes, intervalS: INTERVAL_S, durationS: DURATION_S,
    lagP50Ms: result.p50, lagP99Ms: result.p99, lagMaxMs: result.max, missed: result.missed, polls: result.polls, notModified: result.notModified,
    cpuSecondsPer1000Polls: Number(((cpu / Math.max(1, result.polls)) * 1000).toFixed(2)),
    peakRssMb: after.map((u) => mb(u.peak)), loadAverages: loads,
  };
}

async function throughput(kind: 'sqlite' | 'postgres', dir: string) {
  const database = await freshDatabase(kind, dir);
  // As the collector opens it (src/server.ts): SQLite's checkpoints in a thread.
  const db = openDb(database.url, { checkpoints: 'thread' });
  await migrateToLatest(db);
  const { contract, collection, other } = await tenant(db);
  const FEEDS = 200;
  const PER_POLL = 50;
  const WARM_FEEDS = 40;
  const upstream = await startUpstream(PER_POLL, (i) => i >= FEEDS && i < 2 * FEEDS);
  const rows = Array.from({ length: FEEDS }, (_, i) => inputRow({ contractId: contract.id, collectionId: collection.id }, upstream.url(i), 0));
  // 304 feeds, for the cost of a poll that brings nothing.
  const steadyRows = Array.from({ length: FEEDS }, (_, i) => inputRow({ contractId: contract.id, collectionId: collection.id }, upstream.url(FEEDS + i), 0, JSON.stringify({ etag: '"v0"' })));
  const config = loadConfig({ DATABASE_URL: database.url, DATA_DIR: dir, ALLOW_PRIVATE_FETCH: 'true', LOG_LEVEL: 'silent' });
  const collector = isPostgres(db) ? await startSharedCollector({ db, config }, 3_600_000) : startCollector({ db, config }, 3_600_000);
  // Warm-up, not measured: WARM_FEEDS polls into a collection of their own, so that the measured
  // round finds the collector as it runs for days (code compiled, the language detector's tables
  // and the filter pool's threads loaded) and not as it is in its first second.
  const warm = await createCollection(db, contract.id, { name: 'warm-up', dedupe: 'off' }, 'bench');
  const warmRows = Array.from({ length: WARM_FEEDS }, (_, i) => inputRow({ contractId: contract.id, collectionId: warm.id }, upstream.url(2 * FEEDS + i), 0));
  await db.transaction().execute((trx) => insertInputs(trx, warmRows));
  await collector.tick();
  await collector.idle();
  await db.transaction().execute((trx) => insertInputs(trx, rows));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await collector.tick();
  await collector.idle();
  const collectMs = performance.now() - t0;
  const cpuFull = process.cpuUsage(cpu0);
  const stored = Number((await db.selectFrom('items').select((eb) => eb.fn.countAll().as('n')).where('collectionId', '=', collection.id).executeTakeFirst())!.n);
  const rejected = Number((await db.selectFrom('inputs').select((eb) => eb.fn.sum('rejected').as('n')).where('collectionId', '=', collection.id).executeTakeFirst())!.n ?? 0);
  await db.transaction().execute((trx) => insertInputs(trx, steadyRows));
  const cpu1 = process.cpuUsage();
  await collector.tick();
  await collector.idle();
  const cpuSteady = process.cpuUsage(cpu1);
  await collector.stop();
  await upstream.close();

  // The same items, parsed as the collector parsed them, stored raw into the other collection.
  const items = (await db.selectFrom('items').select('body').where('collectionId', '=', collection.id).execute()).map((row) => (typeof row.body === 'string' ? JSON.parse(row.body) : row.body) as ContentItem);
  const t1 = performance.now();
  for (let i = 0; i < items.length; i += 1000) {
    await db.transaction().execute((trx) => storeItems(trx, { collectionId: other.id, contractId: contract.id, inputId: 'raw', state: 'published' }, items.slice(i, i + 1000), ownsEntries));
  }
  const rawMs = performance.now() - t1;
  await db.destroy();
  await database.drop();
  const fetched = FEEDS * PER_POLL;
  const collectPerS = Math.round((fetched / collectMs) * 1000);
  const rawPerS = Math.round((items.length / rawMs) * 1000);
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  return {
    database: kind, fetched, stored, rejected, collectItemsPerS: collectPerS, rawInsertItemsPerS: rawPerS, ratio: Number((collectPerS / rawPerS).toFixed(2)),
    cpuMsPerPoll50New: Number((cpuMs(cpuFull) / FEEDS).toFixed(2)), cpuMsPerPoll304: Number((cpuMs(cpuSteady) / FEEDS).toFixed(2)), load: load(),
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-collect-'));
  const results: unknown[] = [];
  try {
    const kinds: ('sqlite' | 'postgres')[] = process.env.BENCH_ONLY ? [process.env.BENCH_ONLY as 'sqlite' | 'postgres'] : pgUrl ? ['sqlite', 'postgres'] : ['sqlite'];
    for (const kind of kinds) {
      console.log(`${kind}: throughput (load ${load()})`);
      const t = await throughput(kind, dir);
      results.push({ phase: 'throughput', ...t });
      console.log(`  fetch→store with a 3-set chain: ${t.collectItemsPerS} items/s; raw batched insert: ${t.rawInsertItemsPerS} items/s; ratio ${t.ratio} (goal ≥ 0.25); ${t.stored} stored, ${t.rejected} rejected of ${t.fetched}`);
      console.log(`  collector CPU per poll: ${t.cpuMsPerPoll50New} ms with 50 new entries, ${t.cpuMsPerPoll304} ms for a 304 (load ${t.load})`);
      const inputs = Number(process.env.BENCH_INPUTS ?? (kind === 'sqlite' ? 10_000 : 30_000));
      const processes = kind === 'sqlite' ? 1 : 3;
      console.log(`${kind}: ${inputs} inputs every ${INTERVAL_S} s, ${processes} collector process(es), ${DURATION_S} s (load ${load()})`);
      const s = await schedule(kind, dir, inputs, processes);
      results.push({ phase: 'schedule', ...s });
      console.log(`  poll lag p50 ${s.lagP50Ms} ms, p99 ${s.lagP99Ms} ms (goal ≤ 5000), max ${s.lagMaxMs} ms; never polled: ${s.missed}`);
      console.log(`  ${s.polls} polls (${s.notModified} answered 304); CPU ${s.cpuSecondsPer1000Polls} s per 1 000 polls; peak RSS ${s.peakRssMb.join(', ')} MB`);
      console.log(`  load average every 30 s: ${s.loadAverages.join(' | ')}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ bench: 'collect', results }));
}

if (import.meta.main) await main();
