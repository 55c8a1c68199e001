/**
 * Analytics in Chromium (issue 35 point 4): a customer's site embeds the wall; the visitor sees
 * the cards and opens one; the wall's beacon reaches Sluice (counted after the flush, with the
 * site's origin only); the console's Analytics screen shows the counts, each chart with its table
 * (role and label locators), axe clean at 375 px.
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
  await sluice?.close();
  await browser?.close();
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
    await signIn(screen, sluice, `/console/contracts/${sluice.tenant.contract.id}/analytics`);
    await screen.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await expect.poll(() => screen.getByRole('combobox', { name: 'Collection' }).inputValue()).toBe(sluice.tenant.collection.id);
    await screen.getByRole('combobox', { name: 'Period' }).selectOption('24h');
    await screen.getByLabel('Totals of the period').waitFor();
    await expect.poll(() => screen.getByRole('definition').allTextContents()).toEqual(['1', '0', '1', '2', '2', '0', '0', '0']);
    const numbers = screen.getByRole('region', { name: 'Views and clicks: numbers' });
    await expect.poll(() => numbers.getByRole('columnheader').allTextContents()).toEqual(['Period', 'Wall views', 'Display views', 'Clicks']);
    expect(await screen.getByRole('img', { name: /Views and clicks: Wall views 1, Display views 0, Clicks 1/ }).count()).toBe(1);
    expect(await screen.getByRole('region', { name: 'Top items by clicks' }).getByRole('rowheader', { name: 'Council vote' }).count()).toBe(1);
    expect(await screen.getByText('Ben: 1 click').count()).toBe(1);
    expect(await screen.getByText(`Wall, ${siteOrigin}: 1 view`).count()).toBe(1);
    // Nothing wider than the phone's screen but the tables, which scroll inside their region.
    expect(await screen.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(screen);
  });
});
