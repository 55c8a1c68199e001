/**
 * The console remembers (issue 33 point 6), in Chromium: the chosen contract and collection are
 * in every screen's address and kept across screens, reloads and new visits (localStorage, per
 * signed-in user); a remembered collection or contract that is gone is dropped silently; a
 * contract with one collection never asks "Choose a collection"; the first screen of a contract
 * without sources leads to the first one (or says who may add it); Moderation at 375 × 667 on a
 * touch screen folds its filters into one line and shows the first card in the first screen
 * height, with 44 px touch targets. Role and label locators only.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { createContract, grant, revokeGrant } from '../../src/store/contracts.ts';
import { buildItem, buildUser, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, signIn, startConsole } from './console-harness.ts';

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

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name, exact: true });
/**
 * Waits until the address names `collectionId`: a screen that falls back to another collection
 * writes it into the address in an effect after its first render, so the heading can come first.
 */
const addressNames = (page: Page, collectionId: string) => page.waitForURL((url) => url.searchParams.get('collection') === collectionId, { timeout: 5_000 });
const remembered = (page: Page, consumerId: string) => page.evaluate((key) => localStorage.getItem(key), `sluice.remember.${consumerId}`);

/** A management API call as the server's user. */
async function call(method: 'POST' | 'DELETE', url: string, payload?: object) {
  const res = await sluice.app.inject({ method, url, headers: { authorization: `Bearer ${sluice.user.token}` }, ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.statusCode === 204 ? undefined : (res.json() as { _id: string });
}

describe.skipIf(browserMissing)('console: remembers the contract and collection', () => {
  it('keeps the chosen collection in every address, across screens, reloads and visits; drops what is gone silently', { timeout: 90_000 }, async () => {
    const bravo = await createContract(sluice.db, 'Bravo Radio', 'test');
    await grant(sluice.db, sluice.user.consumer.id, bravo.id);
    const politics = await createCollection(sluice.db, bravo.id, { name: 'Politics' }, 'test');
    const sports = await createCollection(sluice.db, bravo.id, { name: 'Sports' }, 'test');
    await seedItems(sluice.db, { contract: bravo, collection: sports }, [buildItem({ id: 'rss_goal', title: 'Late goal wins the cup' })]);

    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${bravo.id}`);
    // Two collections and none chosen yet: Moderation asks.
    await nav(page, 'Moderation').click();
    await page.getByRole('heading', { level: 1, name: 'Moderation' }).waitFor();
    await page.getByLabel('Collection').selectOption({ label: 'Sports' });
    await page.getByRole('heading', { level: 1, name: 'Moderation of Sports' }).waitFor();
    await addressNames(page, sports.id);

    // Another screen: the choice is kept and in its address.
    await nav(page, 'Sources').click();
    await page.getByRole('heading', { level: 2, name: 'Sources of Sports' }).waitFor();
    await addressNames(page, sports.id);
    await nav(page, 'Team').click();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await addressNames(page, sports.id);

    // A reload (a silent sign-in), then Moderation again: Sports, not asked.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await nav(page, 'Moderation').click();
    await page.getByRole('heading', { level: 1, name: 'Moderation of Sports' }).waitFor();
    await page.getByRole('article', { name: 'Late goal wins the cup' }).waitFor();
    expect(await page.getByRole('option', { name: 'Choose a collection' }).count()).toBe(0);

    // A new visit in the same browser: the start page opens the remembered contract, and its screens the collection.
    const visit = await page.context().newPage();
    await visit.goto(`${sluice.origin}/console/`);
    await visit.getByRole('heading', { level: 1, name: 'Contracts and collections' }).waitFor();
    expect(new URL(visit.url()).pathname).toBe(`/console/contracts/${bravo.id}`);
    await nav(visit, 'Moderation').click();
    await visit.getByRole('heading', { level: 1, name: 'Moderation of Sports' }).waitFor();
    await addressNames(visit, sports.id);
    expect(JSON.parse((await remembered(visit, sluice.user.consumer.id)) ?? '{}')).toEqual({ contract: bravo.id, collections: { [bravo.id]: sports.id } });

    // Hostile: the remembered collection is deleted. The next screen shows the one left, no error.
    await call('DELETE', `/collection/collections/${sports.id}`);
    await nav(visit, 'Contracts & collections').click();
    await visit.getByRole('heading', { level: 1, name: 'Contracts and collections' }).waitFor();
    await nav(visit, 'Moderation').click();
    await visit.getByRole('heading', { level: 1, name: 'Moderation of Politics' }).waitFor();
    await addressNames(visit, politics.id);
    expect(await visit.getByRole('alert').count()).toBe(0);
    expect(await remembered(visit, sluice.user.consumer.id)).not.toContain(sports.id);

    // Hostile: the remembered contract is no longer granted. The start page opens the other one, no error.
    await revokeGrant(sluice.db, sluice.user.consumer.id, bravo.id);
    const later = await page.context().newPage();
    await later.goto(`${sluice.origin}/console/`);
    await later.getByRole('heading', { level: 1, name: 'Contracts and collections' }).waitFor();
    expect(new URL(later.url()).pathname).toBe(`/console/contracts/${sluice.tenant.contract.id}`);
    expect(await later.getByRole('alert').count()).toBe(0);
    expect(await remembered(later, sluice.user.consumer.id)).not.toContain(bravo.id);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('never asks for the collection of a contract with one: Moderation opens it and names it in the address', { timeout: 40_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation`);
    await page.getByRole('heading', { level: 1, name: 'Moderation of World News' }).waitFor();
    await addressNames(page, sluice.tenant.collection.id);
    expect(await page.getByLabel('Collection').count()).toBe(0);
    expect(await page.getByText('Choose a collection').count()).toBe(0);
    await page.context().close();
  });

  it('leads an empty contract to its first source, or says who may add one', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}`);
    const lead = page.getByRole('region', { name: 'Add the first source' });
    await lead.waitFor();
    await expectAccessible(page);
    await lead.getByRole('link', { name: 'Add the first source to World News' }).click();
    await page.getByRole('form', { name: 'New source' }).waitFor();
    await addressNames(page, sluice.tenant.collection.id);

    // A viewer cannot add one: the lead says who can.
    const viewer = await buildUser(sluice.db, { name: 'Vic Viewer', username: 'vic' });
    await grant(sluice.db, viewer.consumer.id, sluice.tenant.contract.id, undefined, 'viewer');
    const other = await consolePage(browser);
    await signIn(other, sluice, `/console/contracts/${sluice.tenant.contract.id}`, viewer);
    await other.getByRole('region', { name: 'Add the first source' }).getByText('Adding sources needs the role editor or higher; your role is viewer.').waitFor();
    expect(await other.getByRole('link', { name: /Add the first source/ }).count()).toBe(0);

    // With a source, no lead.
    await call('POST', '/collection/inputs', { service: 'rss', type: 'feed', input: 'https://news.example/feed.xml', contractId: sluice.tenant.contract.id, collectionId: sluice.tenant.collection.id });
    await other.reload();
    await other.getByRole('heading', { level: 2, name: 'Collections of Acme News' }).waitFor();
    await other.getByRole('list').filter({ hasText: 'World News' }).first().waitFor();
    expect(await other.getByRole('region', { name: 'Add the first source' }).count()).toBe(0);
    await other.context().close();
    await page.context().close();
  });

  it('at 375 × 667 on touch: filters folded into one line, the first card in the first screen, 44 px buttons that work by tap', { timeout: 60_000 }, async () => {
    await seedItems(sluice.db, sluice.tenant, [
      buildItem({ id: 'rss_p1', title: 'Ferry timetable changes', date: new Date(Date.now() - 60_000).toISOString() }),
      buildItem({ id: 'rss_p2', title: 'Library opens late', date: new Date(Date.now() - 120_000).toISOString() }),
    ]);
    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, hasTouch: true });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/moderation`);
    const first = page.getByRole('article', { name: 'Ferry timetable changes' });
    await first.waitFor();

    const toggle = page.getByRole('button', { name: 'Filters (0 active)', exact: true });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByLabel('State').isVisible()).toBe(false);
    const top = (await first.boundingBox())!.y;
    expect(top).toBeLessThan(667);
    await expectAccessible(page);

    // Every button of the card is a real button of at least 44 × 44 px; a tap moderates.
    const buttons = first.getByRole('button');
    for (let i = 0; i < (await buttons.count()); i++) {
      const box = (await buttons.nth(i).boundingBox())!;
      expect(box.height, await buttons.nth(i).textContent() ?? '').toBeGreaterThanOrEqual(44);
      expect(box.width).toBeGreaterThanOrEqual(44);
    }
    const select = (await first.getByRole('checkbox').locator('..').boundingBox())!;
    expect(select.height).toBeGreaterThanOrEqual(44);
    await first.getByRole('button', { name: 'Unpublish Ferry timetable changes', exact: true }).tap();
    await first.getByRole('button', { name: 'Publish Ferry timetable changes', exact: true }).waitFor();

    // Unfolded, the filters work; the line counts those set.
    await toggle.tap();
    await page.getByLabel('State').selectOption('unpublished');
    await page.getByRole('button', { name: 'Filters (1 active)', exact: true }).waitFor();
    await page.getByRole('article', { name: 'Library opens late' }).waitFor({ state: 'detached' });
    await expectAccessible(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await context.close();
  });

  it('a reload in the same tab uses the token it kept: no sign-in round trip; a revoked one signs in again, sign-out forgets it', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/team`);
    const authorizations: string[] = [];
    page.on('request', (request) => request.url().includes('/v1/authorize') && authorizations.push(request.url()));
    // Requests of the page not yet answered: one still in flight when the token is revoked below
    // would get its 401 and start a sign-in of its own before the reload (seen once on PostgreSQL).
    const inFlight = new Set<object>();
    page.on('request', (request) => inFlight.add(request));
    page.on('requestfinished', (request) => inFlight.delete(request));
    page.on('requestfailed', (request) => inFlight.delete(request));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await page.getByRole('table').waitFor();
    await expect.poll(() => inFlight.size, { timeout: 5_000 }).toBe(0);
    expect(authorizations).toEqual([]);

    // Hostile: the kept token is revoked. The next page load is refused once and signs in again (silently: the sign-in session lasts).
    const kept = JSON.parse((await page.evaluate(() => sessionStorage.getItem('sluice.token'))) ?? 'null') as { value: string };
    const revoked = await sluice.app.inject({ method: 'POST', url: '/v1/oauth/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ token: kept.value, client_id: 'sluice-console' }).toString() });
    expect(revoked.statusCode).toBe(200);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await page.getByRole('table').waitFor();
    expect(authorizations).toHaveLength(1);
    expect(await page.evaluate(() => sessionStorage.getItem('sluice.token'))).not.toContain(kept.value);

    // Sign-out forgets it: nothing of it left in the tab.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('sluice.token'))).toBeNull();
    await page.context().close();
  });
});
