/**
 * Analytics in Chromium (issue 35 point 4): a customer's site embeds the wall; the visitor sees
 * the cards and opens one; the wall's beacon reaches Sluice (counted after the flush, with the
 * site's origin only); the console's Analytics screen shows the counts, each chart (a uPlot canvas,
 * named and described by its table) with its table (role and label locators), drawn within the
 * CSP, resized with the window, axe clean at 375 px.
 */
import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushBeacons } from '../../src/publication/beacon.ts';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';
import { embeddingSite } from './harness.ts';

let browser: Browser;
let sluice: ConsoleServer;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_a', title: 'Harbour festival opens', author: { name: 'Ann', username: 'ann', userid: null, url: null } }),
    buildItem({ id: 'rss_b', title: 'Council vote', author: { name: 'Ben', username: 'ben', userid: null, url: null } }),
  ]);
});

afterAll(async () => {
  for (const close of closers) await close();
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

/** The collection's analytics totals over the last day (the API, after writing the counters). */
async function totals(): Promise<Record<string, number>> {
  await flushBeacons(sluice.app);
  const res = await sluice.app.inject({ method: 'GET', url: `/collection/analytics?collection_id=${sluice.tenant.collection.id}&interval=hour&from=${Math.floor(Date.now() / 1000) - 3600}&access_token=${sluice.user.token}` });
  const sum: Record<string, number> = {};
  for (const bucket of res.json().series) for (const [key, value] of Object.entries(bucket)) if (typeof value === 'number') sum[key] = (sum[key] ?? 0) + value;
  return { ...sum, origins: res.json().origins };
}

describe.skipIf(browserMissing)('analytics: the wall beacon and the Analytics screen', () => {
  it('counts the embedded wall view, the cards seen and the card opened, and the console shows them', { timeout: 90_000 }, async () => {
    const site = await embeddingSite(sluice.origin, sluice.tenant.contract.slug, sluice.tenant.collection.slug);
    closers.push(site.close);
    const visitor = await browser.newContext();
    const page = await visitor.newPage();
    await page.goto(site.url);
    const frame = (await (await page.waitForSelector('#wall iframe')).contentFrame()) as Frame;
    // The iframe takes its content's height (embed.js) before the visitor reads it.
    await page.waitForFunction(() => Math.round(document.querySelector('#wall iframe')!.getBoundingClientRect().height) !== 480);
    await frame.getByRole('article', { name: 'Council vote' }).waitFor();
    await frame.click('[data-id="rss_b"] .card__text');
    await frame.getByRole('dialog').waitFor();
    // The wall sends its batch every 5 s: poll the API until it has arrived.
    await expect.poll(totals, { timeout: 20_000, interval: 500 }).toMatchObject({ wallViews: 1, impressions: 2, clicks: 1 });
    const siteOrigin = new URL(site.url).origin;
    expect((await totals()).origins).toEqual([{ page: 'wall', origin: siteOrigin, views: 1 }]);
    // Nothing was set in the visitor's browser.
    expect(await visitor.cookies()).toEqual([]);
    await visitor.close();

    const screen = await consolePage(browser, PHONE);
    // The console's CSP (style-src 'self', no inline script) must not block what uPlot does.
    await screen.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.effectiveDirective} ${event.blockedURI}`));
    });
    await signIn(screen, sluice, `/console/contracts/${sluice.tenant.contract.id}/analytics`);
    await screen.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await expect.poll(() => screen.getByRole('combobox', { name: 'Collection' }).inputValue()).toBe(sluice.tenant.collection.id);
    await screen.getByRole('combobox', { name: 'Period' }).selectOption('24h');
    await screen.getByLabel('Totals of the period').waitFor();
    await expect.poll(() => screen.getByRole('definition').allTextContents()).toEqual(['1', '0', '1', '2', '2', '0', '0', '0']);
    const numbers = screen.getByRole('region', { name: 'Views and clicks: numbers' });
    await expect.poll(() => numbers.getByRole('columnheader').allTextContents()).toEqual(['Period', 'Wall views', 'Display views', 'Clicks']);
    // Each chart is a uPlot canvas, an image named by its totals and described by its table.
    const audience = screen.getByRole('img', { name: 'Views and clicks: Wall views 1, Display views 0, Clicks 1 in all; the table below lists each period.' });
    await audience.waitFor();
    expect(await audience.evaluate((node) => node.tagName)).toBe('CANVAS');
    expect(await audience.getAttribute('aria-describedby')).toBe(await numbers.getAttribute('id'));
    const items = screen.getByRole('img', { name: 'Items collected and moderated: Collected 2, Published 0, Unpublished 0, Removed by filters 0 in all; the table below lists each period.' });
    expect(await items.evaluate((node) => node.tagName)).toBe('CANVAS');
    expect(await screen.getByRole('list', { name: 'Views and clicks: legend' }).getByRole('listitem').allTextContents()).toEqual(['Wall views', 'Display views', 'Clicks']);
    // The table holds the counts: one wall view and one click in the last hour's row.
    const sums = await numbers.getByRole('row').evaluateAll((rows) => rows.slice(1).reduce((sum, row) => sum.map((n, i) => n + Number(row.querySelectorAll('td')[i]!.textContent)), [0, 0, 0]));
    expect(sums).toEqual([1, 0, 1]);
    // uPlot drew the lines: some pixel of the canvas is of the wall views' colour (#1d4ed8).
    expect(await audience.evaluate((canvas) => {
      const { data } = (canvas as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, (canvas as HTMLCanvasElement).width, (canvas as HTMLCanvasElement).height);
      for (let i = 0; i < data.length; i += 4) if (data[i] === 0x1d && data[i + 1] === 0x4e && data[i + 2] === 0xd8) return true;
      return false;
    })).toBe(true);
    // The canvas fits the phone's figure, and follows the figure when the window widens.
    const width = () => audience.evaluate((canvas) => Math.round(canvas.getBoundingClientRect().width));
    const phoneWidth = await width();
    expect(phoneWidth).toBeGreaterThan(200);
    expect(phoneWidth).toBeLessThan(PHONE.width);
    await screen.setViewportSize({ width: 1024, height: 740 });
    await expect.poll(width).toBeGreaterThan(600);
    await screen.setViewportSize(PHONE);
    await expect.poll(width).toBe(phoneWidth);
    expect(await screen.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
    expect(await screen.getByRole('region', { name: 'Top items by clicks' }).getByRole('rowheader', { name: 'Council vote' }).count()).toBe(1);
    expect(await screen.getByText('Ben: 1 click').count()).toBe(1);
    expect(await screen.getByText(`Wall, ${siteOrigin}: 1 view`).count()).toBe(1);
    // Nothing wider than the phone's screen but the tables, which scroll inside their region.
    expect(await screen.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(screen);
  });
});
