/**
 * `npm run bench:feed-stall` (issue 30, point 3; docs/services.md#rss, "Entries per poll"): how
 * long one tenant's large feed and large collection hold the event loop, and what they cost in
 * memory, in one process with the API on a fresh database (SQLite, or PostgreSQL when
 * BENCH_DATABASE_URL is given).
 *
 *   idle        the event loop with nothing to do for 2 s: the machine's own noise (baseline)
 *   poll 100k   one poll (`refreshInput`) of an rss input whose feed holds 100 000 tiny entries
 *               (`<item><guid>N</guid></item>`, 3 MB), served from this process
 *   poll 300k   the same with 300 000 entries (9.5 MB, under the 10 MiB body cap)
 *   delete 100k `DELETE /collection/collections/{id}` of a collection (de-duplication on, as the
 *               API creates it) holding 100 000 items, stored before and not measured
 *
 * Per step: the longest time the event loop was held (the longest gap between ticks of a 5 ms
 * interval; perf_hooks `monitorEventLoopDelay`'s max beside it) and its ratio to the idle baseline; the process's resident memory before, its peak during the
 * step (VmHWM, reset before the step through /proc/self/clear_refs) and after 2 s. The last line
 * is one JSON object.
 */
import { writeFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.ts';
import { hashSecret, randomToken } from '../src/auth/secrets.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { createFetcher } from '../src/collect/fetch.ts';
import { refreshInput } from '../src/collect/refresh.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { createConsumer } from '../src/store/consumers.ts';
import { findInput } from '../src/store/inputs.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { ownsEntries } from '../src/services/table.ts';

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** The process's peak resident memory since the last reset (bytes), and the reset (Linux). */
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const resetPeak = () => {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the peak is then the process's since its start.
  }
};

interface Step {
  step: string;
  /** The longest time the event loop was held (ms), from a 5 ms ticker. */
  maxDelayMs: number;
  /** The same from perf_hooks `monitorEventLoopDelay` (10 ms resolution), for comparison. */
  eldMaxMs: number;
  ratio?: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
  note?: string;
}

/** Runs `work` with the event loop's delay and the memory watched. */
async function measure(step: string, work: () => Promise<string | void>): Promise<Step> {
  await sleep(500);
  const rssBefore = process.memoryUsage().rss;
  resetPeak();
  // The longest gap between two ticks of a 5 ms interval, less the interval: how long the event loop was held.
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 5);
    last = now;
  }, 5);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const note = await work();
  delay.disable();
  clearInterval(ticker);
  longest = Math.max(longest, performance.now() - last - 5);
  const rssPeak = Math.max(peakRss(), rssBefore);
  await sleep(2_000);
  const result: Step = { step, maxDelayMs: Math.round(longest), eldMaxMs: Math.round(delay.max / 1e6), rssBeforeMb: mb(rssBefore), rssPeakMb: mb(rssPeak), rssAfterMb: mb(process.memoryUsage().rss), ...(note ? { note } : {}) };
  console.log(JSON.stringify(result));
  return result;
}

const feeds = new Map<number, Buffer>();
/** A feed of `n` tiny entries. */
const feed = (n: number) => {
  let body = feeds.get(n);
  if (!body) {
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(`<item><guid>${i}</guid></item>`);
    body = Buffer.from(`<?xml version="1.0"?><rss version="2.0"><channel><title>big</title>${items.join('')}</channel></rss>`);
    feeds.set(n, body);
  }
  return body;
};

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-stall-'));
const pgUrl = process.env.BENCH_DATABASE_URL || undefined;
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', RATE_LIMIT_CONSUMER: '0', ...(pgUrl ? { DATABASE_URL: pgUrl } : {}) });
const db = openDb(config.databaseUrl);
await migrateToLatest(db);
const app = await buildApp(config, { db });
const source = createServer((req, res) => {
  const body = feed(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n')));
  res.writeHead(200, { 'content-type': 'application/rss+xml' });
  res.end(body);
});
await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
const sourceBase = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
const fetcher = createFetcher({ allowPrivate: true });

const contract = await createContract(db, `Bench ${Date.now()}`, 'bench');
const consumer = await createConsumer(db, { type: 'client', name: 'bench robot', email: null, language: null, username: null, passwordHash: null, clientId: randomToken().slice(0, 24), secretHash: await hashSecret(randomToken()) });
await grant(db, consumer.id, contract.id);
const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 3600, withRefresh: false });
const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
  const response = await app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload: payload as object } : {}) });
  return { status: response.statusCode, body: response.body ? (JSON.parse(response.body) as any) : null };
};
const collection = async (name: string) => {
  const created = await api('POST', '/collection/collections', { contractId: contract.id, name });
  if (created.status !== 201) throw new Error(`collection: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body._id as string;
};
const services = config.services;

// Warm-up (not measured): the language model and the code of a poll, with a small feed.
const poll = async (n: number) => {
  // A collection per feed: the feeds' guids overlap.
  const collectionId = await collection(`Feed ${n}`);
  const input = await api('POST', '/collection/inputs', { contractId: contract.id, collectionId, service: 'rss', type: 'feed', input: `${sourceBase}/feed?n=${n}` });
  if (input.status !== 201) throw new Error(`input: ${input.status} ${JSON.stringify(input.body)}`);
  const started = performance.now();
  const stored = await refreshInput(db, (await findInput(db, contract.id, input.body._id))!, { fetch: fetcher, services, pollInterval: 300 });
  const status = (await api('GET', `/collection/inputs/${input.body._id}`)).body.status;
  return `${stored} items stored in ${Math.round(performance.now() - started)} ms; lastError ${JSON.stringify(status.lastError)}; warnings ${JSON.stringify(status.warnings.map((w: { code: string; count: number }) => `${w.code} ${w.count}`))}`;
};
await poll(10);
feed(100_000);
feed(300_000);

const steps: Step[] = [];
console.log(`load ${load()}`);
const idle = await measure('idle 2 s', () => sleep(2_000));
steps.push(idle);
steps.push(await measure('poll 100k', () => poll(100_000)));
steps.push(await measure('poll 300k', () => poll(300_000)));

const archive = await collection('Archive');
const fillStarted = performance.now();
for (let from = 0; from < 100_000; from += 5_000) {
  const items: ContentItem[] = Array.from({ length: 5_000 }, (_, k) => {
    const i = from + k;
    return { id: `rss_a${i}`, service: 'rss', type: 'link', url: `https://archive.example/${i}`, text: `Story number ${i} of the archive, told at length ${i * 7}.`, tags: [], language: 'en', date: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), author: { name: null, username: null, userid: null, url: null }, media: null, kudos: { score: 0 } };
  });
  await db.transaction().execute((trx) => storeItems(trx, { collectionId: archive, contractId: contract.id, inputId: '0'.repeat(24), state: 'published' }, items, ownsEntries));
}
console.log(`filled 100 000 items in ${Math.round(performance.now() - fillStarted)} ms`);
steps.push(await measure('delete 100k', async () => {
  const started = performance.now();
  const deleted = await api('DELETE', `/collection/collections/${archive}`);
  return `DELETE → ${deleted.status} in ${Math.round(performance.now() - started)} ms`;
}));
for (const step of steps) step.ratio = Math.round((step.maxDelayMs / Math.max(1, idle.maxDelayMs)) * 10) / 10;

await fetcher.close();
source.closeAllConnections();
source.close();
await app.close();
await db.destroy();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ database: pgUrl ? 'postgres' : 'sqlite', load: load(), steps }));
process.exit(0);
