/**
 * Walls stay accessible whatever theme the API accepts (issue 35 point 5;
 * docs/api.md#publication-settings): for each theme of a table of representative accepted ones
 * (the default, a dark one, a high-contrast one, custom brand colours that pass the contrast
 * check, an outline card style with a rounded font), the settings are saved through
 * `PATCH /collection/collections/{id}` (200: accepted), then the wall (grid), the full page and
 * the display page are opened in Chromium and axe-core must find no serious or critical
 * violation on any of them (colour contrast included, measured on the rendered page).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { DARK_THEME } from '../publication-fixtures.ts';
import { expectAccessible } from './console-harness.ts';
import { browserMissing, launch, serve } from './harness.ts';

let browser: Browser;
let sluice: Awaited<ReturnType<typeof serve>>;

/** Representative themes the API accepts (each one is PATCHed and must answer 200). */
const THEMES: [string, Record<string, unknown> | undefined][] = [
  ['default', undefined],
  ['dark', DARK_THEME],
  ['high contrast', { background: '#000000', card: '#000000', text: '#ffffff', muted: '#ffffff', accent: '#ffff00', accentText: '#000000', badgeText: '#000000', badgeBackground: '#ffffff', cardStyle: 'outline', radius: 0 }],
  ['brand colours', { background: '#fdf6e3', card: '#ffffff', text: '#073642', muted: '#4a5a60', accent: '#005f87', accentText: '#ffffff', badgeText: '#ffffff', badgeBackground: '#005f87', font: 'rounded', cardStyle: 'flat', radius: 24 }],
  ['mono, outline', { background: '#eef2f7', card: '#fbfcfe', text: '#111827', muted: '#374151', accent: '#7c2d12', accentText: '#fff7ed', font: 'mono', cardStyle: 'outline', radius: 8 }],
];

beforeAll(async () => {
  browser = await launch();
});

/** A served collection with statuses and links (the helper closes it after the test). */
async function wall(): Promise<void> {
  sluice = await serve();
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_harbour', title: 'The harbour reopens', text: '<p>After two years the <a href="https://news.example/harbour">harbour</a> is open again.</p>' }),
    buildItem({ id: 'rss_status', type: 'status', title: undefined, service: 'mastodon', text: '<p>Lanterns up at #SluiceCon</p>', author: { name: 'Guest', username: 'guest@social.example', userid: null, url: null } }),
    buildItem({ id: 'rss_park', title: 'A new park', text: '<p>Trees, benches and a pond.</p>' }),
  ]);
}

afterAll(async () => {
  await browser?.close();
});

/** Saves `theme` (none: the default wall) with a full-page credit, so every text the theme colours is on the page. */
async function saveTheme(theme: Record<string, unknown> | undefined): Promise<void> {
  const publication = { fullPage: { backgroundAttribution: 'Photo: the harbour at night' }, display: { header: '#SluiceCon' }, ...(theme ? { theme } : {}) };
  const res = await fetch(`${sluice.origin}/collection/collections/${sluice.tenant.collection.id}?access_token=${sluice.tenant.token}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ publication }),
  });
  expect(res.status, await res.text()).toBe(200);
}

/** Opens `url` and waits for its cards and for their fade-in animations to end (axe measures final colours). */
async function open(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(8_000);
  await page.goto(url);
  await page.locator('.card').first().waitFor();
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
  return page;
}

describe.skipIf(browserMissing)('walls with every accepted theme', () => {
  it.each(THEMES)('axe finds nothing serious on the wall, the full page and the display page with the %s theme', async (_name, theme) => {
    await wall();
    await saveTheme(theme);
    const { contract, collection } = sluice.tenant;
    for (const url of [sluice.wallUrl('grid'), sluice.wallUrl('fullPage'), `${sluice.origin}/v1/publication/${contract.slug}/display?q=${collection.slug}`]) {
      const page = await open(url);
      try {
        await expectAccessible(page);
      } catch (error) {
        throw new Error(`${url}: ${(error as Error).message}`);
      } finally {
        await page.context().close();
      }
    }
  }, 60_000);
});
