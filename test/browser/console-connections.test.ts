/**
 * The console's Connections screen in Chromium (issue 15): the contract's credentials with their
 * masked hints, who connected them and their health; adding one by the service's fields (the
 * secret never shown again, never kept in the page's storage), a name taken shown at its field,
 * rename, make default, deactivate, disconnect with a confirmation by keyboard alone and the
 * 409 of a credential an input names; the return from a connect flow (connected, and refused);
 * another contract's credentials never shown; axe, and 375 px. Role and label locators only.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContract, grant } from '../../src/store/contracts.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;

const TOKEN = 'AAAAAAAAAAAAAAAAAAAAAsecret-bearer-k7Qz';
const APP_PASSWORD = 'abcd-efgh-ijkl-mnop-secret';

/** A request of the management API as the test user. */
async function call(method: string, path: string, payload?: object) {
  const res = await sluice.app.inject({ method, url: path, headers: { authorization: `Bearer ${sluice.user.token}` }, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.body ? (res.json() as Record<string, unknown>) : undefined };
}

const credentialsOf = async (contractId = sluice.tenant.contract.id) =>
  sluice.db.selectFrom('credentials').select(['id', 'name', 'service', 'isDefault', 'active']).where('contractId', '=', contractId).execute();

let rivalId: string;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  const created = await call('POST', '/collection/credentials', { name: 'Newsroom X', contractId: sluice.tenant.contract.id, service: 'twitter', bearerToken: TOKEN });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // The service refused it for good at the last poll (as the collector records it).
  await sluice.db.updateTable('credentials').set({ status: 'failed', lastError: 'HTTP 401: Unauthorized (token revoked)' }).where('id', '=', String(created.body!._id)).execute();
  // Another contract (the user is granted it too) with a credential of its own.
  const rival = await createContract(sluice.db, 'Rival Media', 'test');
  rivalId = rival.id;
  await grant(sluice.db, sluice.user.consumer.id, rival.id);
  const theirs = await call('POST', '/collection/credentials', { name: 'Rival secret account', contractId: rival.id, service: 'youtube', apiKey: 'AIzaSyRIVALRIVALRIVALRIVAL' });
  expect(theirs.status).toBe(201);
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = (contractId = sluice.tenant.contract.id) => `/console/contracts/${contractId}/connections`;
const card = (page: Page, name: string) => page.getByRole('article', { name, exact: true });
const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent?.trim());

describe.skipIf(browserMissing)('console: Connections', () => {
  it('lists the credentials with their health; adds, renames, makes default and deactivates one', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}`);
    // In the shell's navigation.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    // Grouped by service.
    const x = page.getByRole('region', { name: 'twitter', exact: true }).getByRole('article', { name: 'Newsroom X', exact: true });
    await x.waitFor();
    await expect(x.textContent()).resolves.toMatch(/default.*failed/s);
    await expect(x.textContent()).resolves.toMatch(/bearerToken\s*…k7Qz/);
    await expect(x.textContent()).resolves.toMatch(/Connected by\s*Mia Moderator, (now|\d+ seconds? ago)/);
    await expect(x.textContent()).resolves.toMatch(/Last used\s*not yet/);
    await expect(x.textContent()).resolves.toMatch(/Last error\s*HTTP 401: Unauthorized \(token revoked\)/);
    expect(await page.content()).not.toContain(TOKEN);
    // Nothing of the other contract.
    await expect(page.getByText('Rival secret account').count()).resolves.toBe(0);
    await expectAccessible(page);

    // Add: the service's fields from GET /collection/services; bluesky has a plain and a secret one.
    await page.getByRole('button', { name: 'Add credential' }).click();
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Service').selectOption('bluesky');
    await form.getByLabel('identifier').fill('newsroom.bsky.social');
    await form.getByLabel('appPassword').fill(APP_PASSWORD);
    await expect(form.getByLabel('appPassword').getAttribute('type')).resolves.toBe('password');
    // A name the contract already has: the API's 409 at the Name field.
    await form.getByLabel('Name', { exact: true }).fill('Newsroom X');
    await form.getByRole('button', { name: 'Save credential' }).click();
    await expect.poll(() => form.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await form.getByText('A credential named Newsroom X already exists in this contract.').waitFor();
    // The secret never went into the page's storage (drafts).
    expect(await page.evaluate(() => JSON.stringify(Object.entries(sessionStorage)))).not.toContain(APP_PASSWORD);
    await form.getByLabel('Name', { exact: true }).fill('Newsroom Bluesky');
    await form.getByRole('button', { name: 'Save credential' }).click();
    const bluesky = card(page, 'Newsroom Bluesky');
    await bluesky.waitFor();
    await expect(bluesky.textContent()).resolves.toMatch(/identifier\s*newsroom\.bsky\.social/);
    await expect(bluesky.textContent()).resolves.toMatch(/appPassword\s*…cret/);
    expect(await page.content()).not.toContain(APP_PASSWORD);
    expect((await credentialsOf()).map((c) => c.name).sort()).toEqual(['Newsroom Bluesky', 'Newsroom X']);

    // A second twitter credential, not the default; then made the default, which the first loses.
    const second = await call('POST', '/collection/credentials', { name: 'Backup X', contractId: sluice.tenant.contract.id, service: 'twitter', bearerToken: `${TOKEN}2`, default: false });
    expect(second.status).toBe(201);
    await page.reload();
    await card(page, 'Backup X').waitFor();
    await card(page, 'Backup X').getByRole('button', { name: 'Make default: Backup X' }).click();
    await card(page, 'Newsroom X').getByRole('button', { name: 'Make default: Newsroom X' }).waitFor();
    await expect(card(page, 'Backup X').getByRole('button', { name: 'Make default: Backup X' }).count()).resolves.toBe(0);
    expect((await credentialsOf()).filter((c) => c.isDefault === 1).map((c) => c.name).sort()).toEqual(['Backup X', 'Newsroom Bluesky']);

    // Rename, and the focus back on its button.
    await card(page, 'Backup X').getByRole('button', { name: 'Rename Backup X' }).click();
    await page.getByLabel('New name for Backup X').fill('Main X');
    await page.getByLabel('New name for Backup X').press('Enter');
    await card(page, 'Main X').waitFor();
    await expect.poll(() => focused(page)).toBe('Rename Main X');

    // Deactivate.
    await card(page, 'Main X').getByRole('button', { name: 'Deactivate Main X', exact: true }).click();
    await card(page, 'Main X').getByRole('button', { name: 'Activate Main X', exact: true }).waitFor();
    await expect(card(page, 'Main X').textContent()).resolves.toMatch(/inactive/);
    expect((await credentialsOf()).find((c) => c.name === 'Main X')?.active).toBe(0);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('disconnects with a confirmation, by keyboard alone; a credential an input names is kept with the 409 shown', { timeout: 60_000 }, async () => {
    const used = await call('POST', '/collection/credentials', { name: 'Used key', contractId: sluice.tenant.contract.id, service: 'youtube', apiKey: 'AIzaSyUSEDUSEDUSEDUSEDUSED' });
    const input = await call('POST', '/collection/inputs', {
      service: 'youtube', type: 'user', input: 'newsroom', active: false, credentialId: used.body!._id, contractId: sluice.tenant.contract.id, collectionId: sluice.tenant.collection.id,
    });
    expect(input.status, JSON.stringify(input.body)).toBe(201);
    const spare = await call('POST', '/collection/credentials', { name: 'Spare key', contractId: sluice.tenant.contract.id, service: 'youtube', apiKey: 'AIzaSySPARESPARESPARESPARE', default: false });
    expect(spare.status).toBe(201);
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await card(page, 'Spare key').waitFor();

    await card(page, 'Spare key').getByRole('button', { name: 'Disconnect Spare key' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Disconnect this credential?' });
    await dialog.waitFor();
    await expect.poll(() => focused(page)).toBe('Cancel');
    await expectAccessible(page);
    // Escape cancels: nothing removed, the focus back on the button.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => focused(page)).toBe('Disconnect Spare key');
    expect((await credentialsOf()).some((c) => c.name === 'Spare key')).toBe(true);
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Shift+Tab');
    await expect.poll(() => focused(page)).toBe('Disconnect credential');
    await page.keyboard.press('Enter');
    await card(page, 'Spare key').waitFor({ state: 'detached' });
    expect((await credentialsOf()).some((c) => c.name === 'Spare key')).toBe(false);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('credentials-title');

    // The one an input names: the API refuses (409) and says which input.
    await card(page, 'Used key').getByRole('button', { name: 'Disconnect Used key' }).click();
    await dialog.getByRole('button', { name: 'Disconnect credential' }).click();
    await page.getByRole('alert').filter({ hasText: 'is used by input' }).filter({ hasText: 'youtube newsroom' }).waitFor();
    await card(page, 'Used key').waitFor();
    expect((await credentialsOf()).some((c) => c.name === 'Used key')).toBe(true);
    await page.context().close();
  });

  it('says how a connect flow ended when the service sends the browser back, and cleans the address', { timeout: 40_000 }, async () => {
    const [x] = (await credentialsOf()).filter((c) => c.service === 'twitter');
    const page = await consolePage(browser);
    await signIn(page, sluice, `${screen()}?credential_id=${x!.id}&service=twitter`);
    await page.getByRole('status').filter({ hasText: `Connected ${x!.name} (twitter).` }).waitFor();
    await expect.poll(() => new URL(page.url()).search).toBe('');
    await page.goto(`${sluice.origin}${screen()}?error=access_denied&error_description=The%20user%20denied%20access&service=youtube`);
    await page.getByRole('alert').filter({ hasText: 'youtube was not connected: The user denied access' }).waitFor();
    // The connect form offers the services with a flow; mastodon asks for its instance.
    await page.getByRole('button', { name: 'Connect an account' }).click();
    const form = page.getByRole('form', { name: 'Connect an account' });
    await expect(form.getByLabel('Service').locator('option').allTextContents()).resolves.toEqual(expect.arrayContaining(['twitter', 'youtube', 'mastodon']));
    await expect(form.getByLabel('Service').locator('option').allTextContents()).resolves.not.toContain('bluesky');
    await form.getByLabel('Service').selectOption('mastodon');
    await form.getByLabel('instance').waitFor();
    await expectAccessible(page);
    await page.context().close();
  });

  it('shows nothing of a contract the user was not granted', { timeout: 30_000 }, async () => {
    const stranger = await createContract(sluice.db, 'Stranger Corp', 'test');
    const page = await consolePage(browser);
    await signIn(page, sluice, screen(stranger.id));
    await page.getByRole('alert').filter({ hasText: 'You have no access to this contract' }).waitFor();
    await expect(page.getByRole('article').count()).resolves.toBe(0);
    // The granted rival contract shows its own credential only.
    await page.goto(`${sluice.origin}${screen(rivalId)}`);
    await card(page, 'Rival secret account').waitFor();
    await expect(page.getByText('Newsroom X').count()).resolves.toBe(0);
    await page.context().close();
  });

  it('is usable at 375 px: the cards and the form fit, nothing scrolls sideways', { timeout: 40_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, screen());
    await card(page, 'Newsroom X').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.getByRole('button', { name: 'Add credential' }).click();
    await page.getByRole('form', { name: 'New credential' }).getByLabel('Service').selectOption('instagram');
    await page.getByLabel('userId').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });
});
