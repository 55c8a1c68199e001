/**
 * The wall as a display in real Chromium (issue 35; docs/api.md#publication-settings): masonry
 * without holes, no layout shift while pictures arrive late, the collection's language and theme
 * applied, axe-core clean with the default theme and an accepted custom one, auto-scroll, and
 * screenshots at 375 px and 3840 px for a person to look at (written to SCREENSHOT_DIR when set).
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { buildItem, seedItems } from '../helper.ts';
import { DARK_THEME, typedItems } from '../publication-fixtures.ts';
import { expectAccessible } from './console-harness.ts';
import { browserMissing, launch, serve } from './harness.ts';

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

async function newPage(viewport = { width: 1100, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  closers.push(() => context.close());
  return context.newPage();
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();
const LOREM = 'Crowds gathered along the river as the lanterns went up one by one, and the band kept playing long after the rain began. ';

/** Sixteen cards of very different heights: short and long statuses, pictures of five shapes (https, loaded late by the test), links. */
function mixedItems(): ContentItem[] {
  const shapes: [number, number][] = [[1080, 1350], [1920, 1080], [1000, 1000], [800, 600], [3000, 1000], [0, 0]];
  return Array.from({ length: 16 }, (_, i) => {
    const base = { id: `rss_mixed${String(i).padStart(2, '0')}`, date: minutesAgo(i + 1), url: `https://news.example/mixed/${i}`, kudos: { score: i % 3 ? 0 : 10 + i } };
    if (i % 3 === 0) {
      const [width, height] = shapes[(i / 3) % shapes.length]!;
      return buildItem({ ...base, type: 'image', title: undefined, text: `Picture ${i} from the quay`, media: [{ type: 'image', url: `https://images.test/${i}.svg`, ...(width ? { width, height } : {}) }] });
    }
    if (i % 3 === 1) return buildItem({ ...base, type: 'status', title: undefined, service: 'mastodon', text: `<p>Status ${i}: ${LOREM.repeat(i % 4)}</p>`, author: { name: `Person ${i}`, username: `p${i}@social.example`, userid: null, url: null } });
    return buildItem({ ...base, type: 'link', title: `Story ${i}${' with a longer headline that wraps'.repeat(i % 3)}`, text: `<p>${LOREM.slice(0, 40 + 30 * (i % 5))}</p>` });
  });
}

/** A served wall with these items and publication settings (set through the management API). */
async function wall(items: ContentItem[], publication: Record<string, unknown> = {}) {
  const sluice = await serve({ CONTENT_MAX_AGE: '60' });
  const { tenant, origin } = sluice;
  const res = await fetch(`${origin}/collection/collections/${tenant.collection.id}?access_token=${tenant.token}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dedupe: 'off', publication }),
  });
  expect(res.status, await res.text()).toBe(200);
  await seedItems(sluice.db, tenant, items);
  return { ...sluice, url: `${origin}/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}` };
}

/**
 * Serves the https pictures of `mixedItems` after `delayMs`, each with a shape other than the one
 * its item declares (a box sized from the picture's own file would move). Pictures are SVG.
 */
async function latePictures(page: Page, delayMs: number): Promise<void> {
  // The wall asks for its pictures through the media proxy (MEDIA_PROXY=wall, the default;
  // docs/api.md#media-proxy), whose own fetch cannot reach this made-up host: the browser's
  // requests are answered here, late, whichever address the wall gives them.
  await page.route(/^https:\/\/images\.test\/|\/v1\/media\//, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="500" height="900"><rect width="500" height="900" fill="#7c3aed"/><circle cx="250" cy="450" r="120" fill="#f97316"/></svg>';
    await route.fulfill({ status: 200, contentType: 'image/svg+xml', body: svg });
  });
}

/** Sums layout shifts not caused by input (the CLS of the Layout Instability API), from before the page's first script. */
async function recordShifts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __shifts: { value: number; sources: string[] }[] };
    w.__shifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean; sources?: { node?: Node }[] }[]) {
        if (!entry.hadRecentInput) w.__shifts.push({ value: entry.value, sources: (entry.sources ?? []).map((s) => (s.node as HTMLElement | undefined)?.className ?? String(s.node)) });
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
}

/** The cards' boxes grouped by column (left edge), each column top to bottom. */
async function columns(page: Page) {
  const boxes = await page.$$eval('.card', (els) => els.map((el) => { const r = el.getBoundingClientRect(); return { id: (el as HTMLElement).dataset.id!, left: Math.round(r.left), top: r.top + scrollY, bottom: r.bottom + scrollY, height: r.height }; }));
  const byLeft = Map.groupBy(boxes, (b) => b.left);
  return [...byLeft.entries()].sort((a, b) => a[0] - b[0]).map(([, column]) => column.sort((a, b) => a.top - b.top));
}

describe.skipIf(browserMissing)('the wall as a display', () => {
  it('packs cards of different heights as masonry: no gap in a column larger than the gutter', async () => {
    const { url } = await wall(mixedItems());
    const page = await newPage({ width: 1100, height: 800 });
    await latePictures(page, 0);
    await page.goto(url);
    const gutter = await page.$eval('.wall__items', (el) => parseFloat(getComputedStyle(el).columnGap));
    expect(gutter).toBe(16);
    const cols = await columns(page);
    expect(cols.length).toBe(4);
    const heights = cols.flat().map((b) => b.height);
    expect(Math.max(...heights) - Math.min(...heights)).toBeGreaterThan(150); // the cards really differ
    const firstTop = cols[0]![0]!.top;
    const gaps: number[] = [];
    for (const column of cols) {
      expect(Math.abs(column[0]!.top - firstTop)).toBeLessThan(0.5); // every column starts at the top
      for (let i = 1; i < column.length; i++) gaps.push(column[i]!.top - column[i - 1]!.bottom);
    }
    expect(gaps.length).toBe(12);
    for (const gap of gaps) {
      expect(gap).toBeLessThanOrEqual(gutter + 0.5);
      expect(gap).toBeGreaterThanOrEqual(gutter - 1.5);
    }
    // the columns end close together: each card went to the shortest column
    const ends = cols.map((column) => column.at(-1)!.bottom);
    const tallest = Math.max(...cols.flat().map((b) => b.height));
    expect(Math.max(...ends) - Math.min(...ends)).toBeLessThanOrEqual(tallest + gutter);
    // reading order is still newest first
    expect(await page.$$eval('.card', (els) => els.map((el) => (el as HTMLElement).dataset.id))).toEqual(mixedItems().map((item) => item.id));
    // a narrower window: placed again, still without holes
    await page.setViewportSize({ width: 700, height: 800 });
    await page.waitForFunction(() => {
      const cards = [...document.querySelectorAll('.card')].map((el) => el.getBoundingClientRect());
      return new Set(cards.map((r) => Math.round(r.left))).size === 2;
    });
    for (const column of await columns(page)) {
      for (let i = 1; i < column.length; i++) expect(column[i]!.top - column[i - 1]!.bottom).toBeLessThanOrEqual(gutter + 0.5);
    }
  });

  it('has no layout shift while pictures arrive late (CLS 0)', async () => {
    const { url } = await wall(mixedItems());
    const page = await newPage({ width: 1280, height: 2400 });
    await recordShifts(page);
    await latePictures(page, 1500);
    await page.goto(url);
    await page.waitForFunction(() => [...document.images].length > 0 && [...document.images].every((img) => img.complete && img.naturalWidth > 0), undefined, { timeout: 15_000 });
    // two more frames for any shift the last picture would cause to be reported
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const shifts = await page.evaluate(() => (window as unknown as { __shifts: { value: number; sources: string[] }[] }).__shifts);
    expect(shifts).toEqual([]);
  });

  it("speaks the collection's language: the wall's own words and relative times", async () => {
    const hours = Array.from({ length: 22 }, (_, i) => buildItem({ id: `rss_h${String(i).padStart(2, '0')}`, type: 'status', title: undefined, text: `Meldung ${i}`, date: new Date(Date.now() - (i + 3) * 3_600_000).toISOString() }));
    const { url } = await wall([...typedItems(), ...hours], { language: 'de', type: 'vertical' });
    const page = await newPage();
    await page.goto(url);
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    const de = new Intl.RelativeTimeFormat('de', { numeric: 'auto', style: 'short' });
    expect(await page.textContent('[data-id="instagram_sunset"] time')).toBe(de.format(-2, 'minute'));
    expect(await page.textContent('[data-id="mastodon_hello"] .card__more')).toMatch(/^Öffnen/);
    expect(await page.$eval('.overlay__close', (el) => el.getAttribute('aria-label'))).toBe('Schließen');
    expect(await page.$eval('.wall__more', (el) => el.textContent)).toBe('Ältere Beiträge');
    // cards the script adds (the next page) get their times from the script, in the same language
    await page.evaluate(() => document.querySelector('.wall__more')!.scrollIntoView());
    await page.waitForSelector('[data-id="rss_h21"]');
    expect(await page.textContent('[data-id="rss_h21"] time')).toBe(de.format(-1, 'day')); // "gestern"
    expect(await page.textContent('[data-id="rss_h21"] time')).not.toMatch(/ago/);
  });

  it('applies the theme and stays accessible (axe-core) with the default and an accepted dark theme', async () => {
    const plain = await wall(typedItems());
    const page = await newPage();
    await page.goto(plain.url);
    await expectAccessible(page);

    const dark = await wall(typedItems(), { theme: DARK_THEME });
    const darkPage = await newPage();
    await darkPage.goto(dark.url);
    const style = (selector: string, property: string) => darkPage.$eval(selector, (el, p) => getComputedStyle(el).getPropertyValue(p), property);
    expect(await style('body', 'background-color')).toBe('rgb(15, 23, 42)');
    expect(await style('.card', 'background-color')).toBe('rgb(30, 41, 59)');
    expect(await style('[data-id="mastodon_hello"] .card__text', 'color')).toBe('rgb(241, 245, 249)');
    expect(await style('.card__service', 'color')).toBe('rgb(203, 213, 225)');
    expect(await style('.card__service', 'background-color')).toBe('rgb(15, 23, 42)');
    expect(await style('.card__avatar', 'color')).toBe('rgb(17, 24, 39)');
    expect(await style('.card', 'border-top-left-radius')).toBe('4px');
    expect(await style('.card', 'box-shadow')).toBe('rgb(203, 213, 225) 0px 0px 0px 1px');
    expect(await style('body', 'font-family')).toMatch(/^Georgia/);
    await expectAccessible(darkPage);
  });

  it('scrolls by itself when autoScroll is on, and its button stops it', async () => {
    const items = Array.from({ length: 20 }, (_, i) => buildItem({ id: `rss_auto${String(i).padStart(2, '0')}`, type: 'status', title: undefined, text: `Status ${i}: ${LOREM}`, date: minutesAgo(i + 1) }));
    const { url } = await wall(items, { type: 'vertical', autoScroll: true, language: 'nl' });
    const page = await newPage({ width: 600, height: 500 });
    await page.mouse.move(590, 495); // away from the wall: the pointer over it would hold it
    await page.goto(url);
    const button = page.locator('#wall-autoscroll');
    expect(await button.textContent()).toBe('Scrollen pauzeren');
    await page.waitForFunction(() => scrollY > 20, undefined, { timeout: 10_000 });
    await button.click();
    expect(await button.textContent()).toBe('Scrollen hervatten');
    const held = await page.evaluate(async () => {
      const before = scrollY;
      for (let i = 0; i < 20; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
      return scrollY - before;
    });
    expect(held).toBe(0);
  });

  it('screenshots at 375 px and 3840 px wide', async () => {
    const publication = { type: 'fullPage', theme: DARK_THEME, fullscreenLink: 'https://example.com/wall', fullPage: { backgroundAttribution: 'Photo: the harbour at dusk' } };
    const { url } = await wall([...typedItems(), ...mixedItems()], publication);
    for (const width of [375, 3840]) {
      const page = await newPage({ width, height: width === 375 ? 740 : 2160 });
      await latePictures(page, 0);
      await page.goto(url);
      // the pictures on the screen have arrived (those further down load lazily)
      await page.waitForFunction(() => [...document.images].filter((img) => img.getBoundingClientRect().top < innerHeight).every((img) => img.complete));
      const shot = await page.screenshot({ fullPage: width === 375 ? false : false });
      expect(shot.length).toBeGreaterThan(1000);
      if (process.env.SCREENSHOT_DIR) {
        const { writeFileSync } = await import('node:fs');
        writeFileSync(join(process.env.SCREENSHOT_DIR, `wall-${width}.png`), shot);
      }
      // nothing overflows the screen sideways
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    }
  });
});
