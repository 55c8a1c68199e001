/**
 * Pins and edits in the console's Moderation screen in Chromium (issue 33 points 1–2): pin two
 * items and reorder them, and see that order on the wall; put one in the spotlight; edit a
 * caption and a picture's alternative text, see the source's named on the card and the edit on
 * the wall, then restore the original. Role and label locators; axe clean with the edit form open.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;

const MIN = 60_000;
const at = (ms: number) => new Date(Date.now() - ms).toISOString();
const PICTURE = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_a', title: 'Harbour festval opens', text: 'Boats and music', date: at(1 * MIN), media: [{ type: 'image', url: PICTURE, width: 400, height: 300 }] }),
    buildItem({ id: 'rss_b', title: 'Council vote', text: 'The budget passed', date: at(2 * MIN) }),
    buildItem({ id: 'rss_c', title: 'Rain tonight', text: 'Bring an umbrella', date: at(3 * MIN) }),
  ]);
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = () => `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${sluice.tenant.collection.id}`;
const card = (page: Page, title: string) => page.getByRole('article', { name: title });
const headings = (page: Page) => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).allTextContents();

/** The wall's cards, first first: their ids. */
async function wallOrder(page: Page): Promise<string[]> {
  await page.goto(`${sluice.origin}/v1/publication/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}`);
  return page.$$eval('.card', (els) => els.map((el) => (el as HTMLElement).dataset.id!));
}

describe.skipIf(browserMissing)('console: pins and edits', () => {
  it('pins two items, moves the second up, and the wall shows them first in that order', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await expect.poll(() => headings(page)).toEqual(['Harbour festval opens', 'Council vote', 'Rain tonight']);
    await page.getByRole('button', { name: 'Pin Council vote', exact: true }).click();
    await card(page, 'Council vote').getByText('Pinned 1').waitFor();
    await page.getByRole('button', { name: 'Pin Rain tonight', exact: true }).click();
    await card(page, 'Rain tonight').getByText('Pinned 2').waitFor();
    await expect.poll(() => headings(page)).toEqual(['Council vote', 'Rain tonight', 'Harbour festval opens']);
    await page.getByRole('button', { name: 'Move up Rain tonight', exact: true }).click();
    await card(page, 'Rain tonight').getByText('Pinned 1').waitFor();
    await expect.poll(() => headings(page)).toEqual(['Rain tonight', 'Council vote', 'Harbour festval opens']);
    // The focus stays with the moved item's card.
    expect(await page.evaluate(() => document.activeElement?.closest('article')?.getAttribute('data-id'))).toBe('rss_c');
    await page.getByRole('button', { name: 'Spotlight Council vote', exact: true }).click();
    await card(page, 'Council vote').getByText('Spotlight', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Spotlight Council vote', exact: true }).getAttribute('aria-pressed')).toBe('true');
    // The pinned filter.
    await page.getByLabel('Pinned').selectOption('true');
    await expect.poll(() => headings(page)).toEqual(['Rain tonight', 'Council vote']);

    const wall = await consolePage(browser);
    expect(await wallOrder(wall)).toEqual(['rss_c', 'rss_b', 'rss_a']);
    expect(await wall.$eval('[data-id="rss_b"]', (el) => el.classList.contains('card--spotlight'))).toBe(true);

    // Unpin: back in its place by date.
    await page.getByLabel('Pinned').selectOption('');
    await page.getByRole('button', { name: 'Unpin Rain tonight', exact: true }).click();
    await expect.poll(() => headings(page)).toEqual(['Council vote', 'Harbour festval opens', 'Rain tonight']);
  });

  it('edits a caption and a picture’s alternative text, shows the original, and restores it', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await page.getByRole('button', { name: 'Edit Harbour festval opens', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit Harbour festval opens' });
    await form.getByLabel('Title').fill('Harbour festival opens');
    await form.getByLabel('Alternative text of picture 1').fill('Boats moored at the quay');
    await expectAccessible(page);
    await form.getByRole('button', { name: 'Save edit' }).click();
    const edited = card(page, 'Harbour festival opens');
    await edited.getByText('Edited', { exact: true }).waitFor();
    await edited.getByText('Original: Harbour festval opens').waitFor();
    expect(await edited.getByRole('img').getAttribute('alt')).toBe('Boats moored at the quay');

    const wall = await consolePage(browser);
    await wallOrder(wall);
    const onWall = wall.getByRole('article', { name: 'Harbour festival opens' });
    expect(await onWall.locator('img').getAttribute('alt')).toBe('Boats moored at the quay');

    await page.getByRole('button', { name: 'Edit Harbour festival opens', exact: true }).click();
    await page.getByRole('form', { name: 'Edit Harbour festival opens' }).getByRole('button', { name: 'Restore original' }).click();
    await card(page, 'Harbour festval opens').waitFor();
    expect(await card(page, 'Harbour festval opens').getByText('Edited', { exact: true }).count()).toBe(0);
  });
});
