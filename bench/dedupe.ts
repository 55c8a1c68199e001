/**
 * `npm run bench:dedupe` (issue 17): items per second through collection with de-duplication
 * against without it, in the same run, into one SQLite collection pre-filled with BENCH_ITEMS
 * (default 1 000 000) items and their de-duplication keys (bulk-inserted with prepared
 * statements in one transaction). Alternating rounds of dedupe `off` and `url+text` on the same
 * collection, each round fresh items of which 10 % repeat a stored story (its URL with tracking
 * parameters), measured two ways:
 *
 *   collect  `refreshInput` of an rss input whose feed (a local HTTP server on 127.0.0.1) has POLL
 *            new entries at every poll: fetch, parse, language, store — collection as it runs
 *   store    `storeItems` alone, in transactions of POLL items: the store's share, the worst case
 *
 * It prints items/s of both modes and their ratio (goal ≥ 0.7 for collection), the size of the
 * key tables (bytes per item), the process memory and the load average (the machine may be
 * shared: compare ratios, not items/s); the last line is one JSON object.
 *
 * The vocabulary stays 40 words drawn uniformly. Its fingerprints cluster (a band value is shared
 * by ~4× the cards uniform fingerprints would give), but a Zipf vocabulary of 5 000 words (s = 1,
 * like real titles with their frequent words) clustered more (~1.6× the rows per lookup), so it
 * is not the optimistic choice.
 * Environment: BENCH_ITEMS, BENCH_ROUNDS (default 6), BENCH_ROUND_ITEMS (default 2000);
 * BENCH_DB=<path> keeps the SQLite database there, and a database filled there by an earlier run
 * is reused (migrated first; each run adds its own items, ids and texts), so a change to the store
 * is measured again without the fill of about 100 s.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { createFetcher } from '../src/collect/fetch.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { itemKeys, printRows } from '../src/lib/item-keys.ts';
import { createCollection } from '../src/store/collections.ts';
import { findInput } from '../src/store/inputs.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { searchText } from '../src/lib/search-query.ts';
import { startBenchFeed } from './feed.ts';
import { random } from './random.ts';
import { ownsEntries } from '../src/services/table.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_ITEMS = Number(process.env.BENCH_ROUND_ITEMS ?? 2000);
const POLL = 50;
const DAY = 86_400_000;
const SERVICES = ['rss', 'twitter', 'youtube', 'instagram', 'mastodon'];
const WORDS = (
  'news city council vote market river season team coach report school rain energy price street music festival study health court bridge ' +
  'storm island museum train airport harbour forest garden library hospital factory election budget tax police fire summer winter'
).split(' ');


const rnd = random(17);

/** Item `n` of a series (`prefix`): the same item every time it is made. */
function makeItem(n: number, now: number, prefix = ''): ContentItem {
  const own = random(n * 7919 + prefix.length);
  const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(own() * WORDS.length)]).join(' ');
  const service = SERVICES[n % SERVICES.length]!;
  return {
    id: `${service}_${prefix}${n.toString(36)}`,
    service,
    type: 'link',
    title: words(8),
    text: `<p>${words(40)}</p>`,
    tags: [],
    url: `https://example.com/${service}/${prefix}${n}`,
    date: new Date(now - Math.floor(own() * 30 * DAY)).toISOString(),
    author: { name: `Author ${n % 997}`, username: `author${n % 997}`, userid: String(n % 997), url: `https://example.com/u/${n % 997}` },
    media: null,
    kudos: { score: Math.floor(own() * 100) },
    language: 'en',
  };
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-dedupe-'));
  const file = process.env.BENCH_DB ?? join(dir, 'bench.db');
  // As the collector opens it (src/server.ts): checkpoints in a thread.
  const db = openDb(`sqlite:${file}`, { checkpoints: 'thread' });
  await migrateToLatest(db);
  const now = Date.now();
  const filled = await db.selectFrom('contracts').selectAll().where('slug', '=', 'bench').executeTakeFirst();
  const contract = filled ?? (await createContract(db, 'bench', 'bench'));
  const collection = filled
    ? (await db.selectFrom('collections').selectAll().where('contractId', '=', filled.id).executeTakeFirstOrThrow())
    : await createCollection(db, contract.id, { name: 'wall' }, 'bench');
  /** Every thousandth filled item: the stories that rounds repeat. */
  const storyOf = (n: number) => ({ ...makeItem(n, now), date: new Date(now - 30 * DAY + Math.floor((n / ITEMS) * 30 * DAY)).toISOString() });

  // Bulk fill: items and their keys in one transaction of prepared statements, dated in order
  // (index appends); the band index is built after the fill, as CREATE INDEX sorts once.
  // A database kept from an earlier run (BENCH_DB) is reused as filled then.
  const t0 = performance.now();
  const stored: ContentItem[] = [];
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = OFF');
  // The full-text index's triggers call it (store/db.ts registers it on the app's connections).
  raw.function('search_text', { deterministic: true }, (html) => searchText(html));
  // Keys go to unindexed scratch tables first and into the keyed tables in key order at the end (one sort).
  raw.exec('create temp table fill_urls (collection_id, url_hash, item_id); create temp table fill_prints (collection_id, band_key, item_id, date_ms, rest)');
  const insertItem = raw.prepare(
    'insert into items (collection_id, id, contract_id, input_id, service, type, state, date_ms, score, language, latitude, longitude, seq, body, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, null, 0, ?, ?)',
  );
  const insertUrl = raw.prepare('insert into fill_urls (collection_id, url_hash, item_id) values (?, ?, ?)');
  const insertPrint = raw.prepare('insert into fill_prints (collection_id, band_key, item_id, date_ms, rest) values (?, ?, ?, ?, ?)');
  const fill = raw.transaction(() => {
    for (let n = 0; n < ITEMS; n++) {
      const item = storyOf(n);
      if (n % 1000 === 0) stored.push(item);
      const { state: _s, ...body } = item;
      const dateMs = Date.parse(item.date);
      insertItem.run(collection.id, item.id, contract.id, '0'.repeat(24), item.service, item.type, 'published', dateMs, item.kudos.score, 'en', JSON.stringify(body), now);
      const keys = itemKeys(item, 'url+text', ownsEntries);
      for (const hash of keys.urlHashes) insertUrl.run(collection.id, hash, item.id);
      for (const { key, rest } of printRows(keys)) insertPrint.run(collection.id, key, item.id, dateMs, rest);
    }
    raw.exec('insert or ignore into item_urls select * from fill_urls order by collection_id, url_hash');
    raw.exec('insert into item_prints select * from fill_prints order by collection_id, band_key, date_ms, item_id');
    raw.exec('drop table fill_urls; drop table fill_prints');
  });
  if (filled) for (let n = 0; n < ITEMS; n += 1000) stored.push(storyOf(n));
  else fill();
  raw.pragma('wal_checkpoint(TRUNCATE)');
  // The fill wrote without syncing: its pages reach the disk now, not as writeback during the
  // measured rounds (where it slowed the rounds' own syncs, more for url+text, which writes more).
  if (!filled) {
    const fd = openSync(file, 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
  const sizes = raw.prepare("select name, sum(pgsize) as bytes from dbstat where name in ('item_urls', 'item_prints') group by name").all() as { bytes: number }[];
  raw.close();
  const itemsStored = Number((await db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).where('collectionId', '=', collection.id).executeTakeFirstOrThrow()).n);
  const keyBytesPerItem = Math.round(sizes.reduce((sum, row) => sum + row.bytes, 0) / itemsStored);
  const totalBytes = statSync(file).size;
  console.log(`${filled ? `reused ${itemsStored}` : `filled ${ITEMS}`} items with their keys in ${((performance.now() - t0) / 1000).toFixed(1)} s; database ${mb(totalBytes)} MB, key tables ${keyBytesPerItem} bytes per item`);

  const target = { collectionId: collection.id, contractId: contract.id, inputId: '0'.repeat(24), state: 'published' as const };
  /** This run's own item ids and texts (a reused database holds the items of earlier runs). */
  const run = filled ? Date.now().toString(36) : '';
  let serial = filled ? 10_000_000 + (Date.now() % 100_000) * 1000 : 0;
  /** A round's fresh items: every tenth repeats a stored story under its URL with tracking parameters. */
  const round = () =>
    Array.from({ length: ROUND_ITEMS }, (_, i) => {
      if (i % 10 === 9) {
        const story = stored[Math.floor(rnd() * stored.length)]!;
        return { ...makeItem(serial++, now, `dup${run}`), url: `${story.url}?utm_source=bench&fbclid=x${i}`, date: story.date };
      }
      return makeItem(serial++, now, `new${run}`);
    });

  const inputId = run.padStart(24, 'b');
  const feed = await startBenchFeed(db, { contractId: contract.id, collectionId: collection.id, inputId }, POLL, now);
  const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 10_000 });
  const services = loadConfig({}).services;

  type Timing = { items: number; ms: number };
  const timings: Record<'collect' | 'store', Record<'off' | 'url+text', Timing>> = {
    collect: { off: { items: 0, ms: 0 }, 'url+text': { items: 0, ms: 0 } },
    store: { off: { items: 0, ms: 0 }, 'url+text': { items: 0, ms: 0 } },
  };
  const duplicatesCount = async () => Number((await db.selectFrom('itemDuplicates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const duplicatesBefore = await duplicatesCount();
  const heapBefore = process.memoryUsage().heapUsed;
  let planted = 0;
  // Two rounds first, unmeasured, warm the code paths (JIT, the language detector, caches).
  for (let r = -2; r < ROUNDS * 2; r++) {
    const mode = r % 2 === 0 ? 'off' : 'url+text';
    const measured = r >= 0;
    await db.updateTable('collections').set({ dedupe: mode }).where('id', '=', collection.id).execute();
    // Collect: POLL entries per poll through the real collector.
    let started = performance.now();
    const collected = await feed.collect(round(), { fetch: fetcher, services });
    if (measured) timings.collect[mode].ms += performance.now() - started;
    if (measured) timings.collect[mode].items += ROUND_ITEMS;
    if (collected !== ROUND_ITEMS) throw new Error(`collected ${collected} of ${ROUND_ITEMS}: ${(await findInput(db, contract.id, inputId))!.lastError}`);
    // Store: the same amount straight into the store.
    const fresh = round();
    started = performance.now();
    for (let i = 0; i < fresh.length; i += POLL) {
      await db.transaction().execute((trx) => storeItems(trx, target, fresh.slice(i, i + POLL), ownsEntries, now));
    }
    if (measured) timings.store[mode].ms += performance.now() - started;
    if (measured) timings.store[mode].items += fresh.length;
    if (mode === 'url+text') planted += (2 * ROUND_ITEMS) / 10;
  }
  feed.close();
  await fetcher.close();
  const duplicatesStored = (await duplicatesCount()) - duplicatesBefore;
  const perSecond = (t: Timing) => Math.round((t.items / t.ms) * 1000);
  const figures = (kind: 'collect' | 'store') => {
    const off = perSecond(timings[kind].off);
    const dedupe = perSecond(timings[kind]['url+text']);
    return { off, dedupe, ratio: Math.round((dedupe / off) * 100) / 100 };
  };
  const collect = figures('collect');
  const store = figures('store');
  const memory = process.memoryUsage();
  console.log(`collect (refreshInput, rss over HTTP)  off ${collect.off} items/s  url+text ${collect.dedupe} items/s  ratio ${collect.ratio} (goal ≥ 0.7)`);
  console.log(`store (storeItems alone)               off ${store.off} items/s  url+text ${store.dedupe} items/s  ratio ${store.ratio}`);
  console.log(`merged ${duplicatesStored} of ${planted} planted duplicates`);
  console.log(`load average (1, 5, 15 min): ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`memory: rss ${mb(memory.rss)} MB, peak rss ${mb(process.resourceUsage().maxRSS * 1024)} MB, heap growth over the measured rounds ${mb(memory.heapUsed - heapBefore)} MB`);
  console.log(
    JSON.stringify({
      items: ITEMS,
      collect,
      store,
      collectRatioAtLeast07: collect.ratio >= 0.7,
      keyBytesPerItem,
      databaseMB: mb(totalBytes),
      mergedDuplicates: duplicatesStored,
      plantedDuplicates: planted,
      peakRssMB: mb(process.resourceUsage().maxRSS * 1024),
      loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    }),
  );
  await db.destroy();
  rmSync(dir, { recursive: true, force: true }); // BENCH_DB is kept
}

await main();
