/**
 * The Filters screen in the editor's words, in Chromium (issue 33 point 4): a set built in plain
 * words with the keyboard alone ("Apply this set only when …", "Rule 1", "Text contains a
 * pattern from …", "Reject only when every rule matches"), its preview listing the stories it
 * would reject by title, source, date and rule, attached to the collection, then applied to the
 * items already collected with the count it unpublishes, and undone; on the Sources screen at
 * 375 px, a rejection named by its story and rule, published anyway. A real feed served on
 * loopback is collected by the collector's own `refreshInput`. Role and label locators; axe clean.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeItems } from '../../src/store/items/write.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/store/db.ts';
import { buildItem, inputRow } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';
import { ownsEntries } from '../../src/services/table.ts';

// Loaded by computed specifiers so that this program (DOM library) does not type-check the
// collector's Node code, which the service's own program checks (as console-sources.test.ts does).
const REFRESH = '../../src/collect/refresh.ts';
const FETCH = '../../src/collect/fetch.ts';
type Fetcher = { close(): Promise<void> };
type Refresh = (db: Db, input: unknown, deps: { fetch: Fetcher; services: unknown; pollInterval: number }) => Promise<number>;

let browser: Browser;
let sluice: ConsoleServer;
let feeds: SourceServer;
let fetcher: Fetcher;
let refreshInput: Refresh;
const FEED = readFileSync(new URL('../fixtures/rss/guardian-rss2-media-content.rss', import.meta.url));
const FEED_INPUT = 'https://news.example/feed.xml';

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await sluice.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(sluice.user.token)}`, ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

/** Presses Tab (at most 60 times) until `target` has the focus. */
async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${target}`);
}

const counts = async () => (await api('GET', `/v1/queue/${sluice.tenant.contract.slug}/count?q=${sluice.tenant.collection.slug}&since=0`)) as { published: number; unpublished: number };

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  feeds = await startSourceServer((req) => (req.url === '/guardian' ? { status: 200, headers: { 'content-type': 'application/xml' }, body: FEED } : { status: 404 }));
  fetcher = ((await import(FETCH)) as { createFetcher: (o: object) => Fetcher }).createFetcher({ allowPrivate: true });
  refreshInput = ((await import(REFRESH)) as { refreshInput: Refresh }).refreshInput;
});

afterAll(async () => {
  await fetcher?.close();
  await feeds?.close();
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

describe.skipIf(browserMissing)('console: filters in the editor’s words', () => {
  it('builds a set in plain words by keyboard, previews it by stories, attaches it, applies it to what is collected and undoes it', async () => {
    const { contract, collection } = sluice.tenant;
    const input = await api('POST', '/collection/inputs', { service: 'rss', type: 'feed', input: FEED_INPUT, contractId: contract.id, collectionId: collection.id, active: false });
    await sluice.db.transaction().execute((trx) =>
      storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId: input._id, state: 'published' }, [
        buildItem({ id: 'rss_spam', title: 'Cheap pills offer', text: 'Buy VIAGRA now' }),
        buildItem({ id: 'rss_news', title: 'Council meets', text: 'The council met today' }),
        buildItem({ id: 'rss_casino', title: '', text: 'Casino night in town, with music and dancing until late' }),
      ], ownsEntries),
    );
    await api('POST', '/collection/lists', { name: 'Spam words', type: 'patterns', entries: ['/viagra/i', '/casino/i'], contractId: contract.id });

    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${contract.id}/filters/sets`);
    await page.getByRole('heading', { name: 'New set' }).waitFor();
    // The precondition and the or switch, in words.
    const when = page.getByRole('group', { name: 'Apply this set only when …' });
    expect(await when.textContent()).toContain('Reads: Id is present: the set applies to every item');
    await page.getByRole('checkbox', { name: 'Reject only when every rule matches' }).waitFor();

    // Rule 1 with the keyboard alone: Text · contains a pattern from … · list Spam words.
    await tabTo(page, page.getByLabel('Set name'));
    await page.keyboard.type('No spam');
    const rule = page.getByRole('group', { name: 'Rule 1' });
    await tabTo(page, rule.getByLabel('Part of the item'));
    await page.keyboard.type('Text');
    await expect(rule.getByLabel('Part of the item').inputValue()).resolves.toBe('text');
    await tabTo(page, rule.getByLabel('Condition'));
    await page.keyboard.type('contains a pattern from');
    await expect(rule.getByLabel('Condition').locator('option:checked').textContent()).resolves.toBe('contains a pattern from …');
    await tabTo(page, rule.getByLabel('List'));
    await page.keyboard.type('Spam');
    expect(await rule.textContent()).toContain('Reads: Text contains a pattern from list “Spam words”');

    // The preview: the stories it would reject, by title (else the start of the text), source, date and rule.
    await tabTo(page, page.getByRole('button', { name: 'Preview' }));
    await page.keyboard.press('Enter');
    const stories = page.getByRole('table', { name: 'Stories it would reject' });
    await stories.waitFor();
    const rows = stories.getByRole('row');
    expect(await rows.count()).toBe(3);
    const spam = rows.filter({ has: page.getByRole('rowheader', { name: 'Cheap pills offer' }) });
    const cells = await spam.getByRole('cell').allTextContents();
    expect(cells[0]).toBe(`rss feed: ${FEED_INPUT}`);
    expect(cells[1]).toMatch(/^\w{3} \d{1,2}, \d{4}/);
    expect(cells[2]).toBe('Rule 1: Text contains a pattern from list “Spam words”');
    await stories.getByRole('rowheader', { name: 'Casino night in town, with music and dancing until late' }).waitFor();
    expect(await stories.textContent()).not.toMatch(/rss_spam|rule 0/);
    await expectAccessible(page);
    await tabTo(page, page.getByRole('button', { name: 'Save set' }));
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Edit set No spam' }).waitFor();

    // Attached to the collection: the offer counts what it would unpublish; applying it, then Undo.
    await page.getByRole('navigation', { name: 'Filter parts' }).getByRole('link', { name: 'Attach' }).click();
    await page.getByLabel('Filter of collection World News').selectOption({ label: 'set No spam' });
    await page.getByRole('button', { name: 'Attach to collection World News' }).click();
    const offer = page.getByRole('group', { name: 'Items already collected in World News' });
    await offer.getByText('Applied to the items already collected, this filter would unpublish 2 items of World News.').waitFor();
    expect(await counts()).toMatchObject({ published: 3, unpublished: 0 });
    await expectAccessible(page);
    await offer.getByRole('button', { name: 'Apply to items already collected: unpublish 2 items' }).click();
    await offer.getByRole('status').getByText('Unpublished 2 items already collected in World News.').waitFor();
    expect(await counts()).toMatchObject({ published: 1, unpublished: 2 });
    await offer.getByText('this filter would unpublish nothing in World News').waitFor();
    await offer.getByRole('button', { name: 'Undo' }).click();
    await offer.getByRole('status').getByText('Undone: the 2 items are published again.').waitFor();
    expect(await counts()).toMatchObject({ published: 3, unpublished: 0 });
    await offer.getByText('would unpublish 2 items of World News').waitFor();
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('names a rejection by its story and rule, and publishes it anyway, at 375 px', async () => {
    const { contract, collection } = sluice.tenant;
    const set = await api('POST', '/collection/sets', { name: 'No Trump', contractId: contract.id, preCondition: { operator: 'exists', field: 'id', not: false }, rules: [{ operator: 'pattern', field: 'title', value: '/trump/i', not: false }] });
    const url = `${feeds.base}/guardian`;
    const input = await api('POST', '/collection/inputs', { service: 'rss', type: 'feed', input: url, contractId: contract.id, collectionId: collection.id, filterId: set._id, active: false });
    await refreshInput(sluice.db, await inputRow(sluice.db, input._id), { fetch: fetcher, services: loadConfig({}).services, pollInterval: 300 });
    const [first] = await api('GET', `/collection/inputs/${input._id}/rejections`);
    expect(first.title).toMatch(/trump/i);

    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, `/console/contracts/${contract.id}/sources?collection=${collection.id}`);
    await page.getByRole('button', { name: `Rejections of ${url}` }).click();
    const rejected = page.getByRole('region', { name: `Rejected items of ${url}` });
    const item = rejected.getByRole('listitem').filter({ has: page.getByRole('link', { name: first.title, exact: true }) });
    expect(await item.textContent()).toContain('rejected by set No Trump, Rule 1: Title contains the pattern /trump/i');
    await expectAccessible(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await item.getByRole('button', { name: `Publish anyway “${first.title}”`, exact: true }).click();
    await rejected.getByRole('status').getByText(`Published “${first.title}”: it is in the queue`).waitFor();
    await item.waitFor({ state: 'detached' });
    const queue = await api('GET', `/v1/queue/${contract.slug}?q=${collection.slug}&since=0&count=200`);
    expect([queue].flat().find((i: { id: string }) => i.id === first.id)).toMatchObject({ state: 'published' });
    await expectAccessible(page);

    // The rule builder at 375 px: the set that rejected it, in words, nothing wider than the screen.
    await page.goto(`${sluice.origin}/console/contracts/${contract.id}/filters/sets`);
    await page.getByRole('button', { name: 'Edit set No Trump' }).click();
    const rule = page.getByRole('group', { name: 'Rule 1' });
    expect(await rule.textContent()).toContain('Reads: Title contains the pattern /trump/i');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await expectAccessible(page);
    await page.context().close();
  });
});
