/**
 * The console in Chromium (issue 12): sign-in from /console/ (no consent page for the console),
 * the shell and its five screens, contracts and collections, the accessibility check, errors in
 * place, and the access token renewed in the middle of an edit. Role and label locators only.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { createContract, grant, revokeGrant } from '../../src/store/contracts.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

describe.skipIf(browserMissing)('console', () => {
  it('signs in from /console/ without a consent page and lands on the contract’s collections', async () => {
    const page = await consolePage(browser);
    await page.goto(`${sluice.origin}/console/`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await signIn(page, sluice);
    expect(new URL(page.url()).pathname).toBe(`/console/contracts/${sluice.tenant.contract.id}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Contracts and collections');
    await expect.poll(() => page.getByText('World News').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByText('Mia Moderator').count()).toBe(1);
    await expectAccessible(page);
    await page.context().close();
  });

  it('creates and renames a collection', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice);
    await page.getByLabel('Name', { exact: true }).fill('Sports');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('button', { name: 'Rename Sports' }).click();
    await page.getByLabel('New name for Sports').fill('Sport and games');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Rename Sport and games' }).waitFor();
    const names = (await sluice.db.selectFrom('collections').select('name').where('contractId', '=', sluice.tenant.contract.id).execute()).map((row) => row.name);
    expect(names.sort()).toEqual(['Sport and games', 'World News']);
    await page.context().close();
  });

  it('shows each screen at its own address after a reload, at 375 px too', async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice);
    for (const [link, title] of [['Sources', 'Sources'], ['Moderation', 'Moderation'], ['Filters', 'Filters'], ['Publication', 'Publication'], ['Contracts & collections', 'Contracts and collections']]) {
      await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: link }).click();
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      await expectAccessible(page);
    }
    await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}/filters`);
    await page.getByRole('heading', { level: 1, name: 'Filters' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.context().close();
  });

  it('shows an API error at its field, and keeps the input through a lost network', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice);
    const name = page.getByLabel('Name', { exact: true });
    await name.fill('World News');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByText('A collection named World News already exists in this contract.').waitFor();
    await expect(name.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(name.getAttribute('aria-describedby')).resolves.toMatch(/error/);

    await name.fill('Weather');
    let failedPosts = 0;
    page.on('requestfailed', (request) => {
      if (request.method() === 'POST' && request.url().includes('/collection/collections')) failedPosts++;
    });
    await page.context().setOffline(true);
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).waitFor();
    await expect(name.inputValue()).resolves.toBe('Weather');
    // Retry while still offline: the request fails again and the banner stays.
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => failedPosts).toBe(2);
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).waitFor();
    await expect(name.inputValue()).resolves.toBe('Weather');
    // Back online: the waiting request goes out (the browser's `online` event) and succeeds.
    // A screen not loaded yet cannot come while offline: it says so, with a way to reload.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Publication' }).click();
    await page.getByRole('heading', { level: 1, name: 'This screen could not be loaded' }).waitFor();
    await page.getByRole('button', { name: 'Reload' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Contracts and collections' }).waitFor();
    await page.context().setOffline(false);
    await page.getByRole('button', { name: 'Rename Weather' }).waitFor();
    await expect(page.getByText('The server cannot be reached').count()).resolves.toBe(0);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('sends a request that found no server again by itself while the browser is online', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice);
    // The browser stays online; the first create finds no server (the connection is refused).
    let posts = 0;
    await page.route('**/collection/collections', (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      return ++posts === 1 ? route.abort('connectionrefused') : route.continue();
    });
    await page.getByLabel('Name', { exact: true }).fill('Traffic');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).waitFor();
    // No Retry pressed: the waiting request goes out again after a second and lands.
    await page.getByRole('button', { name: 'Rename Traffic' }).waitFor();
    expect(posts).toBe(2);
    await expect(page.getByText('The server cannot be reached').count()).resolves.toBe(0);
    await page.context().close();
  });

  it('never shows the collections of a contract the user was not granted; its address says no access', async () => {
    const rival = await createContract(sluice.db, 'Rival Media', 'test');
    await createCollection(sluice.db, rival.id, { name: 'Secret Plans' }, 'test');
    const page = await consolePage(browser);
    await signIn(page, sluice);
    const switcher = page.getByLabel('Contract', { exact: true });
    await expect(switcher.locator('option').allTextContents()).resolves.toEqual(['Acme News']);
    await expect(page.getByText('Rival Media').count()).resolves.toBe(0);

    await page.goto(`${sluice.origin}/console/contracts/${rival.id}`);
    await page.getByRole('alert').filter({ hasText: 'You have no access to this contract' }).waitFor();
    await expect(page.getByText('Secret Plans').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Create collection' }).count()).resolves.toBe(0);
    await expectAccessible(page);
    await page.context().close();
  });

  it('switches contract with the Contract menu; the address names the contract', async () => {
    const sports = await createContract(sluice.db, 'Acme Sports', 'test');
    await createCollection(sluice.db, sports.id, { name: 'Football' }, 'test');
    await grant(sluice.db, sluice.user.consumer.id, sports.id);
    const page = await consolePage(browser);
    await signIn(page, sluice);
    await page.getByLabel('Contract', { exact: true }).selectOption({ label: 'Acme Sports' });
    await page.getByRole('heading', { level: 2, name: 'Collections of Acme Sports' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/contracts/${sports.id}`);
    await page.getByRole('button', { name: 'Rename Football' }).waitFor();
    await expect(page.getByRole('button', { name: 'Rename World News' }).count()).resolves.toBe(0);
    // The navigation follows the chosen contract.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Moderation' }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/contracts/${sports.id}/moderation`);
    await revokeGrant(sluice.db, sluice.user.consumer.id, sports.id);
    await page.context().close();
  });

  it('works with the keyboard alone: skip link, navigation, rename with Enter', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice);
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('main');
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Filters' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Filters' }).waitFor();
    // Focus moves to the new screen's heading, so the next Tab starts in the screen.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('screen-title');
    await page.goBack();
    await page.getByRole('button', { name: 'Rename World News' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).toBe('World News');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('World News Daily');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Rename World News Daily' }).waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Rename World News Daily');
    await sluice.db.updateTable('collections').set({ name: 'World News' }).where('id', '=', sluice.tenant.collection.id).execute();
    await page.context().close();
  });

  it('signs out: the token is revoked and the next sign-in asks for the password', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
    const tokens = await sluice.db.selectFrom('tokens').select(['revoked', 'clientId']).where('consumerId', '=', sluice.user.consumer.id).where('clientId', 'is not', null).execute();
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.at(-1)?.revoked).toBe(1);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Password').waitFor();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await page.context().close();
  });
});

describe.skipIf(browserMissing)('console with short-lived tokens', () => {
  let short: ConsoleServer;
  beforeAll(async () => {
    short = await startConsole({ TOKEN_TTL: '4' });
  });
  afterAll(async () => {
    await short?.close();
  });

  it('renews an access token that expires during an edit without losing the edit or asking for the password', async () => {
    const page = await consolePage(browser);
    await signIn(page, short);
    await page.getByRole('button', { name: 'Rename World News' }).click();
    await page.getByLabel('New name for World News').fill('World News Today');
    const tokens = () => short.db.selectFrom('tokens').select(['expiresAt']).where('consumerId', '=', short.user.consumer.id).where('clientId', 'is not', null).execute();
    const first = await tokens();
    expect(first).toHaveLength(1);
    // Wait (bounded) until the console's token has expired on the server's clock.
    await expect.poll(() => Date.now() > first[0]!.expiresAt, { timeout: 10_000, interval: 250 }).toBe(true);

    await page.getByRole('button', { name: 'Save' }).click();
    // The 401 sends the browser through the sign-in, which the session answers without a form.
    await expect.poll(async () => (await tokens()).length, { timeout: 10_000 }).toBe(2);
    const field = page.getByLabel('New name for World News');
    await expect.poll(() => field.inputValue(), { timeout: 10_000 }).toBe('World News Today');
    expect(new URL(page.url()).pathname).toBe(`/console/contracts/${short.tenant.contract.id}`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Rename World News Today' }).waitFor();
    const row = await short.db.selectFrom('collections').select('name').where('id', '=', short.tenant.collection.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('World News Today');
    await page.context().close();
  });
});
