/**
 * The console's Moderation screen in Chromium (issue 12): a collection's queue seeded through the
 * store (as the collector stores items), one item unpublished with the mouse and one with the
 * keyboard (j/k/u) and the public content API leaving both out, bulk publish of selected items, a
 * new item announced through the queue stream without moving the list, the state and text
 * filters, the shortcuts dialog, a card's duplicates and the split of one (issue 17), an item
 * removed at the source shown live without actions (issue 34), an erased author's card dropped
 * live (issue 34 point 3), an expired card dropped live (docs/api.md#retention), axe, and
 * 375 px. Role and label locators only.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { OPERATOR } from '../../src/store/audit.ts';
import { eraseAuthor } from '../../src/store/erasures.ts';
import { removeItems } from '../../src/store/removals.ts';
import { expireItems } from '../../src/store/retention.ts';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';
import { ownsEntries } from '../../src/services/table.ts';

let browser: Browser;
let sluice: ConsoleServer;
const METRICS = 'metrics-token-of-the-moderation-tests';

/** Open queue streams of this server (the `sluice_stream_connections` gauge, docs/operations.md#metrics). */
async function moderatorStreams(): Promise<number> {
  const res = await sluice.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
  return Number(/^sluice_stream_connections\{audience="moderator"\} (\d+)/m.exec(res.body)?.[1] ?? 0);
}

const MIN = 60_000;
const at = (ms: number) => new Date(Date.now() - ms).toISOString();

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole({ METRICS_TOKEN: METRICS });
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_a', title: 'Harbour festival opens', text: '<p>Boats and <b>music</b> <img src=x onerror="document.title=\'pwned\'"></p>', date: at(1 * MIN) }),
    buildItem({ id: 'rss_b', title: 'Council vote', text: 'The budget passed', date: at(2 * MIN) }),
    buildItem({ id: 'rss_c', title: 'Rain tonight', text: 'Bring an umbrella', date: at(3 * MIN), kudos: { score: 500 } }),
  ]);
  await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_d', title: 'Waiting for a moderator', text: 'Held back', date: at(4 * MIN) })], 'unpublished');
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = () => `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${sluice.tenant.collection.id}`;

/** The ids the public content API returns for the collection. */
async function published(): Promise<string[]> {
  const res = await fetch(`${sluice.origin}/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}&since=0`);
  return ((await res.json()) as { id: string }[]).map((item) => item.id);
}

const card = (page: Page, title: string) => page.getByRole('article', { name: title });

describe.skipIf(browserMissing)('console: Moderation', () => {
  it('moderates by mouse, keyboard and selection; the content API follows; news waits at the top', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await page.getByRole('heading', { level: 1, name: 'Moderation of World News' }).waitFor();
    await page.getByText('3 published · 1 unpublished').waitFor();
    // Newest first; the item's HTML is shown as text only (its onerror never ran).
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual([
      'Harbour festival opens',
      'Council vote',
      'Rain tonight',
      'Waiting for a moderator',
    ]);
    await card(page, 'Harbour festival opens').getByText('Boats and music').waitFor();
    expect(await page.title()).not.toBe('pwned');
    await expectAccessible(page);

    // The mouse unpublishes the first item…
    await page.getByRole('button', { name: 'Unpublish Harbour festival opens', exact: true }).click();
    await page.getByRole('button', { name: 'Publish Harbour festival opens', exact: true }).waitFor();
    // …and the keyboard the second: the click made the first card current; j (second), u.
    await page.keyboard.press('j');
    await page.keyboard.press('u');
    await page.getByRole('button', { name: 'Publish Council vote', exact: true }).waitFor();
    await page.getByText('1 published · 3 unpublished').waitFor();
    expect(await published()).toEqual(['rss_c']);

    // Bulk: one selected with x, one with the mouse, then published together.
    await page.keyboard.press('k');
    await page.keyboard.press('x');
    await page.getByRole('checkbox', { name: 'Select Harbour festival opens', exact: true }).isChecked().then((checked) => expect(checked).toBe(true));
    await page.getByRole('checkbox', { name: 'Select Waiting for a moderator', exact: true }).check();
    await page.getByRole('button', { name: 'Publish selected (2)', exact: true }).click();
    await page.getByRole('button', { name: 'Unpublish Waiting for a moderator', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Unpublish Harbour festival opens', exact: true }).waitFor();
    expect(await published()).toEqual(['rss_a', 'rss_c', 'rss_d']);
    await page.getByRole('button', { name: 'Publish selected (0)', exact: true }).waitFor();

    // A new item arrives (unpublished, as the collector stores it for a display=false input):
    // announced at the top, the list unmoved until asked.
    const before = await card(page, 'Harbour festival opens').boundingBox();
    await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_new', title: 'Breaking news', date: at(0) })], 'unpublished');
    await page.getByRole('button', { name: '1 new item — show', exact: true }).waitFor({ timeout: 15_000 });
    expect(await card(page, 'Harbour festival opens').boundingBox()).toEqual(before);
    expect(await card(page, 'Breaking news').count()).toBe(0);
    await page.getByText('3 published · 2 unpublished').waitFor();
    await page.getByRole('button', { name: '1 new item — show', exact: true }).click();
    await card(page, 'Breaking news').waitFor();
    expect(await page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).first().textContent()).toBe('Breaking news');

    // Filters: state, then text.
    await page.getByLabel('State').selectOption('unpublished');
    await card(page, 'Rain tonight').waitFor({ state: 'detached' });
    // The filtered page replaces the list once it has arrived.
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual(['Breaking news', 'Council vote']);
    await page.getByLabel('State').selectOption('');
    await page.getByRole('heading', { level: 1 }).click();
    await page.keyboard.press('/');
    await page.keyboard.type('UMBRELLA');
    await card(page, 'Council vote').waitFor({ state: 'detached' });
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual(['Rain tonight']);
    await page.getByLabel('Text').fill('no such words');
    await page.getByText('No items match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters', exact: true }).click();
    await card(page, 'Council vote').waitFor();

    // Sort: trending puts the much-liked older item first (docs/api.md#trending), newest first again after.
    await page.getByLabel('Sort').selectOption('trending');
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).first().textContent()).toBe('Rain tonight');
    await page.getByLabel('Sort').selectOption('');
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).first().textContent()).toBe('Breaking news');

    // ? lists the shortcuts in a dialog; Escape closes it.
    await page.getByRole('heading', { level: 1 }).click();
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    await dialog.getByText('unpublish the current item').waitFor();
    await expectAccessible(page);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('shows a card’s duplicates and splits one off by keyboard; the queue API follows', { timeout: 60_000 }, async () => {
    // A collection that merges by URL: one story from a feed, then from X and Mastodon.
    const merged = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Merged', dedupe: 'url' }, 'test');
    const target = { contract: sluice.tenant.contract, collection: merged };
    const story = 'https://news.example.org/2026/11/tall-ships';
    const person = (name: string) => ({ name, username: name.toLowerCase(), userid: null, url: null });
    await seedItems(sluice.db, target, [buildItem({ id: 'rss_ships', title: 'Tall ships arrive', url: story, date: at(10 * MIN) })]);
    await seedItems(sluice.db, target, [buildItem({ id: 'twitter_1', service: 'twitter', type: 'status', title: undefined, text: 'Bob on the tall ships', url: `${story}?utm_source=twitter`, author: person('Bob'), date: at(9 * MIN) })]);
    await seedItems(sluice.db, target, [buildItem({ id: 'mastodon_m1', service: 'mastodon', type: 'status', title: undefined, text: 'Ana on the tall ships', url: `${story}#top`, author: person('Ana'), date: at(8 * MIN) })]);

    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${merged.id}`);
    await page.getByRole('heading', { level: 1, name: 'Moderation of Merged' }).waitFor();
    await page.getByText('1 published · 0 unpublished').waitFor();
    const ships = card(page, 'Tall ships arrive');
    const disclosure = ships.getByRole('button', { name: '2 duplicates of Tall ships arrive', exact: true });
    await expect(disclosure.getAttribute('aria-expanded')).resolves.toBe('false');
    await disclosure.focus();
    await page.keyboard.press('Enter');
    const duplicates = ships.getByRole('list', { name: 'Duplicates of Tall ships arrive' });
    await expect(duplicates.getByRole('listitem').allTextContents()).resolves.toEqual([expect.stringContaining('twitter · Bob'), expect.stringContaining('mastodon · Ana')]);
    await duplicates.getByRole('link', { name: `${story}?utm_source=twitter` }).waitFor();
    await expectAccessible(page);

    // Tab past the entry's link to its Split off button; Enter splits.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Split off twitter by Bob');
    await page.keyboard.press('Enter');
    // The split item is a card of its own, right after the first, and takes the focus.
    const bob = card(page, 'Bob on the tall ships');
    await bob.waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-labelledby'))).toBe('item-twitter_1');
    await ships.getByRole('button', { name: '1 duplicate of Tall ships arrive', exact: true }).waitFor();
    await expect(page.getByRole('list', { name: 'Queue of Merged' }).getByRole('heading', { level: 3 }).allTextContents()).resolves.toEqual(['Tall ships arrive', 'Bob on the tall ships']);
    await page.getByText('2 published · 0 unpublished').waitFor();

    // The queue API says the same.
    const res = await fetch(`${sluice.origin}/v1/queue/${sluice.tenant.contract.slug}?q=${merged.slug}&since=0&access_token=${encodeURIComponent(sluice.user.token)}`);
    const items = (await res.json()) as { id: string; duplicates?: { id: string }[] }[];
    expect(Object.fromEntries(items.map((item) => [item.id, (item.duplicates ?? []).map((d) => d.id)]))).toEqual({ rss_ships: ['mastodon_m1'], twitter_1: [] });
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('follows a removal at the source live: the card says removed and why, loses its actions, and stays in the queue', { timeout: 60_000 }, async () => {
    const removals = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Removals', dedupe: 'off' }, 'test');
    const target = { contract: sluice.tenant.contract, collection: removals };
    await seedItems(sluice.db, target, [
      buildItem({ id: 'rss_kept', title: 'Still online', date: at(2 * MIN) }),
      buildItem({ id: 'rss_deleted', title: 'Deleted by its author', date: at(1 * MIN) }),
    ]);
    const page = await consolePage(browser);
    const streams = await moderatorStreams();
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${removals.id}`);
    await page.getByRole('heading', { level: 1, name: 'Moderation of Removals' }).waitFor();
    await page.getByRole('button', { name: 'Unpublish Deleted by its author', exact: true }).waitFor();
    // The screen opens its stream after its first read: a change before that is the next read's, not the stream's.
    await expect.poll(moderatorStreams, { timeout: 10_000 }).toBeGreaterThan(streams);
    // As a pushed deletion does (docs/api.md#removed-at-the-source): the queue stream's remove event reaches the open screen.
    expect(await removeItems(sluice.db, { service: 'rss', ids: ['rss_deleted'] }, { reason: 'deleted' }, ownsEntries)).toHaveLength(1);
    const gone = card(page, 'Deleted by its author');
    await gone.getByText('removed · deleted').waitFor({ timeout: 15_000 });
    await expect(gone.getByRole('button', { name: 'Publish Deleted by its author', exact: true }).count()).resolves.toBe(0);
    await expect(gone.getByRole('button', { name: 'Unpublish Deleted by its author', exact: true }).count()).resolves.toBe(0);
    await page.getByText('1 published · 0 unpublished').waitFor();
    await expectAccessible(page);
    // Read again: it stays in the queue, as removed.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Moderation of Removals' }).waitFor();
    await page.getByRole('button', { name: 'Unpublish Still online', exact: true }).waitFor();
    await expect(page.getByRole('list', { name: 'Queue of Removals' }).getByRole('heading', { level: 3 }).allTextContents()).resolves.toEqual(['Deleted by its author', 'Still online']);
    await card(page, 'Deleted by its author').getByText('removed · deleted').waitFor();
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it("drops an erased author's card live: the item left the queue", { timeout: 60_000 }, async () => {
    const erasures = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Erasures', dedupe: 'off' }, 'test');
    const target = { contract: sluice.tenant.contract, collection: erasures };
    const mallory = { name: 'Mallory', username: null, userid: null, url: null };
    await seedItems(sluice.db, target, [
      buildItem({ id: 'rss_stays', title: 'Another author stays', date: at(2 * MIN) }),
      buildItem({ id: 'rss_erased', title: 'Quokkasecret post', author: mallory, date: at(1 * MIN) }),
    ]);
    const page = await consolePage(browser);
    const streams = await moderatorStreams();
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${erasures.id}`);
    await page.getByRole('heading', { level: 1, name: 'Moderation of Erasures' }).waitFor();
    await page.getByRole('button', { name: 'Unpublish Quokkasecret post', exact: true }).waitFor();
    await expect.poll(moderatorStreams, { timeout: 10_000 }).toBeGreaterThan(streams);
    // As POST /collection/erasures does (docs/api.md#erasure): the queue stream's remove event, reason erased, reaches the open screen.
    expect((await eraseAuthor(sluice.db, sluice.tenant.contract.id, { service: 'rss', field: 'name', value: 'Mallory' }, OPERATOR, ownsEntries)).removed).toBe(1);
    await card(page, 'Quokkasecret post').waitFor({ state: 'detached', timeout: 15_000 });
    await expect(page.getByRole('list', { name: 'Queue of Erasures' }).getByRole('heading', { level: 3 }).allTextContents()).resolves.toEqual(['Another author stays']);
    await expect(page.content()).resolves.not.toContain('Quokkasecret');
    await page.getByText('1 published · 0 unpublished').waitFor();
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('drops an expired card live: retention deleted it, the item left the queue', { timeout: 60_000 }, async () => {
    const kept = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Expiring', dedupe: 'off' }, 'test');
    const target = { contract: sluice.tenant.contract, collection: kept };
    await seedItems(sluice.db, target, [buildItem({ id: 'rss_newest', title: 'The newest stays', date: at(1 * MIN) })]);
    await seedItems(sluice.db, target, [buildItem({ id: 'rss_oldest', title: 'The oldest expires', date: at(2 * MIN) })], 'unpublished');
    const page = await consolePage(browser);
    const streams = await moderatorStreams();
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${kept.id}`);
    await page.getByRole('heading', { level: 1, name: 'Moderation of Expiring' }).waitFor();
    await page.getByRole('button', { name: 'Publish The oldest expires', exact: true }).waitFor();
    await expect.poll(moderatorStreams, { timeout: 10_000 }).toBeGreaterThan(streams);
    // Set only now (a job of this server must not run it before the screen opens), then the job's run (docs/api.md#retention).
    await sluice.db.updateTable('collections').set({ retentionMaxItems: 1 }).where('id', '=', kept.id).execute();
    expect((await expireItems(sluice.db, ownsEntries)).deleted).toBe(1);
    await card(page, 'The oldest expires').waitFor({ state: 'detached', timeout: 15_000 });
    await expect(page.getByRole('list', { name: 'Queue of Expiring' }).getByRole('heading', { level: 3 }).allTextContents()).resolves.toEqual(['The newest stays']);
    await page.getByText('1 published · 0 unpublished').waitFor();
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('is usable at 375 px: the chooser, the cards and their buttons fit', { timeout: 40_000 }, async () => {
    await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_phone', title: 'Small screens', date: at(0) })]);
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation`);
    await page.getByLabel('Collection').selectOption({ label: 'World News' });
    await page.getByRole('heading', { level: 1, name: 'Moderation of World News' }).waitFor();
    await page.getByRole('button', { name: 'Unpublish Small screens', exact: true }).click();
    await page.getByRole('button', { name: 'Publish Small screens', exact: true }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });
});
