/**
 * `npm run bench:console` (issue 33 point 8): how fast each console screen shows its content.
 *
 * Starts the real app on 127.0.0.1 (a fresh SQLite database; with DATABASE_URL=postgres://… an
 * empty PostgreSQL database) with one contract, one collection of BENCH_ITEMS (default 10 000)
 * items stored through the store's write path (`storeItems`, as the collector stores them), three
 * sources, and a user (owner) who signs in once through the sign-in page. Then, in Chromium (the
 * one test/browser/chromium.ts resolves), BENCH_ROUNDS (default 10) rounds of cold navigations
 * (HTTP cache disabled through the DevTools protocol; a full page load in the signed-in tab: the
 * console's whole start-up, with the sign-in round trip when it needs one, README.md#five-minutes-with-the-console)
 * to each screen, after one
 * round not counted (the server's first answer of each route warms its JIT up), measuring
 * navigation start (`performance.timeOrigin` of the first document of the navigation) to the
 * screen's main content visible (its element, `SCREENS`, rendered with a non-empty box, seen by a
 * MutationObserver of an init script at the next animation frame).
 *
 *   baseline   the same navigation to the console's index.html with its scripts refused: the
 *              static "Loading the Sluice console…" of the same server, no API call
 *
 * BENCH_TRACE=1 prints, for every navigation, its documents (a sign-in redirect adds one) and the
 * requests of the last one, in ms from the navigation's start: where the time goes.
 *
 * Prints the median and worst of each screen in ms and as a ratio to the baseline's median, and
 * whether it meets the target (≤ 300 ms). The last line is one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { hashSecret, randomToken } from '../src/auth/secrets.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { createCollection } from '../src/store/collections.ts';
import { createConsumer } from '../src/store/consumers.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { resolveChromium } from '../test/browser/chromium.ts';
import { quantile } from './figures.ts';
import { ownsEntries } from '../src/services/table.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const TARGET_MS = 300;
const DAY = 86_400_000;

/** Each screen: its path under the contract and the element that is its main content. */
const SCREENS: { name: string; segment: string; query?: boolean; selector: string }[] = [
  { name: 'contracts', segment: '', selector: 'ul.collections li' },
  { name: 'sources', segment: 'sources', query: true, selector: '.sources__table tbody tr' },
  { name: 'moderation', segment: 'moderation', query: true, selector: '.moderation__card' },
  { name: 'filters', segment: 'filters', selector: '#filters-lists-title' },
  { name: 'publication', segment: 'publication', selector: '.publication__frame' },
  { name: 'connections', segment: 'connections', selector: '#credentials-title ~ p, .connections__list' },
  { name: 'team', segment: 'team', selector: '.team__table' },
];

/**
 * The init script of every document: the navigation's start (the first document's
 * `timeOrigin`, kept in sessionStorage across the sign-in redirects) and the moment the element
 * `window.__benchSelector` names has a box (epoch ms), in `window.__benchSeen`.
 */
const INIT = `(() => {
  if (!sessionStorage.getItem('bench.t0')) sessionStorage.setItem('bench.t0', String(performance.timeOrigin));
  const docs = JSON.parse(sessionStorage.getItem('bench.docs') || '[]');
  docs.push([Math.round(performance.timeOrigin - Number(sessionStorage.getItem('bench.t0'))), location.pathname + location.search.slice(0, 20)]);
  sessionStorage.setItem('bench.docs', JSON.stringify(docs));
  const selector = sessionStorage.getItem('bench.selector');
  if (!selector) return;
  const check = () => {
    if (window.__benchSeen) return;
    const element = document.querySelector(selector);
    const box = element && element.getBoundingClientRect();
    if (box && box.width > 0 && box.height > 0) {
      window.__benchSeen = performance.timeOrigin + performance.now() - Number(sessionStorage.getItem('bench.t0'));
    }
  };
  new MutationObserver(() => requestAnimationFrame(check)).observe(document, { childList: true, subtree: true, attributes: true });
})();`;

function makeItem(n: number, now: number): ContentItem {
  return {
    id: `rss_${n.toString(36)}`,
    service: 'rss',
    type: 'link',
    title: `Story number ${n} about the city council and the river`,
    text: `<p>Story ${n}: the council voted on the budget; the market opens on Saturday by the river.</p>`,
    tags: [],
    url: `https://example.com/story/${n}`,
    date: new Date(now - (n % 30) * DAY - n * 1000).toISOString(),
    author: { name: `Author ${n % 97}`, username: `author${n % 97}`, userid: null, url: null },
    media: n % 2 ? [{ type: 'image', url: `https://img.example.com/${n}.jpg`, width: 1200, height: 800 }] : null,
    kudos: { score: n % 1000 },
    language: 'en',
  };
}

async function measure(page: Page, url: string, selector: string): Promise<number> {
  await page.evaluate((s) => {
    sessionStorage.removeItem('bench.t0');
    sessionStorage.removeItem('bench.docs');
    sessionStorage.setItem('bench.selector', s);
  }, selector);
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(() => (globalThis as unknown as { __benchSeen?: number }).__benchSeen !== undefined, undefined, { timeout: 20_000, polling: 50 });
  const seen = await page.evaluate(() => (globalThis as unknown as { __benchSeen: number }).__benchSeen);
  if (process.env.BENCH_TRACE) {
    // BENCH_TRACE=1: each navigation's documents and the last one's requests (ms from navigation start).
    const trace = await page.evaluate(() => {
      const t0 = Number(sessionStorage.getItem('bench.t0'));
      const shift = performance.timeOrigin - t0;
      const requests = performance.getEntriesByType('resource').map((e) => [Math.round(e.startTime + shift), Math.round((e as unknown as { responseEnd: number }).responseEnd + shift), e.name.replace(/^https?:\/\/[^/]+/, '').slice(0, 70)]);
      return { docs: sessionStorage.getItem('bench.docs'), requests };
    });
    process.stdout.write(`${url.replace(/^https?:\/\/[^/]+/, '')} seen ${Math.round(seen)} ms\n  documents ${trace.docs}\n${trace.requests.map((r) => `  ${r[0]}–${r[1]} ${r[2]}`).join('\n')}\n`);
  }
  return seen;
}

async function coldPage(context: BrowserContext): Promise<Page> {
  await context.addInitScript(INIT);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  return page;
}

async function main(): Promise<void> {
  const found = await resolveChromium();
  if ('missing' in found) throw new Error(found.missing);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-console-'));
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', PORT: String(port), API_URL: origin, AUTH_URL: origin, QUEUE_URL: origin, ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db });
  await app.listen({ host: '127.0.0.1', port });
  const browser = await chromium.launch({ executablePath: found.executablePath, env: { ...process.env, ...found.env }, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const contract = await createContract(db, 'Bench News', 'bench');
    const collection = await createCollection(db, contract.id, { name: 'World News' }, 'bench');
    const username = 'bench';
    const password = randomToken();
    const consumer = await createConsumer(db, { type: 'user', name: 'Bench User', email: 'bench@example.com', language: 'en', username, passwordHash: await hashSecret(password), clientId: null, secretHash: null });
    await grant(db, consumer.id, contract.id);
    const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 3600, withRefresh: false });
    const now = Date.now();
    const filling = performance.now();
    for (let done = 0; done < ITEMS; done += 1000) {
      const batch = Array.from({ length: Math.min(1000, ITEMS - done) }, (_, k) => makeItem(done + k, now));
      await db.transaction().execute((trx) =>
        storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId: '0'.repeat(24), state: done % 3000 ? 'published' : 'unpublished' }, batch, ownsEntries, now),
      );
    }
    for (const feed of ['world', 'city', 'sport']) {
      const res = await app.inject({ method: 'POST', url: `/collection/inputs?access_token=${encodeURIComponent(token)}`, payload: { service: 'rss', type: 'feed', input: `https://news.example/${feed}.xml`, contractId: contract.id, collectionId: collection.id } });
      if (res.statusCode >= 300) throw new Error(`input: ${res.statusCode} ${res.body}`);
    }
    process.stdout.write(`filled ${ITEMS} items in ${Math.round(performance.now() - filling)} ms\n`);

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await coldPage(context);
    await page.goto(`${origin}/console/`);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#screen-title').waitFor();

    // The baseline: index.html of the same server, its scripts refused (no API call).
    const bare = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await bare.route(/\.js(\?|$)/, (route) => route.abort());
    const barePage = await coldPage(bare);
    await barePage.goto(`${origin}/console/`, { waitUntil: 'commit' });

    const urlOf = (screen: (typeof SCREENS)[number]) =>
      `${origin}/console/contracts/${contract.id}${screen.segment ? `/${screen.segment}` : ''}${screen.query ? `?collection=${collection.id}` : ''}`;
    const samples: Record<string, number[]> = { baseline: [], ...Object.fromEntries(SCREENS.map((s) => [s.name, []])) };
    // One round first, not counted: the server's first answers of each route (its JIT warming up)
    // are not what a running installation answers.
    await measure(barePage, `${origin}/console/`, '.boot');
    for (const screen of SCREENS) await measure(page, urlOf(screen), screen.selector);
    for (let round = 0; round < ROUNDS; round++) {
      samples.baseline!.push(await measure(barePage, `${origin}/console/`, '.boot'));
      for (const screen of SCREENS) samples[screen.name]!.push(await measure(page, urlOf(screen), screen.selector));
    }

    const base = quantile(samples.baseline!, 0.5);
    const figures: Record<string, { medianMs: number; worstMs: number; ratio: number; meets: boolean }> = {};
    const line = (name: string, values: number[]) => {
      const median = quantile(values, 0.5);
      const worst = Math.max(...values);
      figures[name] = { medianMs: Math.round(median), worstMs: Math.round(worst), ratio: Number((median / base).toFixed(1)), meets: worst <= TARGET_MS };
      process.stdout.write(`${name.padEnd(12)} median ${String(Math.round(median)).padStart(5)} ms  worst ${String(Math.round(worst)).padStart(5)} ms  ×${(median / base).toFixed(1)} baseline${name === 'baseline' ? '' : worst <= TARGET_MS ? '  ok' : `  over ${TARGET_MS} ms`}\n`);
    };
    process.stdout.write(`${ITEMS} items, ${ROUNDS} cold navigations each, navigation start → main content visible:\n`);
    line('baseline', samples.baseline!);
    for (const screen of SCREENS) line(screen.name, samples[screen.name]!);
    process.stdout.write(`${JSON.stringify({ bench: 'console', items: ITEMS, rounds: ROUNDS, targetMs: TARGET_MS, figures })}\n`);
    await bare.close();
    await context.close();
  } finally {
    await browser.close();
    await app.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
