/**
 * Pins and spotlight on the wall in real Chromium (issue 33; docs/api.md#pin-and-spotlight): items
 * pinned through the moderation API come first on the wall in their order, with their badge, a
 * spotlight card is larger (two masonry columns), an edit's title and alt text show, and a pin made
 * while the wall is open moves the card to the front through the content stream; axe-core clean.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
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

async function pinnedWall() {
  const sluice = await serve({ CONTENT_MAX_AGE: '1' });
  const { tenant, origin } = sluice;
  await seedItems(
    sluice.db,
    tenant,
    Array.from({ length: 8 }, (_, i) => buildItem({ id: `rss_n${i}`, title: `Story ${i}`, date: minutesAgo(i + 1), media: i === 5 ? [{ type: 'image', url: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=', width: 400, height: 300 }] : null })),
  );
  const moderate = async (id: string, body: unknown) => {
    const res = await fetch(`${origin}/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${id}&access_token=${encodeURIComponent(tenant.token)}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.text()).toBe(200);
  };
  return { ...sluice, moderate, url: sluice.wallUrl('grid') };
}

const order = (page: Page) => page.$$eval('.card', (els) => els.map((el) => (el as HTMLElement).dataset.id));

describe.skipIf(browserMissing)('pins on the wall', () => {
  it('shows pinned items first in their order, a spotlight card larger, and an edit', { timeout: 60_000 }, async () => {
    const { url, moderate } = await pinnedWall();
    await moderate('rss_n6', { pinned: true });
    await moderate('rss_n3', { pinned: true, position: 1 });
    await moderate('rss_n5', { spotlight: true, edit: { title: 'Harbour at dusk', media: [{ alt: 'Boats moored at dusk' }] } });
    const page = await newPage();
    await page.goto(url);
    expect((await order(page)).slice(0, 3)).toEqual(['rss_n3', 'rss_n6', 'rss_n0']);
    // The pinned cards carry their badge, read by assistive technology with the card.
    const first = page.getByRole('article', { name: 'Story 3' });
    expect(await first.locator('.card__pin').textContent()).toBe('Pinned');
    // Both pinned cards sit in the top row.
    const tops = await page.$$eval('.card', (els) => els.slice(0, 2).map((el) => Math.round(el.getBoundingClientRect().top)));
    expect(tops[0]).toBe(tops[1]);
    // The spotlight card is two columns wide: more than twice a regular card's width minus nothing but the gutter.
    const spotlight = page.getByRole('article', { name: 'Harbour at dusk' });
    const wide = await spotlight.evaluate((el) => el.closest('li')!.getBoundingClientRect().width);
    const regular = await page.$eval('[data-id="rss_n0"]', (el) => el.getBoundingClientRect().width);
    expect(wide).toBeGreaterThan(2 * regular);
    // The edited alt text is the picture's (its link is hidden from assistive technology: the card's title names it).
    expect(await spotlight.locator('img').getAttribute('alt')).toBe('Boats moored at dusk');
    // No card overlaps another.
    const boxes = await page.$$eval('.card', (els) => els.map((el) => el.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom })));
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) expect(a.right <= b.left + 0.5 || b.right <= a.left + 0.5 || a.bottom <= b.top + 0.5 || b.bottom <= a.top + 0.5).toBe(true);
    }
    // The badge and the spotlight keep the wall accessible (contrast included).
    await expectAccessible(page);
  });

  it('moves a card to the front when it is pinned while the wall is open', { timeout: 60_000 }, async () => {
    const { url, moderate } = await pinnedWall();
    const page = await newPage();
    await page.goto(url);
    expect((await order(page))[0]).toBe('rss_n0');
    await page.waitForFunction(() => document.readyState === 'complete');
    await moderate('rss_n7', { pinned: true });
    await page.waitForFunction(() => (document.querySelector('.card') as HTMLElement | null)?.dataset.id === 'rss_n7', undefined, { timeout: 15_000 });
    expect((await order(page)).slice(0, 2)).toEqual(['rss_n7', 'rss_n0']);
    expect(await page.locator('[data-id="rss_n7"] .card__pin').textContent()).toBe('Pinned');
  });
});
