/**
 * Freshness of the Mastodon streaming path (issue 18, `npm run bench:freshness` runs every
 * bench/freshness-*.ts): a fake Mastodon instance on 127.0.0.1 (test/fake-mastodon.ts) publishes
 * `items` statuses with one tag, evenly over `seconds`, through its streaming API; an in-process
 * app and the collector's stream listener (services/mastodon/stream/streaming.ts, SQLite) receive them for
 * one tag input; a reader polls `GET /v1/content/{contract}?q=…` (public access,
 * CONTENT_MAX_AGE=0: the process's content cache still re-reads the collection's version at most
 * once a second, as in production) every 50 ms and notes when each item first appears. The time
 * from publish to visible is reported per item as p50 and p99 (goal: both under 2 s). The baseline
 * measured in the same run is the content read itself (its median time), so the figures can be
 * read as ratios on a loaded machine; `os.loadavg()` goes with them. Then every status seen is
 * deleted (the stream's `delete` event), as many over as long, and each one's time from deletion
 * to gone from the content read is measured (`removal.ts`; goal: p99 ≤ 5 s).
 *
 * Run alone: `node bench/freshness-mastodon.ts [items] [seconds]` (default 1000 over 60).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { startMastodonStreams } from '../src/services/mastodon/stream/streaming.ts';
import { streamDeps } from '../src/collect/streams.ts';
import { loadConfig } from '../src/config.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { findInput, insertInputs } from '../src/store/inputs.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { type FakeStatus, startFakeMastodon } from '../test/fake-mastodon.ts';
import { type Freshness, quantile } from './figures.ts';
import { measureRemoval, type Removal } from './removal.ts';
import { random } from './random.ts';

const READ_EVERY_MS = 50;

/** Publishes `items` statuses over `seconds` through the stream and measures publish → visible (see the module). */
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
  const rand = random(18);
  const word = () => Array.from({ length: 3 + Math.floor(rand() * 6) }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('');
  const url = `/v1/content/${contract.slug}?q=${collection.slug}&count=100`;
  const published = new Map<string, number>();
  const visible = new Map<string, number>();
  const readTimes: number[] = [];
  let removal: Removal | undefined;
  const statuses = new Map<string, FakeStatus>();
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
        for (const item of res.json() as { id: string }[]) if (!visible.has(item.id)) visible.set(item.id, at);
        await new Promise((r) => setTimeout(r, READ_EVERY_MS));
      }
    })();
    const start = performance.now();
    const everyMs = (options.seconds * 1000) / options.items;
    for (let i = 0; i < options.items; i++) {
      const due = start + i * everyMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const status = fake.status({ id: String(100_000_000 + i), tags: ['bench'], text: Array.from({ length: 12 }, word).join(' ') });
      published.set(`mastodon_${fake.host}:${status.id}`, performance.now());
      statuses.set(`mastodon_${fake.host}:${status.id}`, status);
      fake.publish(status);
    }
    const deadline = performance.now() + 30_000;
    while ([...published.keys()].some((id) => !visible.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    reading = false;
    await reader;
    // Then each visible status is deleted (the stream's `delete` event: its id), as many over as long.
    removal = await measureRemoval({
      ids: [...published.keys()].filter((id) => visible.has(id)),
      seconds: options.seconds,
      remove: (id) => fake.send('delete', statuses.get(id)!),
      async listed() {
        const ids = new Set<string>();
        for (let offset = 0; offset < 100_000; offset += 100) {
          const page = (await app.inject({ method: 'GET', url: `/v1/content/${contract.slug}?q=${collection.slug}&count=100&offset=${offset}` })).json() as { id: string }[];
          for (const item of page) ids.add(item.id);
          if (page.length < 100) break;
        }
        return ids;
      },
    });
  } finally {
    await streams.stop();
    await fake.close();
    await app.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const delays = [...published].filter(([id]) => visible.has(id)).map(([id, at]) => visible.get(id)! - at);
  const missing = published.size - delays.length;
  const pick = (q: number) => Math.round(quantile(delays, q));
  const readMs = quantile(readTimes, 0.5);
  const p50Ms = pick(0.5);
  return {
    path: 'mastodon',
    items: options.items,
    p50Ms,
    p99Ms: pick(0.99),
    notes: {
      missing,
      contentReadMs: Math.round(readMs * 10) / 10,
      p50PerContentRead: Math.round((p50Ms / readMs) * 10) / 10,
      loadavg: loadavg().map((l) => l.toFixed(2)).join(' '),
    },
    ...(removal && { removal }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const items = Number(process.argv[2] ?? 1000);
  const seconds = Number(process.argv[3] ?? 60);
  const result = await measure({ items, seconds });
  console.log(`mastodon streaming: ${result.items} items over ${seconds} s: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (goal < 2000), ${JSON.stringify(result.notes)}`);
  console.log(JSON.stringify(result));
}
