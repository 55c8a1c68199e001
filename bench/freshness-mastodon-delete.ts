/**
 * Removal freshness of the Mastodon streaming path (issue 34 point 1, docs/api.md#removed-at-the-source;
 * `npm run bench:freshness` runs every bench/freshness-*.ts): a fake Mastodon instance on
 * 127.0.0.1 (test/fake-mastodon.ts) publishes `items` statuses with one tag, evenly over
 * `seconds`, and after each publication sends `delete` for the status published `LAG` earlier, so
 * every deleted status is among the newest on the wall when its delete is sent. An in-process app
 * and the collector's stream listener (SQLite) receive them for one tag input; a reader polls
 * `GET /v1/content/{contract}?q=…&count=100` (CONTENT_MAX_AGE=0: the content cache still trusts
 * the collection's version for up to a second, as in production) every 50 ms. Measured per
 * status: from sending `delete` to the first read, started after it, that no longer holds it
 * (only statuses seen before their delete count). Reported as p50 and p99; the goal is
 * p99 under 5 s (bench:freshness's column tests the stricter 2 s of publications).
 *
 * Run alone: `node bench/freshness-mastodon-delete.ts [items] [seconds]` (default 1000 over 60).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { streamDeps } from '../src/collect/streams.ts';
import { startMastodonStreams } from '../src/services/mastodon/stream/streaming.ts';
import { loadConfig } from '../src/config.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { findInput, insertInputs } from '../src/store/inputs.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { type FakeStatus, startFakeMastodon } from '../test/fake-mastodon.ts';
import { type Freshness, quantile } from './figures.ts';

const READ_EVERY_MS = 50;
/** A status is deleted this many publications after its own. */
const LAG = 20;

/** Publishes and deletes `items` statuses over `seconds` and measures delete → gone from the content read (see the module). */
export async function measure(options: { items: number; seconds: number }): Promise<Freshness> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ALLOW_PRIVATE_FETCH: 'true', CONTENT_MAX_AGE: '0' });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db });
  const fake = await startFakeMastodon();
  const now = Date.now();
  const contract = await createContract(db, 'Bench', 'bench');
  const collection = await createCollection(db, contract.id, { name: 'Wall' }, 'bench');
  const inputId = 'b'.repeat(24);
  await db.transaction().execute((trx) =>
    insertInputs(trx, [{
      id: inputId, contractId: contract.id, collectionId: collection.id, service: 'mastodon', type: 'tag', input: `${fake.base}/tags/bench`,
      filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
      nextRunAt: now + 3_600_000, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', now),
    }]),
  );
  const streams = startMastodonStreams(streamDeps({ db, config }));
  const url = `/v1/content/${contract.slug}?q=${collection.slug}&count=100`;
  const seen = new Set<string>();
  const deleted = new Map<string, number>();
  const gone = new Map<string, number>();
  const readTimes: number[] = [];
  const itemId = (status: FakeStatus) => `mastodon_${fake.host}:${status.id}`;
  try {
    for (let waited = 0; (await findInput(db, contract.id, inputId))!.feedMode !== 'stream'; waited += 100) {
      if (waited > 30_000) throw new Error('the stream did not connect');
      await new Promise((r) => setTimeout(r, 100));
    }
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const started = performance.now();
        const res = await app.inject({ method: 'GET', url });
        const at = performance.now();
        readTimes.push(at - started);
        const ids = new Set((res.json() as { id: string }[]).map((item) => item.id));
        for (const id of ids) if (!deleted.has(id)) seen.add(id);
        for (const [id, sentAt] of deleted) if (!gone.has(id) && sentAt < started && !ids.has(id)) gone.set(id, at);
        await new Promise((r) => setTimeout(r, READ_EVERY_MS));
      }
    })();
    const statuses: FakeStatus[] = [];
    const start = performance.now();
    const everyMs = (options.seconds * 1000) / options.items;
    for (let i = 0; i < options.items + LAG; i++) {
      const due = start + i * everyMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (i < options.items) {
        const status = fake.status({ id: String(100_000_000 + i), tags: ['bench'], text: `status ${i}` });
        statuses.push(status);
        fake.publish(status);
      }
      const doomed = statuses[i - LAG];
      if (doomed) {
        deleted.set(itemId(doomed), performance.now());
        fake.send('delete', doomed);
      }
    }
    const deadline = performance.now() + 30_000;
    while ([...deleted.keys()].some((id) => seen.has(id) && !gone.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    reading = false;
    await reader;
  } finally {
    await streams.stop();
    await fake.close();
    await app.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const counted = [...deleted].filter(([id]) => seen.has(id));
  const delays = counted.filter(([id]) => gone.has(id)).map(([id, at]) => gone.get(id)! - at);
  const pick = (q: number) => Math.round(quantile(delays, q));
  const readMs = quantile(readTimes, 0.5);
  return {
    path: 'mastodon-delete',
    items: delays.length,
    p50Ms: pick(0.5),
    p99Ms: pick(0.99),
    notes: {
      deleted: deleted.size,
      neverSeen: deleted.size - counted.length,
      stillShown: counted.length - delays.length,
      goalP99Ms: 5000,
      contentReadMs: Math.round(readMs * 10) / 10,
      loadavg: loadavg().map((l) => l.toFixed(2)).join(' '),
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const items = Number(process.argv[2] ?? 1000);
  const seconds = Number(process.argv[3] ?? 60);
  const result = await measure({ items, seconds });
  console.log(`mastodon streaming delete: ${result.items} removals over ${seconds} s: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (goal p99 < 5000), ${JSON.stringify(result.notes)}`);
  console.log(JSON.stringify(result));
}
