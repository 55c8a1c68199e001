/**
 * The Blocked authors screen in Chromium (issue 34 point 3: blocked authors "listed and removable
 * by the API and the console"; docs/api.md#erasure): an admin erases one of two authors from the
 * console, confirming in a dialog; the screen says how many items were removed, lists the author,
 * and the content API serves only the other author's items; Unblock (after a dialog naming the
 * author) removes the row. A display name for a service whose authors have ids is refused by the
 * API, and its message shows beside the value. A viewer has no such screen in the navigation.
 * Axe clean, and 375 px wide without scrolling sideways. Role and label locators.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant } from '../../src/store/contracts.ts';
import { buildItem, buildUser, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, scrollsSideways, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;
let admin: Awaited<ReturnType<typeof buildUser>>;
let viewer: Awaited<ReturnType<typeof buildUser>>;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  admin = await buildUser(sluice.db, { name: 'Ada Admin', username: 'ada', language: 'en' });
  viewer = await buildUser(sluice.db, { name: 'Vic Viewer', username: 'vic', language: 'en' });
  await grant(sluice.db, admin.consumer.id, sluice.tenant.contract.id, undefined, 'admin');
  await grant(sluice.db, viewer.consumer.id, sluice.tenant.contract.id, undefined, 'viewer');
  const by = (name: string) => ({ name, username: null, userid: null, url: null });
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_m1', title: 'Mallory on the harbour', author: by('Mallory') }),
    buildItem({ id: 'rss_m2', title: 'Mallory on the council', author: by('Mallory') }),
    buildItem({ id: 'rss_t1', title: 'Trent on the weather', author: by('Trent') }),
  ]);
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = (segment: string) => `/console/contracts/${sluice.tenant.contract.id}${segment ? `/${segment}` : ''}`;
const nav = (page: Page) => page.getByRole('navigation', { name: 'Screens' }).getByRole('link').allTextContents();
const served = async () =>
  (await sluice.app.inject({ method: 'GET', url: `/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}` })).json().map((item: { id: string }) => item.id).sort();

describe.skipIf(browserMissing)('console: blocked authors', () => {
  it('an admin erases an author after confirming; the count shows, the author is listed, their items are gone; Unblock removes the row', { timeout: 90_000 }, async () => {
    expect(await served()).toEqual(['rss_m1', 'rss_m2', 'rss_t1']);
    const page = await consolePage(browser);
    await signIn(page, sluice, screen(''), admin);
    await page.getByRole('link', { name: 'Blocked authors' }).click();
    await page.getByRole('heading', { name: 'Blocked authors', level: 1 }).waitFor();
    await page.getByText('No author is blocked.').waitFor();

    // Hostile: a display name for a service whose authors have ids → the API's 400 beside the value.
    await page.getByLabel('Service').selectOption('mastodon');
    await page.getByLabel('Author named by').selectOption('name');
    await page.getByLabel("Author's display name").fill('Mallory');
    await page.getByRole('button', { name: 'Erase…' }).click();
    await page.getByRole('dialog', { name: 'Erase Mallory?' }).getByRole('button', { name: 'Erase every item' }).click();
    await expect.poll(async () => (await page.getByLabel("Author's display name").getAttribute('aria-invalid')) ?? '').toBe('true');
    await page.locator('.field__error').filter({ hasText: /./ }).waitFor();
    expect(await served()).toEqual(['rss_m1', 'rss_m2', 'rss_t1']);

    // Cancel keeps everything.
    await page.getByLabel('Service').selectOption('rss');
    await page.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Erase Mallory?' });
    await dialog.getByText('deletes every item of Mallory (rss display name) in every collection of this contract').waitFor();
    await dialog.getByText('It cannot be undone.').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await served()).toEqual(['rss_m1', 'rss_m2', 'rss_t1']);

    await page.getByRole('button', { name: 'Erase…' }).click();
    await dialog.getByRole('button', { name: 'Erase every item' }).click();
    await page.getByText('Removed 2 items of Mallory (rss display name)').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Mallory' });
    await row.getByRole('rowheader').filter({ hasText: 'Mallory (display name)' }).waitFor();
    expect(await row.getByRole('cell').first().textContent()).toContain('rss');
    expect(await row.locator('time').count()).toBe(1);
    await expect.poll(served).toEqual(['rss_t1']);
    await expectAccessible(page);

    await row.getByRole('button', { name: 'Unblock Mallory' }).click();
    const unblock = page.getByRole('dialog', { name: 'Unblock Mallory?' });
    await unblock.getByText('Mallory (rss display name)').waitFor();
    await unblock.getByRole('button', { name: 'Unblock' }).click();
    await page.getByText('Mallory (rss display name) is no longer blocked').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Mallory' }).count()).toBe(0);
    expect((await sluice.app.inject({ method: 'GET', url: `/collection/blocked-authors?contract_id=${sluice.tenant.contract.id}`, headers: { authorization: `Bearer ${admin.token}` } })).json()).toEqual([]);
  });

  it('a viewer has no Blocked authors screen in the navigation nor by address', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen(''), viewer);
    expect(await nav(page)).not.toContain('Blocked authors');
    await page.goto(`${sluice.origin}${screen('blocked')}`);
    await page.getByText('Blocked authors needs the role admin').waitFor();
    expect(await page.getByRole('button', { name: /^(Erase|Unblock)/ }).count()).toBe(0);
  });

  it('the screen is axe clean and works 375 px wide', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, screen('blocked'), admin);
    await page.getByRole('heading', { name: 'Erase an author' }).waitFor();
    await page.getByLabel('Service').selectOption('rss');
    await page.getByLabel('Author named by').selectOption('name');
    await page.getByLabel("Author's display name").fill('Someone with a rather long display name for a narrow phone');
    await page.getByRole('button', { name: 'Erase…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Erase every item' }).click();
    await page.getByText('Removed 0 items').waitFor();
    await page.getByRole('button', { name: /^Unblock Someone/ }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
  });
});
