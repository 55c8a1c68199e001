/**
 * `npm run bench:events` (issue 16): what webhook events cost collection, and how fast they go out.
 *
 *   collect   `refreshInput` of an rss input whose feed (a local HTTP server on 127.0.0.1) has
 *             POLL new entries at every poll — fetch, parse, language, store — into a SQLite
 *             collection, in alternating rounds with the contract's webhook active (every item
 *             writes `item.collected` and `item.published` to the outbox in the poll's
 *             transaction, the worst case: two events per item) and inactive (the same run
 *             without outbox writes: one indexed read of the webhooks per poll). Items/s of both
 *             and their ratio (goal: the outbox costs at most 15 %, ratio ≥ 0.85).
 *   deliver   the outbox the active rounds filled, drained by the delivery worker
 *             (`collect/deliver.ts`: claim, sign per Standard Webhooks, POST, record) to a local
 *             receiver answering 204: events/s.
 *
 * The last line is one JSON object. Environment: BENCH_ROUNDS (default 6 of each), BENCH_ROUND_ITEMS
 * (default 2000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDelivery } from '../src/collect/deliver.ts';
import { createFetcher } from '../src/collect/fetch.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { currentSecretKey, seal } from '../src/lib/secret-box.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { findInput } from '../src/store/inputs.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { EVENT_TYPES, pendingCount } from '../src/store/outbox.ts';
import { startBenchFeed } from './feed.ts';
import { random } from './random.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_ITEMS = Number(process.env.BENCH_ROUND_ITEMS ?? 2000);
const POLL = 50;
const DAY = 86_400_000;
const WORDS = (
  'news city council vote market river season team coach report school rain energy price street music festival study health court bridge ' +
  'storm island museum train airport harbour forest garden library hospital factory election budget tax police fire summer winter'
).split(' ');

/** Item `n`: the same item every time it is made. */
function makeItem(n: number, now: number): ContentItem {
  const own = random(n * 7919 + 11);
  const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(own() * WORDS.length)]).join(' ');
  return {
    id: `rss_bench${n.toString(36)}`,
    service: 'rss',
    type: 'link',
    title: words(8),
    text: `<p>${words(40)}</p>`,
    tags: [],
    url: `https://example.com/story/${n}`,
    date: new Date(now - Math.floor(own() * DAY)).toISOString(),
    author: { name: `Author ${n % 97}`, username: null, userid: null, url: null },
    media: null,
    kudos: { score: 0 },
    language: 'en',
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-events-'));
  const config = loadConfig({ DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, ALLOW_PRIVATE_FETCH: 'true', LOG_LEVEL: 'silent' });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const contract = await createContract(db, 'bench', 'bench');
  const collection = await createCollection(db, contract.id, { name: 'wall' }, 'bench');
  // De-duplication off: the store's own work is smallest, so the outbox's share is largest.
  await db.updateTable('collections').set({ dedupe: 'off' }).where('id', '=', collection.id).execute();
  const now = Date.now();

  const inputId = 'b'.repeat(24);
  const feed = await startBenchFeed(db, { contractId: contract.id, collectionId: collection.id, inputId }, POLL, now);
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

  const key = currentSecretKey(config);
  const webhookId = 'c'.repeat(24);
  await db
    .insertInto('webhooks')
    .values({
      id: webhookId, contractId: contract.id, name: 'bench', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: JSON.stringify(EVENT_TYPES),
      secret: seal(key, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), keyId: key.id, active: 0, ...newRecordFields('bench', now),
    })
    .execute();
  const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 10_000 });

  type Timing = { items: number; ms: number };
  const timings: Record<'with' | 'without', Timing> = { with: { items: 0, ms: 0 }, without: { items: 0, ms: 0 } };
  let serial = 0;
  // Two rounds first, unmeasured, warm the code paths (JIT, the language detector, caches).
  for (let r = -2; r < ROUNDS * 2; r++) {
    const mode = r % 2 === 0 ? 'without' : 'with';
    await db.updateTable('webhooks').set({ active: mode === 'with' ? 1 : 0 }).where('id', '=', webhookId).execute();
    const started = performance.now();
    const collected = await feed.collect(Array.from({ length: ROUND_ITEMS }, () => makeItem(serial++, now)), { fetch: fetcher, services: config.services });
    if (collected !== ROUND_ITEMS) throw new Error(`collected ${collected} of ${ROUND_ITEMS}: ${(await findInput(db, contract.id, inputId))!.lastError}`);
    if (r >= 0) {
      timings[mode].ms += performance.now() - started;
      timings[mode].items += ROUND_ITEMS;
    }
  }
  await fetcher.close();
  feed.close();

  // Deliver what the active rounds wrote.
  await db.updateTable('webhooks').set({ active: 1 }).where('id', '=', webhookId).execute();
  const events = await pendingCount(db, webhookId);
  const worker = startDelivery({ db, config }, 3_600_000);
  const started = performance.now();
  for (let rounds = 0; (await pendingCount(db, webhookId)) > 0; rounds++) {
    if (rounds > 100_000) throw new Error('the outbox did not drain');
    await worker.tick();
  }
  const deliverMs = performance.now() - started;
  await worker.stop();
  receiver.close();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });

  const perSecond = (t: Timing) => Math.round((t.items / t.ms) * 1000);
  const collect = { without: perSecond(timings.without), with: perSecond(timings.with) };
  const ratio = Math.round((collect.with / collect.without) * 100) / 100;
  const deliver = { events, received, perSecond: Math.round((events / deliverMs) * 1000) };
  console.log(`collect (refreshInput, rss over HTTP)  without webhooks ${collect.without} items/s  with an active webhook (2 events per item) ${collect.with} items/s  ratio ${ratio} (goal ≥ 0.85: the outbox costs at most 15 %)`);
  console.log(`deliver (signed POSTs to a local receiver)  ${deliver.events} events in ${(deliverMs / 1000).toFixed(1)} s: ${deliver.perSecond} events/s`);
  console.log(JSON.stringify({ roundItems: ROUND_ITEMS, rounds: ROUNDS, collect, ratio, costAtMost15Percent: ratio >= 0.85, deliver }));
}

await main();
