/**
 * `npm run bench:lighthouse` (issue 35 point 5): Lighthouse (the npm package, driving the
 * Chromium test/browser/chromium.ts resolves) on the publication's two pages, with the default
 * theme and 20 cards.
 *
 * Starts the real app on 127.0.0.1 (a fresh SQLite database; with DATABASE_URL=postgres://… an
 * empty PostgreSQL database) with one contract and one collection of 20 published items (every
 * other one with a 1200×800 JPEG), the images served over HTTPS by a loopback server of this
 * bench (the wall takes only https: images, docs/api.md#publication): a self-signed certificate
 * made with `openssl` at the start, the host `img.bench.test` mapped to it by Chromium's
 * `--host-resolver-rules`, its certificate accepted by `--ignore-certificate-errors`.
 *
 *   wall       GET /v1/publication/{contract}?q=… (the page embed.js frames), Lighthouse's
 *              default (mobile) form factor
 *   display    GET /v1/publication/{contract}/display?q=…, desktop form factor and screen
 *   baseline   the wall's HTML as served, its scripts removed and its stylesheet inlined, served
 *              as a static page by a loopback server of this bench (a route added to the app would
 *              need an entry in the permission table), measured with each form factor
 *
 * Throttling: `throttlingMethod: 'provided'`, i.e. none. The pages come over loopback, and
 * Lighthouse's simulated slow network and CPU on a 2-core machine shared with other work make
 * the scores swing by tens of points between runs; the figures are thus this machine's, unthrottled.
 *
 * Each page BENCH_RUNS (default 3) times; prints the median of each figure (performance and
 * accessibility scores 0–100, largest contentful paint ms, cumulative layout shift, total
 * blocking time ms), LCP as a ratio to the baseline's, the targets (performance ≥ 95,
 * accessibility 100, LCP ≤ 1000 ms) and, for a page that misses one, the audits that cost it.
 * The last line is one JSON object.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lighthouse, { desktopConfig } from 'lighthouse';
import sharp from 'sharp';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { resolveChromium } from '../test/browser/chromium.ts';
import { quantile } from './figures.ts';
import { ownsEntries } from '../src/services/table.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CARDS = 20;
const IMAGE_HOST = 'img.bench.test';
const TARGETS = { performance: 95, accessibility: 100, lcpMs: 1000 };

interface Figures { performance: number; accessibility: number; lcpMs: number; cls: number; tbtMs: number; misses: string[] }

function makeItem(n: number, now: number): ContentItem {
  return {
    id: `rss_bench_${n}`,
    service: 'rss',
    type: 'link',
    title: `Story number ${n} about the city council and the river`,
    text: `<p>Story ${n}: the council voted on the budget; the market opens on Saturday by the river, and the ferry runs again from Monday.</p>`,
    tags: [],
    url: `https://news.example/story/${n}`,
    date: new Date(now - n * 60_000).toISOString(),
    author: { name: `Author ${n}`, username: `author${n}`, userid: null, url: null },
    media: n % 2 === 0 ? [{ type: 'image', url: `https://${IMAGE_HOST}/${n}.jpg`, width: 1200, height: 800 }] : null,
    kudos: { score: n * 3 },
    language: 'en',
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function freePort(): Promise<number> {
  const probe = createHttpServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** One Lighthouse run of `url` (tried up to 3 times: a trace without navigation start, NO_NAVSTART, happens on a loaded machine). */
async function audit(url: string, port: number, desktop: boolean): Promise<Figures> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await auditOnce(url, port, desktop);
    } catch (error) {
      if (attempt >= 3) throw error;
      process.stdout.write(`retrying ${url}: ${(error as Error).message}\n`);
    }
  }
}

/** One Lighthouse run of `url`: the figures, and the failing audits that weigh on a score. */
async function auditOnce(url: string, port: number, desktop: boolean): Promise<Figures> {
  const flags = { port, output: 'json' as const, logLevel: 'error' as const, onlyCategories: ['performance', 'accessibility'], throttlingMethod: 'provided' as const, disableStorageReset: false };
  const result = await lighthouse(url, flags, desktop ? { ...desktopConfig, settings: { ...desktopConfig.settings, throttlingMethod: 'provided' } } : undefined);
  if (!result) throw new Error(`lighthouse gave no result for ${url}`);
  const { lhr } = result;
  if (lhr.runtimeError) throw new Error(`lighthouse: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  if (process.env.BENCH_TRACE) {
    // BENCH_TRACE=1: the page's long main-thread tasks (start and duration ms, script).
    const items = (lhr.audits['long-tasks']?.details as { items?: { url: string; startTime: number; duration: number }[] } | undefined)?.items ?? [];
    process.stdout.write(`${url.replace(/^https?:\/\/[^/]+/, '')} long tasks: ${items.map((t) => `${Math.round(t.startTime)}+${Math.round(t.duration)} ${t.url.replace(/^https?:\/\/[^/]+/, '')}`).join(', ') || 'none'}\n`);
  }
  const numeric = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN;
  const misses: string[] = [];
  for (const category of ['performance', 'accessibility']) {
    for (const ref of lhr.categories[category]?.auditRefs ?? []) {
      const a = lhr.audits[ref.id];
      if (a && a.score !== null && a.score < 1 && (ref.weight > 0 || a.details?.type === 'opportunity')) misses.push(`${ref.id}${a.displayValue ? ` (${a.displayValue})` : ''}`);
    }
  }
  return {
    performance: Math.round((lhr.categories.performance?.score ?? 0) * 100),
    accessibility: Math.round((lhr.categories.accessibility?.score ?? 0) * 100),
    lcpMs: Math.round(numeric('largest-contentful-paint')),
    cls: Number(numeric('cumulative-layout-shift').toFixed(3)),
    tbtMs: Math.round(numeric('total-blocking-time')),
    misses,
  };
}

function median(runs: Figures[]): Figures {
  const m = (key: 'performance' | 'accessibility' | 'lcpMs' | 'cls' | 'tbtMs') => quantile(runs.map((r) => r[key]), 0.5);
  return { performance: m('performance'), accessibility: m('accessibility'), lcpMs: m('lcpMs'), cls: m('cls'), tbtMs: m('tbtMs'), misses: [...new Map(runs.flatMap((r) => r.misses).map((miss) => [miss.split(' ')[0], miss])).values()] }; // one per audit, its last run's value
}

async function main(): Promise<void> {
  const found = await resolveChromium();
  if ('missing' in found) throw new Error(found.missing);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-lighthouse-'));
  const closers: (() => Promise<unknown>)[] = [];
  try {
    // The image server: HTTPS with a throwaway self-signed certificate.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${IMAGE_HOST}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const jpeg = await sharp({ create: { width: 1200, height: 800, channels: 3, background: { r: 40, g: 110, b: 160 } } }).jpeg({ quality: 80 }).toBuffer();
    const images = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length, 'cache-control': 'public, max-age=86400' }).end(jpeg);
    });
    const imagePort = await listen(images);
    closers.push(() => new Promise((resolve) => images.close(resolve)));

    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', PORT: String(port), API_URL: origin, AUTH_URL: origin, QUEUE_URL: origin, ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) });
    const db = openDb(config.databaseUrl);
    await migrateToLatest(db);
    const app = await buildApp(config, { db });
    await app.listen({ host: '127.0.0.1', port });
    closers.push(() => db.destroy());
    closers.push(() => app.close());

    const contract = await createContract(db, 'Bench News', 'bench');
    const collection = await createCollection(db, contract.id, { name: 'World News', dedupe: 'off' }, 'bench');
    const now = Date.now();
    await db.transaction().execute((trx) =>
      storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId: '0'.repeat(24), state: 'published' }, Array.from({ length: CARDS }, (_, n) => makeItem(n, now)), ownsEntries, now),
    );
    const wallUrl = `${origin}/v1/publication/${contract.slug}?q=${collection.slug}`;
    const displayUrl = `${origin}/v1/publication/${contract.slug}/display?q=${collection.slug}`;

    // The baseline: the wall's own HTML, static (no script), its stylesheet inlined.
    const wallHtml = await (await fetch(wallUrl)).text();
    const css = await (await fetch(new URL(/href="([^"]+wall\.css[^"]*)"/.exec(wallHtml)![1]!, wallUrl))).text();
    const baselineHtml = wallHtml
      .replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, '')
      .replace(/<link rel="expect"[^>]*>/, '')
      .replace(/<link rel="stylesheet"[^>]*>/, `<style>${css}</style>`);
    const baseline = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(baselineHtml));
    const baselineUrl = `http://127.0.0.1:${await listen(baseline)}/`;
    closers.push(() => new Promise((resolve) => baseline.close(resolve)));

    const debugPort = await freePort();
    // Chromium started directly (Lighthouse opens and drives its own tabs through the port).
    const browser = spawn(found.executablePath, ['--headless=new', `--remote-debugging-port=${debugPort}`, `--user-data-dir=${join(dir, 'profile')}`, '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', `--host-resolver-rules=MAP ${IMAGE_HOST}:443 127.0.0.1:${imagePort}`, '--ignore-certificate-errors', 'about:blank'],
    { env: { ...process.env, ...found.env }, stdio: 'ignore' });
    closers.push(async () => {
      browser.kill();
      await new Promise((resolve) => (browser.exitCode === null ? browser.once('exit', resolve) : resolve(null)));
    });
    // Bounded wait for the debugging port (10 s).
    for (let tries = 0; ; tries++) {
      if (await fetch(`http://127.0.0.1:${debugPort}/json/version`).then((r) => r.ok, () => false)) break;
      if (tries >= 100) throw new Error('Chromium did not open its debugging port in 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // BENCH_PAGES=wall,display: only these pages (and their baselines).
    const only = process.env.BENCH_PAGES?.split(',');
    const pages = [
      { name: 'baseline', url: baselineUrl, desktop: false },
      { name: 'wall', url: wallUrl, desktop: false },
      { name: 'baseline-desktop', url: baselineUrl, desktop: true },
      { name: 'display', url: displayUrl, desktop: true },
    ].filter((page) => !only || page.name.startsWith('baseline') || only.includes(page.name))
      .filter((page, _, all) => page.name !== (page.desktop ? 'baseline-desktop' : 'baseline') || all.some((p) => p.desktop === page.desktop && !p.name.startsWith('baseline')));
    // One run not counted: the server's first answer of each route (its JIT warming up).
    for (const page of pages) {
      const started = performance.now();
      await audit(page.url, debugPort, page.desktop);
      if (process.env.BENCH_TRACE) process.stdout.write(`warm-up ${page.name} ${Math.round(performance.now() - started)} ms\n`);
    }
    const runs: Record<string, Figures[]> = Object.fromEntries(pages.map((p) => [p.name, []]));
    for (let round = 0; round < RUNS; round++) for (const page of pages) runs[page.name]!.push(await audit(page.url, debugPort, page.desktop));

    process.stdout.write(`${CARDS} cards, default theme, ${RUNS} Lighthouse runs each (median), throttlingMethod 'provided' (no simulated throttling; served over loopback):\n`);
    const figures: Record<string, Figures & { lcpRatio: number; meets: boolean }> = {};
    for (const page of pages) {
      const f = median(runs[page.name]!);
      const base = median(runs[page.desktop ? 'baseline-desktop' : 'baseline']!);
      const meets = f.performance >= TARGETS.performance && f.accessibility >= TARGETS.accessibility && f.lcpMs <= TARGETS.lcpMs;
      figures[page.name] = { ...f, lcpRatio: Number((f.lcpMs / base.lcpMs).toFixed(2)), meets };
      process.stdout.write(`${page.name.padEnd(17)} performance ${String(f.performance).padStart(3)}  accessibility ${String(f.accessibility).padStart(3)}  LCP ${String(f.lcpMs).padStart(5)} ms (×${(f.lcpMs / base.lcpMs).toFixed(2)} baseline)  CLS ${f.cls.toFixed(3)}  TBT ${String(f.tbtMs).padStart(4)} ms${page.name.startsWith('baseline') ? '' : meets ? '  ok' : '  MISSES a target'}\n`);
      if (f.misses.length) process.stdout.write(`${' '.repeat(17)} audits below 1: ${f.misses.join(', ')}\n`);
    }
    process.stdout.write(`${JSON.stringify({ bench: 'lighthouse', cards: CARDS, runs: RUNS, throttlingMethod: 'provided', targets: TARGETS, figures })}\n`);
  } finally {
    while (closers.length) await closers.pop()!().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
