/**
 * The console's Filters screen in Chromium (issue 12): a patterns list with a refused pattern
 * shown at its entry and position, a set built in the rule builder with the keyboard alone that
 * uses the list, its preview over the stored items (count and rule) before it is saved, the
 * set attached to an input; a chain reordered by keyboard; axe clean, and usable at 375 px.
 * Role and label locators only.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;
let input: { _id: string };

/** Calls the API as the test user (for set-up and to check what the console saved). */
async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await sluice.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(sluice.user.token)}`, ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

/** Presses Tab (at most 60 times) until `target` has the focus: the keyboard, not the mouse, moves there. */
async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${target}`);
}

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  const { contract, collection } = sluice.tenant;
  input = await api('POST', '/collection/inputs', { service: 'rss', type: 'feed', input: 'https://news.example/feed.xml', contractId: contract.id, collectionId: collection.id });
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_spam', title: 'Offer', text: 'Buy VIAGRA now' }),
    buildItem({ id: 'rss_news', title: 'Council', text: 'The council met today' }),
    buildItem({ id: 'rss_casino', title: 'Night out', text: 'Casino night in town' }),
  ]);
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

describe.skipIf(browserMissing)('console: filters', () => {
  it('builds a patterns list, a set with the keyboard, previews it over the stored items, saves it and attaches it to the input', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/filters`);
    const parts = page.getByRole('navigation', { name: 'Filter parts' });

    // A patterns list: the refused pattern is shown at its entry, line and position.
    await page.getByLabel('List name').fill('Spam words');
    await page.getByLabel('Type').selectOption('patterns');
    const entries = page.getByLabel('Entries, one a line');
    await entries.fill('/viagra/i\n\n/casino(/i');
    await page.getByRole('button', { name: 'Save list' }).click();
    const refused = page.getByRole('list', { name: 'Refused entries' }).getByRole('listitem');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/^Entry 2, line 3, position \d+: missing closing \)/);
    await expect(entries.getAttribute('aria-invalid')).resolves.toBe('true');
    await expectAccessible(page);
    await entries.fill('/viagra/i\n/casino/i');
    await page.getByRole('button', { name: 'Save list' }).click();
    await page.getByRole('button', { name: 'Edit list Spam words' }).waitFor();

    // The rule builder, with the keyboard alone.
    await parts.getByRole('link', { name: 'Sets' }).click();
    await page.getByRole('heading', { name: 'New set' }).waitFor();
    await tabTo(page, page.getByLabel('Set name'));
    await page.keyboard.type('No spam');
    const rule = page.getByRole('group', { name: 'Rule 1' });
    await tabTo(page, rule.getByLabel('Part of the item'));
    await expect(rule.getByLabel('Part of the item').inputValue()).resolves.toBe('text');
    await tabTo(page, rule.getByLabel('Condition'));
    await page.keyboard.type('contains a pattern');
    await expect(rule.getByLabel('Condition').inputValue()).resolves.toBe('patternin');
    await tabTo(page, rule.getByLabel('List'));
    await page.keyboard.type('Spam');
    await expect(rule.getByLabel('List').inputValue()).resolves.not.toBe('');
    await tabTo(page, page.getByRole('button', { name: 'Preview' }));
    await page.keyboard.press('Enter');
    const status = page.getByRole('status').filter({ hasText: 'would be rejected' });
    await status.waitFor();
    expect(await status.getByRole('paragraph').first().textContent()).toBe('2 of 3 stored items in World News would be rejected.');
    const hit = status.getByRole('table', { name: 'Rejections by rule' }).getByRole('row', { name: /Rule 1: Text contains a pattern from list “Spam words”/ });
    expect(await hit.getByRole('cell').first().textContent()).toBe('2');
    await status.getByRole('table', { name: 'Stories it would reject' }).getByRole('rowheader', { name: 'Offer' }).waitFor();
    expect(await api('GET', `/collection/sets?contract_id=${sluice.tenant.contract.id}`)).toEqual([]);
    await expectAccessible(page);
    await tabTo(page, page.getByRole('button', { name: 'Save set' }));
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Edit set No spam' }).waitFor();
    const [set] = await api('GET', `/collection/sets?contract_id=${sluice.tenant.contract.id}`);
    expect(set).toMatchObject({ name: 'No spam', or: false, rules: [{ operator: 'patternin', field: 'text', not: false }], preCondition: { operator: 'exists', field: 'id' } });
    expect(set.rules[0].listId).toMatch(/^[0-9a-f]{24}$/);

    // Attached to the input.
    await parts.getByRole('link', { name: 'Attach' }).click();
    const label = 'input rss feed: https://news.example/feed.xml (World News)';
    await page.getByLabel(`Filter of ${label}`).selectOption({ label: 'set No spam' });
    await page.getByRole('button', { name: `Attach to ${label}` }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api('GET', `/collection/inputs/${input._id}`)).filterId).toBe(set._id);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('reorders a chain by keyboard and attaches it to the contract, at 375 px', async () => {
    const contractId = sluice.tenant.contract.id;
    const always = { operator: 'exists', field: 'id', not: false };
    const first = await api('POST', '/collection/sets', { name: 'Old items', contractId, preCondition: always, rules: [{ operator: 'datediff', field: 'date', value: 604800, not: false }] });
    const second = await api('POST', '/collection/sets', { name: 'Bots', contractId, preCondition: always, rules: [{ operator: 'in', field: 'user', value: ['spambot'], not: false }] });
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, `/console/contracts/${contractId}/filters/chains`);
    await page.getByLabel('Chain name').fill('Main');
    for (const name of ['Old items', 'Bots']) {
      await page.getByLabel('Set to add').selectOption({ label: name });
      await page.getByRole('button', { name: 'Add to the chain' }).click();
    }
    const down = page.getByRole('button', { name: 'Move Old items down' });
    await down.focus();
    await page.keyboard.press('Enter');
    // Focus stays with the moved set (now last: its Up button).
    await expect(page.getByRole('button', { name: 'Move Old items up' }).evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    await expectAccessible(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.getByRole('button', { name: 'Save chain' }).click();
    await page.getByRole('button', { name: 'Edit chain Main' }).waitFor();
    const [chain] = await api('GET', `/collection/chains?contract_id=${contractId}`);
    expect(chain.sets).toEqual([second._id, first._id]);

    await page.getByRole('navigation', { name: 'Filter parts' }).getByRole('link', { name: 'Attach' }).click();
    await page.getByLabel('Filter of the contract Acme News').selectOption({ label: 'chain Main' });
    await page.getByRole('button', { name: 'Attach to the contract Acme News' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api('GET', '/v1/customer/contracts/me'))[0].filterId).toBe(chain._id);
    for (const [part, heading] of [['Sets', 'Sets'], ['Lists', 'Lists'], ['Attach', 'Attach a filter']]) {
      const link = page.getByRole('navigation', { name: 'Filter parts' }).getByRole('link', { name: part });
      await link.click();
      await page.getByRole('heading', { level: 2, name: heading }).waitFor();
      await expect(link.getAttribute('aria-current')).resolves.toBe('page');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    }
    await expectAccessible(page);
    await page.context().close();
  });
});
