/**
 * The display page for event screens in real Chromium (issue 35 point 3; docs/api.md#display-page
 * and #display-controls): at 1920×1080 and 3840×2160 it shows the header, the QR code (inline
 * SVG) and items in type that grows with the screen; the carousel moves on after its dwell; the
 * display controls sent to the management API reach open screens through the content stream
 * (Blank: no item, Resume: items again, Pause: nothing moves); a screen opened while blank shows
 * no item; axe-core finds nothing serious. Screenshots go to SCREENSHOT_DIR when set, for a
 * person to look at.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { buildItem, seedItems } from '../helper.ts';
import { DARK_THEME } from '../publication-fixtures.ts';
import { expectAccessible } from './console-harness.ts';
import { browserMissing, launch, networkRelay, serve } from './harness.ts';

let browser: Browser;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function newPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  closers.push(() => context.close());
  return context.newPage();
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

/** Statuses and links of different lengths, newest first. */
function eventItems(count = 12): ContentItem[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2
      ? buildItem({ id: `rss_ev${String(i).padStart(2, '0')}`, date: minutesAgo(i + 1), type: 'link', title: `Keynote ${i}: what the harbour taught us`, text: '<p>Notes from the main stage.</p>' })
      : buildItem({
          id: `rss_ev${String(i).padStart(2, '0')}`,
          date: minutesAgo(i + 1),
          type: 'status',
          title: undefined,
          service: 'mastodon',
          text: `<p>Post ${i} from the crowd at #SluiceCon${' and the lanterns are up'.repeat(i % 3)}</p>`,
          author: { name: `Guest ${i}`, username: `guest${i}@social.example`, userid: null, url: null },
        }),
  );
}

/** A served collection with these items and display settings; `display(state)` sends a control. */
async function event(items: ContentItem[], display: Record<string, unknown>, more: Record<string, unknown> = {}) {
  const sluice = await serve({ CONTENT_MAX_AGE: '60' });
  const { tenant, origin } = sluice;
  const collection = `${origin}/collection/collections/${tenant.collection.id}`;
  const res = await fetch(`${collection}?access_token=${tenant.token}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dedupe: 'off', publication: { display, ...more } }),
  });
  expect(res.status, await res.text()).toBe(200);
  await seedItems(sluice.db, tenant, items);
  const control = async (state: string) => {
    const sent = await fetch(`${collection}/display?access_token=${tenant.token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state }) });
    expect(sent.status, await sent.text()).toBe(200);
  };
  return { ...sluice, control, url: `${origin}/v1/publication/${tenant.contract.slug}/display?q=${tenant.collection.slug}` };
}

/** Waits until the page's CSS animations (a card fading in) have finished, so axe measures final colours. */
const settled = (page: Page) => page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));

/** Cards a person can see on the screen (laid out, inside the viewport). */
const visibleCards = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('.card')].filter((el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
    }).length,
  );

async function shoot(page: Page, name: string): Promise<void> {
  await settled(page);
  const shot = await page.screenshot();
  expect(shot.length).toBeGreaterThan(1000);
  if (process.env.SCREENSHOT_DIR) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(process.env.SCREENSHOT_DIR, `${name}.png`), shot);
  }
}

describe.skipIf(browserMissing)('the display page', () => {
  it('shows the header, the QR code and items in type scaled to the screen, at 1920×1080 and 3840×2160', async () => {
    const { url } = await event(eventItems(), { header: '#SluiceCon', qrUrl: 'https://example.com/join' }, { theme: DARK_THEME });
    const sizes: Record<number, { text: number; title: number }> = {};
    for (const [width, height] of [[1920, 1080], [3840, 2160]] as const) {
      const page = await newPage({ width, height });
      await page.goto(url);
      expect(await page.textContent('h1')).toBe('#SluiceCon');
      const qr = page.locator('.display__qr svg');
      expect(await qr.count()).toBe(1);
      expect(await page.getAttribute('.display__qr-box', 'aria-label')).toBe('QR code: https://example.com/join');
      expect(await page.textContent('.display__qr-caption')).toBe('example.com/join');
      const qrBox = (await qr.boundingBox())!;
      expect(qrBox.width).toBeGreaterThan(width / 20); // large enough to scan from a distance
      expect(await visibleCards(page)).toBeGreaterThan(3);
      sizes[width] = {
        text: await page.$eval('.card__text', (el) => parseFloat(getComputedStyle(el).fontSize)),
        title: await page.$eval('h1', (el) => parseFloat(getComputedStyle(el).fontSize)),
      };
      // large type: far above a web page's 15 px
      expect(sizes[width]!.text).toBeGreaterThanOrEqual(width / 90);
      // everything fits the screen: no scrollbars
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth && document.documentElement.scrollHeight <= innerHeight)).toBe(true);
      await expectAccessible(page);
      await shoot(page, `display-wall-${width}`);
    }
    // the type doubles with the screen
    expect(sizes[3840]!.text / sizes[1920]!.text).toBeCloseTo(2, 1);
    expect(sizes[3840]!.title / sizes[1920]!.title).toBeCloseTo(2, 1);
  });

  it('wall mode scrolls by itself, as an animation the compositor plays (no main-thread task per frame)', async () => {
    const { url } = await event(eventItems(30), { mode: 'wall' });
    const page = await newPage({ width: 1920, height: 1080 });
    await page.goto(url);
    // The columns move up…
    await page.waitForFunction(() => new DOMMatrix(getComputedStyle(document.querySelector('.display__items')!).transform).m42 < -20, undefined, { timeout: 15_000 });
    // …through one transform animation, not by the script setting the stage's scroll position
    // every frame (each of those frames was a long task: Lighthouse's total blocking time,
    // docs/operations.md#benchmarks).
    expect(await page.evaluate(() => ({
      scrollTop: document.getElementById('display')!.scrollTop,
      animations: document.getAnimations().filter((a) => (a.effect as KeyframeEffect).target === document.querySelector('.display__items') && a.playState === 'running').length,
    }))).toEqual({ scrollTop: 0, animations: 1 });
  });

  it('carousel shows a few items at a time and moves on after the dwell; ticker moves sideways', async () => {
    const { url, control } = await event(eventItems(6), { mode: 'carousel', dwellSeconds: 2, perSlide: 2 });
    const page = await newPage({ width: 1920, height: 1080 });
    await page.goto(url);
    const shown = () => page.$$eval('.display__items .card', (els) => els.map((el) => (el as HTMLElement).dataset.id));
    const first = await shown();
    expect(first).toEqual(['rss_ev00', 'rss_ev01']);
    await shoot(page, 'display-carousel-1920');
    await page.waitForFunction((ids) => [...document.querySelectorAll('.display__items .card')].map((el) => (el as HTMLElement).dataset.id).join() !== ids, first.join(), { timeout: 10_000 });
    expect(await shown()).toEqual(['rss_ev02', 'rss_ev03']);
    await control('paused');
    await page.waitForFunction(() => document.body.dataset.state === 'paused', undefined, { timeout: 5_000 });
    await settled(page);
    await expectAccessible(page);

    const ticker = await event(eventItems(8), { mode: 'ticker' });
    const tickerPage = await newPage({ width: 3840, height: 2160 });
    await tickerPage.goto(ticker.url);
    const x = () => tickerPage.$eval('.display__items', (el) => new DOMMatrix(getComputedStyle(el).transform).m41);
    const start = await x();
    await tickerPage.waitForFunction((from) => new DOMMatrix(getComputedStyle(document.querySelector('.display__items')!).transform).m41 < from - 50, start, { timeout: 10_000 });
    await shoot(tickerPage, 'display-ticker-3840');
  });

  it('pinned items return every N items in the carousel', async () => {
    const { url } = await event(eventItems(6), { mode: 'carousel', dwellSeconds: 2, pinnedEvery: 2 });
    const page = await newPage({ width: 1920, height: 1080 });
    // Items carry no pin until the moderation desk stores one: the page as the server renders it
    // once rss_ev05 is pinned (its id among the page's pinned ids, set before the page's script runs).
    await page.addInitScript(() => {
      new MutationObserver((_records, observer) => {
        const stage = document.getElementById('display');
        if (!stage) return;
        const settings = JSON.parse(stage.dataset.settings!);
        stage.dataset.settings = JSON.stringify({ ...settings, pinned: ['rss_ev05'] });
        observer.disconnect();
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(url);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = await page.$eval('.display__items .card', (el) => (el as HTMLElement).dataset.id!);
      seen.push(id);
      if (i < 5) await page.waitForFunction((was) => (document.querySelector('.display__items .card') as HTMLElement | null)?.dataset.id !== was, id, { timeout: 10_000 }).catch((error) => { throw new Error(`after ${seen.join()}: ${error}`); });
    }
    expect(seen).toEqual(['rss_ev05', 'rss_ev00', 'rss_ev01', 'rss_ev05', 'rss_ev02', 'rss_ev03']);
  });

  it('follows the display controls on two open screens: Blank shows no item, Resume brings them back, Pause holds', async () => {
    const { url, control, db, tenant } = await event(eventItems(), { mode: 'carousel', dwellSeconds: 2 }, { fullPage: { logo: 'https://images.test/logo.svg' } });
    const screens = [await newPage({ width: 1920, height: 1080 }), await newPage({ width: 3840, height: 2160 })];
    for (const page of screens) {
      await page.route('https://images.test/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="120"><rect width="400" height="120" fill="#4f46e5"/></svg>' }));
      await page.goto(url);
      expect(await visibleCards(page)).toBe(1);
    }
    // The stream is open on both (its first event is the state, sent on subscribing).
    const started = Date.now();
    await control('blank');
    for (const page of screens) await page.waitForFunction(() => document.body.dataset.state === 'blank' && document.querySelectorAll('.card').length > 0, undefined, { timeout: 5_000 });
    const blankedMs = Date.now() - started;
    for (const page of screens) {
      expect(await visibleCards(page)).toBe(0);
      expect(await page.isVisible('.display__blank-title')).toBe(true);
      expect(await page.isVisible('.display__blank-logo')).toBe(true);
    }
    await shoot(screens[0]!, 'display-blank-1920');
    await settled(screens[0]!);
    await expectAccessible(screens[0]!);

    await control('live');
    for (const page of screens) await page.waitForFunction(() => document.body.dataset.state === 'live', undefined, { timeout: 5_000 });
    for (const page of screens) expect(await visibleCards(page)).toBe(1);

    // Pause: the slide stays past several dwells, and a new item waits…
    await control('paused');
    for (const page of screens) await page.waitForFunction(() => document.body.dataset.state === 'paused', undefined, { timeout: 5_000 });
    const held = await screens[0]!.$eval('.display__items .card', (el) => (el as HTMLElement).dataset.id);
    await seedItems(db, tenant, [buildItem({ id: 'rss_late', date: new Date().toISOString(), type: 'status', title: undefined, text: '<p>Arrived during the pause</p>' })]);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await screens[0]!.$eval('.display__items .card', (el) => (el as HTMLElement).dataset.id)).toBe(held);
    expect(await screens[0]!.$$eval('[data-id="rss_late"]', (els) => els.length)).toBe(0);
    // …and is shown next, announced, once live again.
    await control('live');
    await screens[0]!.waitForSelector('.display__items [data-id="rss_late"]', { timeout: 5_000 });
    expect(await screens[0]!.textContent('#display-status')).toBe('1 new post');
    console.log(`display control: both screens blank ${blankedMs} ms after the POST was sent`);
  });

  it('shows no item when opened while blank, and items once resumed', async () => {
    const { url, control } = await event(eventItems(), { mode: 'wall' });
    await control('blank');
    const page = await newPage({ width: 1920, height: 1080 });
    await page.goto(url);
    expect(await page.getAttribute('body', 'data-state')).toBe('blank');
    expect(await visibleCards(page)).toBe(0);
    expect(await page.isVisible('.display__blank-title')).toBe(true);
    await expectAccessible(page);
    await control('live');
    await page.waitForFunction(() => document.body.dataset.state === 'live', undefined, { timeout: 5_000 });
    expect(await visibleCards(page)).toBeGreaterThan(3);
  });

  it('keeps its items when the network is cut, and catches up when it is back', async () => {
    const { url, control, db, tenant, origin } = await event(eventItems(4), { mode: 'wall' });
    const network = await networkRelay(origin);
    closers.push(network.close);
    const page = await newPage({ width: 1920, height: 1080 });
    await page.goto(url.replace(origin, network.origin));
    // The stream is open: a control reaches the screen.
    await control('paused');
    await page.waitForFunction(() => document.body.dataset.state === 'paused', undefined, { timeout: 5_000 });
    await control('live');
    await page.waitForFunction(() => document.body.dataset.state === 'live', undefined, { timeout: 5_000 });
    network.cut();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await visibleCards(page)).toBe(4);
    // meanwhile: a new item and a blank screen
    await seedItems(db, tenant, [buildItem({ id: 'rss_offline', date: new Date().toISOString(), type: 'status', title: undefined, text: '<p>Published while the screen was offline</p>' })]);
    await control('blank');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await page.getAttribute('body', 'data-state')).toBe('live');
    expect(await visibleCards(page)).toBe(4);
    network.restore();
    await page.waitForFunction(() => document.body.dataset.state === 'blank', undefined, { timeout: 15_000 });
    await control('live');
    await page.waitForSelector('[data-id="rss_offline"]', { timeout: 15_000 });
  });
});
