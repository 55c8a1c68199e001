/**
 * The console's Sources screen in Chromium (issue 12): add an rss input for a feed this test
 * serves on loopback, see its health and its items arrive (the public content API serves them,
 * the collection's filter rejected one, shown with its rule), a validation error at its field,
 * how each input is fed (status.feed: poll, then push with its last event), the table kept current without taking the focus, many feeds from pasted URLs and an OPML file,
 * deactivate and delete with a confirmation by keyboard alone, axe, and 375 px; a new feed
 * checked at once with the answer in the form (its title and items, or a 404 in plain words), Poll
 * now per row, the poll interval in Edit, a duplicate refused in words with Add anyway (issue 33
 * point 5). Role and label locators only. A real collector polls (ALLOW_PRIVATE_FETCH, short POLL_INTERVAL).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { createContract } from '../../src/store/contracts.ts';
import { setFeedMode } from '../../src/store/inputs.ts';
import type { Config } from '../../src/config.ts';
import type { Db } from '../../src/store/db.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

/** Entries are dated in the hours before the test runs: the content API shows the last 24 hours by default. */
const LOADED = Date.now();
const rss = (title: string, entries: string[]) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>${title}</title><link>https://example.com/</link><description>test</description>
${entries.map((entry, i) => `<item><title>${entry}</title><link>https://example.com/${encodeURIComponent(title)}/${i}</link><guid>${encodeURIComponent(title)}-${i}</guid><pubDate>${new Date(LOADED - (entries.length - i) * 3_600_000).toUTCString()}</pubDate><description>${entry} text</description></item>`).join('\n')}
</channel></rss>`;

const FEEDS: Record<string, string> = {
  '/news.xml': rss('News', ['Harbour opens', 'Sponsored: buy a boat', 'Bridge closed']),
  '/a.xml': rss('A', ['A one']),
  '/b.xml': rss('B', ['B one']),
  '/c.xml': rss('C', ['C one']),
  '/d.xml': rss('Dee Daily', ['D one']),
};

/** `startCollector` of src/collect/scheduler.ts (its own shape, type-checked by the main program). */
type Collector = { stop(): Promise<void> };
type StartCollector = (deps: { db: Db; config: Config }, tickMs: number) => Collector;
// Loaded by a computed specifier so that this program (with the DOM library, tsconfig.json here)
// does not type-check the collector's Node stream code, which the service's own program checks.
const SCHEDULER = '../../src/collect/scheduler.ts';

let browser: Browser;
let sluice: ConsoleServer;
let collector: Collector;
let feeds: Server;
let feedOrigin: string;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole({ ALLOW_PRIVATE_FETCH: 'true', POLL_INTERVAL: '2' });
  feeds = createServer((request, response) => {
    const body = FEEDS[request.url ?? ''];
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => feeds.listen(0, '127.0.0.1', resolve));
  feedOrigin = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}`;
  const { startCollector } = (await import(SCHEDULER)) as { startCollector: StartCollector };
  collector = startCollector({ db: sluice.db, config: sluice.config }, 200);
  // The collection's filter rejects sponsored titles: the screen shows what it rejected, and why.
  const token = encodeURIComponent(sluice.user.token);
  const set = await sluice.app.inject({
    method: 'POST',
    url: `/collection/sets?access_token=${token}`,
    payload: { name: 'No ads', contractId: sluice.tenant.contract.id, preCondition: { operator: 'exists', field: 'id', not: false }, rules: [{ operator: 'pattern', field: 'title', value: '/sponsored/i', not: false }] },
  });
  expect(set.statusCode, set.body).toBe(201);
  const patched = await sluice.app.inject({ method: 'PATCH', url: `/collection/collections/${sluice.tenant.collection.id}?access_token=${token}`, payload: { filterId: set.json()._id } });
  expect(patched.statusCode, patched.body).toBe(200);
});

afterAll(async () => {
  await collector?.stop();
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
  await new Promise((resolve) => feeds?.close(resolve));
});

const sourcesPath = () => `/console/contracts/${sluice.tenant.contract.id}/sources?collection=${sluice.tenant.collection.id}`;
const inputsOf = () => sluice.db.selectFrom('inputs').select(['id', 'input', 'active']).where('collectionId', '=', sluice.tenant.collection.id).execute();
/** The row of the table whose input is `url` (its row header: the source's title, if known, then the input). */
const row = (page: Page, url: string) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`(^|\\s)${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
/** The texts of the elements that describe `control` (its hint and its error, aria-describedby). */
const description = (control: Locator) =>
  control.evaluate((element) => (element.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '));

describe.skipIf(browserMissing)('console Sources', () => {
  it('adds an rss input, shows a validation error at its field, then its health, its items and its rejections', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());
    await page.getByRole('heading', { level: 2, name: 'Sources of World News' }).waitFor();
    await expect(page.getByLabel('Collection', { exact: true }).inputValue()).resolves.toBe(sluice.tenant.collection.id);
    await page.getByRole('button', { name: 'Add source' }).click();
    // Services and types come from GET /collection/services.
    await page.getByLabel('Service').selectOption('twitter');
    await expect(page.getByLabel('Type').locator('option').allTextContents()).resolves.toEqual(['user', 'keyword', 'tag', 'location']);
    await page.getByLabel('Type').selectOption('location');
    await page.getByLabel('Latitude').waitFor();
    await page.getByLabel('Radius').waitFor();
    await page.getByLabel('Service').selectOption('rss');
    await expect(page.getByLabel('Latitude').count()).resolves.toBe(0);

    const input = page.getByLabel('Input', { exact: true });
    await input.fill('not a feed address');
    await page.getByRole('button', { name: 'Save source' }).click();
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    await expect(description(input)).resolves.toContain('input must be an absolute http(s) URL of a feed');
    await expectAccessible(page);

    const url = `${feedOrigin}/news.xml`;
    await input.fill(url);
    await page.getByRole('button', { name: 'Save source' }).click();
    // Checked at once: the form shows the feed's answer (the collector may have polled it first: then nothing is new).
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'answered' }).textContent(), { timeout: 15_000 }).toMatch(/^\s*“News” answered: (2 new items|no new items)\.\s*$/);
    await page.getByRole('button', { name: 'Close' }).click();
    const news = row(page, url);
    await news.waitFor();
    // The row names the feed by its own title, its address below.
    await news.getByRole('rowheader', { name: `News ${url}`, exact: true }).waitFor();
    // Health: the collector polls it within a tick; the table is read again every few seconds.
    await expect.poll(() => news.textContent(), { timeout: 20_000, interval: 250 }).toMatch(/Collected\s*2.*Rejected\s*1/s);
    await expect(news.textContent()).resolves.toMatch(/Last success\s*(now|\d+ seconds? ago)/);
    await expect(news.textContent()).resolves.not.toMatch(/Last error/);
    // How it is fed (status.feed): polled so far; once its hub pushes (WebSub), push with the last event.
    await expect(news.textContent()).resolves.toMatch(/Feed\s*poll: fetched on its schedule, since/);
    await expect(news.textContent()).resolves.not.toMatch(/Last event/);
    const [newsInput] = (await inputsOf()).filter((i) => i.input === url);
    await setFeedMode(sluice.db, [newsInput!.id], 'push');
    await sluice.db.updateTable('inputs').set({ lastEventAt: Date.now() }).where('id', '=', newsInput!.id).execute();
    await expect.poll(() => news.textContent(), { timeout: 20_000, interval: 250 }).toMatch(/Feed\s*push: the source notifies Sluice \(WebSub\), since (now|\d+ seconds? ago)/);
    await expect(news.textContent()).resolves.toMatch(/Last event\s*(now|\d+ seconds? ago)/);
    // Its items arrived: the public content API serves the two accepted ones.
    const content = await fetch(`${sluice.origin}/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}`);
    expect(content.status).toBe(200);
    expect(((await content.json()) as { title: string }[]).map((item) => item.title).sort()).toEqual(['Bridge closed', 'Harbour opens']);
    await expect(page.getByRole('link', { name: 'Moderation of World News' }).getAttribute('href')).resolves.toBe(
      `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${sluice.tenant.collection.id}`,
    );
    // The rejected one, with the set and the rule that rejected it.
    await page.getByRole('button', { name: `Rejections of ${url}` }).click();
    const rejected = page.getByRole('region', { name: `Rejected items of ${url}` });
    await rejected.getByRole('link', { name: 'Sponsored: buy a boat' }).waitFor();
    await expect(rejected.textContent()).resolves.toMatch(/set No ads, Rule 1: Title contains the pattern \/sponsored\/i/);

    // A poll of the table while an edit is under way moves neither the focus nor the typing.
    await page.getByRole('button', { name: `Edit ${url}` }).click();
    const edited = page.getByLabel('Input', { exact: true });
    await edited.fill(`${url}?edited`);
    await page.waitForResponse((response) => response.url().includes('/collection/inputs?') && response.request().method() === 'GET', { timeout: 10_000 });
    await expect(page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).resolves.toBe(`${url}?edited`);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Edit ${url}`);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('adds many feeds at once from pasted URLs and an OPML file; a refused line is named and nothing is stored', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());
    const before = (await inputsOf()).length;
    await page.getByRole('button', { name: 'Add many feeds' }).click();
    const urls = page.getByLabel('Feed URLs');
    await urls.fill(`${feedOrigin}/a.xml\nfeeds.example.com/nope\n`);
    await page.getByRole('button', { name: 'Add 2 feeds' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Nothing was added' });
    await refused.waitFor();
    await expect(refused.getByRole('listitem').allTextContents()).resolves.toEqual(['feeds.example.com/nope: input must be an absolute http(s) URL of a feed']);
    expect(await inputsOf()).toHaveLength(before);
    await expectAccessible(page);

    await urls.fill(`${feedOrigin}/a.xml\n`);
    const opml = `<?xml version="1.0"?><opml version="2.0"><head><title>Feeds</title></head><body>
      <outline text="Group"><outline type="rss" text="B" xmlUrl="${feedOrigin}/b.xml"/><outline type="rss" text="C" xmlUrl="${feedOrigin}/c.xml"/></outline></body></opml>`;
    await page.getByLabel('OPML file').setInputFiles({ name: 'feeds.opml', mimeType: 'text/x-opml', buffer: Buffer.from(opml) });
    await expect.poll(() => urls.inputValue()).toBe([`${feedOrigin}/a.xml`, `${feedOrigin}/b.xml`, `${feedOrigin}/c.xml`].join('\n'));
    await page.getByRole('button', { name: 'Add 3 feeds' }).click();
    for (const path of ['/a.xml', '/b.xml', '/c.xml']) await row(page, `${feedOrigin}${path}`).waitFor();
    expect(await inputsOf()).toHaveLength(before + 3);
    await expect.poll(() => row(page, `${feedOrigin}/c.xml`).textContent(), { timeout: 20_000, interval: 250 }).toMatch(/Collected\s*1/);
    await page.context().close();
  });

  it('deactivates and deletes with a confirmation, by keyboard alone', async () => {
    const url = `${feedOrigin}/a.xml?keyboard`;
    const created = await sluice.app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(sluice.user.token)}`,
      payload: { service: 'rss', type: 'feed', input: url, contractId: sluice.tenant.contract.id, collectionId: sluice.tenant.collection.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent);
    await page.getByRole('button', { name: `Deactivate ${url}` }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: `Activate ${url}` }).waitFor();
    await expect.poll(focused).toBe(`Activate ${url}`);
    await expect.poll(async () => (await inputsOf()).find((input) => input.input === url)?.active).toBe(0);
    await expect(row(page, url).textContent()).resolves.toMatch(/Next poll\s*none: inactive/);
    // The feed is not there: its last error in plain words.
    await expect(row(page, url).textContent()).resolves.toMatch(/Last error\s*Nothing was found at this address \(HTTP 404\)\./);

    await page.keyboard.press('Tab');
    await expect.poll(focused).toBe(`Delete ${url}`);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete this source?' });
    await dialog.waitFor();
    await expect.poll(focused).toBe('Cancel');
    await expectAccessible(page);
    // Escape cancels: nothing deleted, the focus back on the Delete button.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(focused).toBe(`Delete ${url}`);
    expect((await inputsOf()).some((input) => input.input === url)).toBe(true);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Shift+Tab');
    await expect.poll(focused).toBe('Delete source');
    await page.keyboard.press('Enter');
    await row(page, url).waitFor({ state: 'detached' });
    expect((await inputsOf()).some((input) => input.input === url)).toBe(false);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('sources-title');
    await page.context().close();
  });

  it('starts on rss, shows a 404 in plain words in the form, polls a row now, edits the poll interval, and refuses a duplicate in words with Add anyway', async () => {
    const url = `${feedOrigin}/d.xml`;
    // Inactive: only Poll now fetches it (the collector leaves it alone).
    const created = await sluice.app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(sluice.user.token)}`,
      payload: { service: 'rss', type: 'feed', input: url, active: false, contractId: sluice.tenant.contract.id, collectionId: sluice.tenant.collection.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());

    // The service menu starts on a service that runs without setup.
    await page.getByRole('button', { name: 'Add source' }).click();
    await expect(page.getByLabel('Service').inputValue()).resolves.toBe('rss');
    // A feed address that answers 404: saved, checked at once, the error in plain words.
    await page.getByLabel('Input', { exact: true }).fill(`${feedOrigin}/missing.xml`);
    await page.getByRole('button', { name: 'Save source' }).click();
    const answer = page.getByRole('status').filter({ hasText: 'The source gave an error' });
    await expect.poll(() => answer.textContent(), { timeout: 15_000 }).toMatch(/The source gave an error: Nothing was found at this address \(HTTP 404\)\./);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Close' }).click();

    // Poll now on a row: its answer in the row; the row then names the feed by its title.
    const dee = row(page, url);
    await dee.getByRole('button', { name: `Poll now ${url}` }).click();
    await expect.poll(() => dee.getByRole('status').textContent(), { timeout: 15_000 }).toBe('“Dee Daily” answered: 1 new item.');
    await dee.getByRole('rowheader', { name: `Dee Daily ${url}`, exact: true }).waitFor();
    // Once per 10 s per input: a second one at once is refused, in the row.
    await dee.getByRole('button', { name: 'Poll now Dee Daily' }).click();
    await expect.poll(() => dee.getByRole('alert').textContent()).toMatch(/polled now less than 10 s ago/);

    // Edit has the poll interval.
    await page.getByRole('button', { name: `Edit ${url}` }).click();
    await page.getByLabel('Poll interval').fill('600');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const intervalOf = async () => (await sluice.db.selectFrom('inputs').select('pollInterval').where('id', '=', created.json()._id).executeTakeFirstOrThrow()).pollInterval;
    await expect.poll(intervalOf).toBe(600);
    await page.getByRole('button', { name: `Edit ${url}` }).click();
    await expect(page.getByLabel('Poll interval').inputValue()).resolves.toBe('600');
    await page.getByRole('button', { name: 'Cancel' }).click();

    // The same feed in another spelling: refused in words, then added anyway.
    const copies = async () => (await inputsOf()).filter((input) => input.input.startsWith(url)).length;
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByLabel('Input', { exact: true }).fill(`${url}#latest`);
    await page.getByRole('button', { name: 'Save source' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'This collection already has this source.' });
    await refused.waitFor();
    expect(await copies()).toBe(1);
    await expectAccessible(page);
    await refused.getByRole('button', { name: 'Add anyway' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'answered' }).first().textContent(), { timeout: 15_000 }).toMatch(/“Dee Daily” answered/);
    expect(await copies()).toBe(2);
    await page.getByRole('button', { name: 'Close' }).click();
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('switches collection with the chooser, and never shows another contract’s collection or sources', async () => {
    const sports = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Sports' }, 'test');
    const rival = await createContract(sluice.db, 'Rival Media', 'test');
    const secret = await createCollection(sluice.db, rival.id, { name: 'Secret Plans' }, 'test');
    const page = await consolePage(browser);
    // A collection of another contract in the address: the contract's own first collection instead.
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/sources?collection=${secret.id}`);
    await page.getByRole('heading', { level: 2, name: 'Sources of World News' }).waitFor();
    await expect(page.getByLabel('Collection', { exact: true }).locator('option').allTextContents()).resolves.toEqual(['World News', 'Sports']);
    await page.getByLabel('Collection', { exact: true }).selectOption({ label: 'Sports' });
    await page.getByRole('heading', { level: 2, name: 'Sources of Sports' }).waitFor();
    expect(new URL(page.url()).searchParams.get('collection')).toBe(sports.id);
    await expect(page.getByRole('table').count()).resolves.toBe(0);
    // The other contract's address: no access, nothing of it.
    await page.goto(`${sluice.origin}/console/contracts/${rival.id}/sources?collection=${secret.id}`);
    await page.getByRole('alert').filter({ hasText: 'You have no access to this contract' }).waitFor();
    await expect(page.getByRole('button', { name: 'Add source' }).count()).resolves.toBe(0);
    await expect(page.getByText('Secret Plans').count()).resolves.toBe(0);
    await expectAccessible(page);
    await page.context().close();
  });

  it('offers the contract’s credentials of the input’s service as its credentialId, and shows which one an input uses', async () => {
    const post = async (payload: object) => {
      const res = await sluice.app.inject({ method: 'POST', url: `/collection/credentials?access_token=${encodeURIComponent(sluice.user.token)}`, payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { _id: string };
    };
    const contractId = sluice.tenant.contract.id;
    await post({ name: 'Newsroom X', contractId, service: 'twitter', bearerToken: 'AAAAAAAAAAAAAAAAAAAAAnewsroom' });
    const backup = await post({ name: 'Backup X', contractId, service: 'twitter', bearerToken: 'AAAAAAAAAAAAAAAAAAAAAbackup', default: false });
    const credentialOf = async (input: string) =>
      (await sluice.db.selectFrom('inputs').select('credentialId').where('collectionId', '=', sluice.tenant.collection.id).where('input', '=', input).executeTakeFirstOrThrow()).credentialId;

    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByLabel('Service').selectOption('twitter');
    const credential = page.getByLabel('Credential', { exact: true });
    await expect(credential.locator('option').allTextContents()).resolves.toEqual(['contract default', 'Newsroom X (default)', 'Backup X']);
    await page.getByLabel('Service').selectOption('youtube');
    await expect(credential.locator('option').allTextContents()).resolves.toEqual(['contract default']);
    await expect(description(credential)).resolves.toContain('This contract has no youtube credential: add one on Connections.');
    // rss takes no credential: no choice at all.
    await page.getByLabel('Service').selectOption('rss');
    await expect(credential.count()).resolves.toBe(0);

    await page.getByLabel('Service').selectOption('twitter');
    await page.getByLabel('Type').selectOption('user');
    await page.getByLabel('Input', { exact: true }).fill('newsroom');
    // Inactive: the collector leaves it alone (no request to the real X API).
    await page.getByRole('checkbox', { name: 'active (collected)' }).uncheck();
    await credential.selectOption({ label: 'Backup X' });
    await page.getByRole('button', { name: 'Save source' }).click();
    await expect.poll(() => row(page, 'newsroom').textContent()).toMatch(/Credential\s*Backup X/);
    expect(await credentialOf('newsroom')).toBe(backup._id);

    // Edit: the form shows the one it uses; back to the contract default, which the row names.
    await page.getByRole('button', { name: 'Edit newsroom' }).click();
    await expect(credential.inputValue()).resolves.toBe(backup._id);
    await credential.selectOption({ label: 'contract default' });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => row(page, 'newsroom').textContent()).toMatch(/Credential\s*contract default \(Newsroom X\)/);
    expect(await credentialOf('newsroom')).toBeNull();
    await expectAccessible(page);
    await page.context().close();
  });

  it('is usable at 375 px: the table becomes cards, the form fits, nothing scrolls sideways', async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, sourcesPath());
    await row(page, `${feedOrigin}/news.xml`).waitFor();
    await row(page, `${feedOrigin}/news.xml`).getByRole('button', { name: 'Poll now News' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByLabel('Service').selectOption('youtube');
    await page.getByLabel('Type').selectOption('location');
    await page.getByLabel('Longitude').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.context().close();
  });
});
