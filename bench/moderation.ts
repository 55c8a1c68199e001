/**
 * Image screening benchmark (`npm run bench:moderation`; issue 37 point 5,
 * docs/filters.md#image-screening). On this machine, in one run:
 *
 * - classification: IMAGES varied images (flat colours, gradients, noise; PNG and JPEG, 320 to
 *   1280 px wide) made with sharp, screened by the screener (src/filter/images/screener.ts,
 *   BENCH_THREADS threads, default 1 as IMAGE_SCREENING_THREADS): ms per image one at a time
 *   (median, p99) and images per second with every thread busy, against the baseline of the same
 *   run: sharp decoding and resizing the same images to 224 × 224 on the main thread (the part of
 *   the work that is not the model), as a ratio;
 * - memory: the process's resident memory (RSS; the threads live in it) before the screener
 *   starts and after the run: the pool's delta, MB;
 * - collection throughput with screening on against off: items with an image each, stored through
 *   the collector's one path in (`ingestPushed`, a contract with a 3-set filter chain as
 *   bench:collect's) into a fresh SQLite database, in rounds alternating off and on; "on" runs the
 *   screening job (src/collect/screening.ts) at the same time, fetching the images from a local
 *   server. Items per second on/off (goal ≥ 0.8), and how long after being stored the items of
 *   the "on" rounds were screened (p50, p99, sampled every LAG_SAMPLE_MS);
 * - agreement on the labelled set `test/fixtures/images/labelled/<class>/*.png|jpg` (safe
 *   images only): the share whose top class is the folder's, and the share whose top class is
 *   `neutral` or `drawing`; "labelled set missing" when the folder is absent (BENCH_LABELLED names
 *   another folder).
 * Prints readable lines, then one JSON object as the last line.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { createFetcher } from '../src/collect/fetch.ts';
import { ingestPushed } from '../src/collect/ingest.ts';
import { startScreening } from '../src/collect/screening.ts';
import { createScreener } from '../src/filter/images/screener.ts';
import { IMAGE_CLASSES, type ImageModeration, type ContentItem } from '../src/item.ts';
import { MEDIA_MAX_BYTES } from '../src/lib/image-limits.ts';
import { openDb } from '../src/store/db.ts';
import { pendingScreenings } from '../src/store/image-screenings.ts';
import { findInput, insertInputs } from '../src/store/inputs.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { inputRow, tenant } from './collect.ts';
import { quantile } from './figures.ts';

const IMAGES = Number(process.env.BENCH_IMAGES ?? 120);
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ITEMS_PER_ROUND = Number(process.env.BENCH_ITEMS ?? 300);
const BATCH = 20;
/** The paced phase: items stored one at a time at this rate (per second), and how many. */
const PACED_PER_S = Number(process.env.BENCH_PACED_PER_S ?? 1);
const PACED_ITEMS = Number(process.env.BENCH_PACED_ITEMS ?? 60);
const LAG_SAMPLE_MS = 100;
/** Longest wait for the "on" rounds' items to be screened, ms. */
const DRAIN_LIMIT_MS = 600_000;
const LABELLED = process.env.BENCH_LABELLED ?? new URL('../test/fixtures/images/labelled/', import.meta.url).pathname;

/** The image server's program (`node -e`, the folder as its argument): `/i/<n>` answers file `<n>`; prints its port. */
const IMAGE_SERVER = `
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');
const dir = process.argv[1];
const cache = new Map();
const server = createServer((req, res) => {
  const n = /^\\/i\\/(\\d+)$/.exec(req.url || '')?.[1];
  let bytes;
  try { bytes = n && (cache.get(n) || cache.set(n, readFileSync(dir + '/' + n)).get(n)); } catch {}
  res.writeHead(bytes ? 200 : 404, { 'content-type': n && Number(n) % 2 ? 'image/jpeg' : 'image/png' });
  res.end(bytes || '');
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const round = (n: number, places = 1) => Number(n.toFixed(places));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Image `i`: a flat colour, a gradient or noise; PNG or JPEG; 320–1280 px wide. */
async function makeImage(i: number): Promise<Buffer> {
  const width = 320 + ((i * 97) % 960);
  const height = 240 + ((i * 53) % 720);
  const kind = i % 3;
  let image: Sharp;
  if (kind === 0) {
    image = sharp({ create: { width, height, channels: 3, background: { r: (i * 37) % 256, g: (i * 91) % 256, b: (i * 13) % 256 } } });
  } else if (kind === 1) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g"><stop offset="0" stop-color="#${((i * 7919) % 0xffffff).toString(16).padStart(6, '0')}"/><stop offset="1" stop-color="#${((i * 104729) % 0xffffff).toString(16).padStart(6, '0')}"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${width / 2}" cy="${height / 2}" r="${height / 4}" fill="#fff"/></svg>`;
    image = sharp(Buffer.from(svg));
  } else {
    image = sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 30 + (i % 40) } } });
  }
  return i % 2 ? image.jpeg({ quality: 80 }).toBuffer() : image.png().toBuffer();
}

const top = (scores: ImageModeration) => IMAGE_CLASSES.reduce((best, c) => (scores[c] > scores[best] ? c : best), IMAGE_CLASSES[0] as keyof ImageModeration);

async function main() {
  const images = await Promise.all(Array.from({ length: IMAGES }, (_, i) => makeImage(i)));
  console.log(`${IMAGES} images, ${round(images.reduce((s, b) => s + b.length, 0) / IMAGES / 1024)} KiB on average; ${THREADS} screening thread(s)`);

  // Baseline: decode and resize to the model's input on the main thread, one at a time.
  const decodeMs: number[] = [];
  for (const bytes of images) {
    const start = performance.now();
    await sharp(bytes).rotate().resize(224, 224, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    decodeMs.push(performance.now() - start);
  }

  const rssBefore = process.memoryUsage().rss;
  const screener = createScreener({ threads: THREADS, queuedPerContract: IMAGES });
  let start = performance.now();
  await screener.screen('warm', images[0]!);
  const loadMs = performance.now() - start;

  // One at a time: ms per image.
  const screenMs: number[] = [];
  for (const bytes of images) {
    start = performance.now();
    const outcome = await screener.screen('serial', bytes);
    screenMs.push(performance.now() - start);
    if (!('moderation' in outcome)) throw new Error(`an image was not screened: ${JSON.stringify(outcome)}`);
  }
  // Every thread busy: images per second (contracts in turns, as the job sends them).
  start = performance.now();
  await Promise.all(images.map((bytes, i) => screener.screen(`c${i % 4}`, bytes)));
  const perSecond = IMAGES / ((performance.now() - start) / 1000);
  const rssAfter = process.memoryUsage().rss;

  const median = quantile(screenMs, 0.5);
  const p99 = quantile(screenMs, 0.99);
  const decodeMedian = quantile(decodeMs, 0.5);
  console.log(`model load (first image): ${Math.round(loadMs)} ms`);
  console.log(`ms per image: median ${round(median)}, p99 ${round(p99)}; baseline (sharp decode + resize on the main thread) median ${round(decodeMedian)}: ×${round(median / decodeMedian)}`);
  console.log(`images per second, every thread busy: ${round(perSecond)}`);
  console.log(`resident memory: ${mb(rssBefore)} MB before the screener, ${mb(rssAfter)} MB after: +${mb(rssAfter - rssBefore)} MB`);

  // Labelled set.
  let labelled: { images: number; topIsFolder: number; safe: number; byClass: Record<string, number> } | 'missing' = 'missing';
  if (existsSync(LABELLED)) {
    let count = 0;
    let agree = 0;
    let safe = 0;
    const byClass: Record<string, number> = {};
    for (const folder of readdirSync(LABELLED)) {
      const dir = join(LABELLED, folder);
      if (!existsSync(dir) || !(IMAGE_CLASSES as readonly string[]).includes(folder)) continue;
      for (const name of readdirSync(dir).filter((n) => /\.(png|jpe?g)$/i.test(n)).slice(0, 1000)) {
        const outcome = await screener.screen('labelled', readFileSync(join(dir, name)));
        count += 1;
        if (!('moderation' in outcome)) continue;
        const best = top(outcome.moderation);
        byClass[best] = (byClass[best] ?? 0) + 1;
        if (best === folder) agree += 1;
        if (best === 'neutral' || best === 'drawing') safe += 1;
      }
    }
    labelled = { images: count, topIsFolder: count ? round(agree / count, 3) : Number.NaN, safe: count ? round(safe / count, 3) : Number.NaN, byClass };
    console.log(`labelled set: ${count} images; top class is the folder's for ${round((agree / count) * 100)}%, neutral or drawing for ${round((safe / count) * 100)}% (${JSON.stringify(byClass)})`);
  } else {
    console.log('labelled set missing');
  }

  // Collection throughput, screening off against on.
  // The image server runs in a process of its own, as a remote one would: serving is not the collector's work.
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-moderation-'));
  images.forEach((bytes, i) => writeFileSync(join(dir, `${i}`), bytes));
  const server = spawn(process.execPath, ['-e', IMAGE_SERVER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    server.once('exit', () => reject(new Error('the image server stopped')));
  });
  const base = `http://127.0.0.1:${port}`;
  const db = openDb(`sqlite:${join(dir, 'bench.db')}`);
  await migrateToLatest(db);
  const { contract, collection } = await tenant(db);
  const row = inputRow({ contractId: contract.id, collectionId: collection.id }, `${base}/feed`, Date.now() + 86_400_000);
  await db.transaction().execute((trx) => insertInputs(trx, [row]));
  const input = (await findInput(db, contract.id, row.id))!;
  const fetch = createFetcher({ allowPrivate: true, maxBytes: MEDIA_MAX_BYTES });
  const jobScreener = createScreener({ threads: THREADS });
  const storedAt = new Map<string, number>();
  const screenedAfter: number[] = [];

  let serial = 0;
  const item = (mode: string): ContentItem => {
    const n = serial++;
    return {
      id: `rss_${mode}${n}`, service: 'rss', type: 'link', title: `Picture ${n} of the harbour festival`, text: `A photo from the harbour festival, number ${n}, with the crowd at the river`,
      tags: [], url: `https://example.com/${mode}/${n}`, date: new Date().toISOString(), author: { name: `Author ${n % 50}`, username: `author${n % 50}`, userid: null, url: null },
      media: [{ type: 'image', url: `${base}/i/${n % IMAGES}` }], kudos: { score: 0 }, children: [],
    } as ContentItem;
  };
  // Both modes store into the same collection through the same input (its filter and spam window
  // alike), in rounds alternating which goes first; "on" runs the screening job during the round
  // (and until the queue is empty), "off" has no job and its queue rows are dropped.
  const times = { off: 0, on: 0 };
  const deps = { db, fetch, screener: jobScreener };
  let job: ReturnType<typeof startScreening> | undefined;
  const drained = async () => {
    const begin = performance.now();
    while ((await pendingScreenings(db)) > 0 && performance.now() - begin < DRAIN_LIMIT_MS) await sleep(100);
  };
  const ingestRound = async (mode: 'off' | 'on') => {
    if (mode === 'on') job = startScreening(deps, 200);
    const begin = performance.now();
    for (let i = 0; i < ITEMS_PER_ROUND; i += BATCH) await ingestPushed(db, input, Array.from({ length: BATCH }, () => item(mode)), {});
    const ms = performance.now() - begin;
    if (mode === 'on') {
      await drained();
      await job!.stop();
    } else {
      await db.deleteFrom('imageScreenings').where('collectionId', '=', collection.id).execute();
    }
    return ms;
  };
  // Warm-up (filter pool threads, language detection, prepared statements): not counted.
  await ingestRound('off');
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) times[mode] += await ingestRound(mode);
  }
  // Lag sampling: which paced items are still queued, every LAG_SAMPLE_MS.
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const pending = new Set((await db.selectFrom('imageScreenings').select('itemId').where('collectionId', '=', collection.id).execute()).map((r) => r.itemId));
      const now = performance.now();
      for (const [id, at] of storedAt) {
        if (!pending.has(id)) {
          screenedAfter.push(now - at);
          storedAt.delete(id);
        }
      }
      await sleep(LAG_SAMPLE_MS);
    }
  })();
  // The job at its production beat (SCREEN_TICK_MS).
  job = startScreening(deps);
  // Paced: items arriving one at a time at PACED_PER_S (a collector's steady load), each screened how long after it was stored.
  for (let i = 0; i < PACED_ITEMS; i++) {
    const one = item('paced');
    await ingestPushed(db, input, [one], {});
    storedAt.set(one.id, performance.now());
    await sleep(1000 / PACED_PER_S);
  }
  await drained();
  await sleep(LAG_SAMPLE_MS * 2);
  sampling = false;
  await sampler;
  await job.stop();

  const total = ROUNDS * ITEMS_PER_ROUND;
  const offPerS = total / (times.off / 1000);
  const onPerS = total / (times.on / 1000);
  const ratio = onPerS / offPerS;
  const lag50 = quantile(screenedAfter, 0.5);
  const lag99 = quantile(screenedAfter, 0.99);
  console.log(`collection, ${total} items with an image each per mode in ${ROUNDS} alternating rounds: off ${round(offPerS)} items/s, on ${round(onPerS)} items/s: ratio ${round(ratio, 2)} (goal ≥ 0.8)`);
  console.log(`screened after being stored (${screenedAfter.length} items arriving at ${PACED_PER_S}/s): p50 ${round(lag50 / 1000, 2)} s, p99 ${round(lag99 / 1000, 2)} s`);

  const figures = {
    images: IMAGES, threads: THREADS, loadMs: Math.round(loadMs),
    msPerImage: { median: round(median), p99: round(p99) }, decodeBaselineMs: round(decodeMedian), ratioToDecode: round(median / decodeMedian),
    imagesPerSecond: round(perSecond), rssMb: { before: mb(rssBefore), after: mb(rssAfter), delta: mb(rssAfter - rssBefore) },
    collection: { items: total, offPerS: round(offPerS), onPerS: round(onPerS), ratio: round(ratio, 2), meets: ratio >= 0.8, }, screenedAfterS: { perS: PACED_PER_S, items: screenedAfter.length, p50: round(lag50 / 1000, 2), p99: round(lag99 / 1000, 2), meets: lag99 <= 10_000 },
    labelled,
  };
  console.log(JSON.stringify(figures));

  await jobScreener.close();
  await screener.close();
  await fetch.close();
  await db.destroy();
  server.kill();
  rmSync(dir, { recursive: true, force: true });
}

if (import.meta.main) await main();
