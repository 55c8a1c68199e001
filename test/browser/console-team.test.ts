/**
 * The team in the console in Chromium (issue 32 point 3, and the console following the role of
 * point 1): an admin invites a moderator with the keyboard only, the moderator accepts the link
 * in a second browser context, signs in, publishes and unpublishes an item and finds no Sources,
 * Filters, Publication, Connections or Team; a viewer reads the queue without moderation buttons;
 * the owner's Team screen is axe clean, keeps the last owner's controls disabled with the
 * reason, and works 375 px wide without scrolling the page sideways. Role and label locators.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant } from '../../src/store/contracts.ts';
import { buildItem, buildUser, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, scrollsSideways, signIn, startConsole, tabTo } from './console-harness.ts';

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
  await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_a', title: 'Harbour festival opens' }), buildItem({ id: 'rss_b', title: 'Council vote' })], 'unpublished');
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = (segment: string) => `/console/contracts/${sluice.tenant.contract.id}${segment ? `/${segment}` : ''}`;
const queue = () => `${screen('moderation')}?collection=${sluice.tenant.collection.id}`;
const nav = (page: Page) => page.getByRole('navigation', { name: 'Screens' }).getByRole('link').allTextContents();

describe.skipIf(browserMissing)('console: team and roles', () => {
  it('an admin invites a moderator by keyboard; the moderator joins, moderates, and sees no editing screens', { timeout: 90_000 }, async () => {
    const page = await consolePage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sluice.origin });
    await signIn(page, sluice, screen(''), admin);
    expect(await nav(page)).toEqual(['Contracts & collections', 'Sources', 'Moderation', 'Display', 'Filters', 'Publication', 'Analytics', 'Connections', 'Team', 'Blocked authors']);
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
    await page.getByRole('rowheader').filter({ hasText: 'Ada Admin (you)' }).waitFor();
    // The owner's row: an admin changes no owner; the roles offered stop at admin.
    await expect.poll(() => page.getByRole('combobox', { name: 'Role of Mia Moderator' }).count()).toBe(0);
    expect(await page.getByLabel('Role', { exact: true }).locator('option').allTextContents()).toEqual(['viewer', 'moderator', 'editor', 'admin']);

    // Keyboard only: Tab to each field, type, Enter on Invite.
    await page.locator('#screen-title').focus();
    await tabTo(page, 'Name');
    await page.keyboard.type('Mo Moderator');
    await tabTo(page, 'E-mail address');
    await page.keyboard.type('mo@example.com');
    await tabTo(page, 'Role');
    await page.keyboard.press('ArrowDown'); // viewer → moderator
    await tabTo(page, 'Invite');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Invitation for Mo Moderator' }).waitFor();
    await page.getByText('The link was not e-mailed').waitFor();
    const link = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue();
    expect(link).toMatch(new RegExp(`^${sluice.origin}/v1/invitations/[A-Za-z0-9_-]{40,}$`));
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Link copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await page.getByRole('listitem').filter({ hasText: 'Mo Moderator' }).getByRole('button', { name: 'Withdraw the invitation for Mo Moderator' }).waitFor();

    // The moderator, in a browser context of their own.
    const mo = await consolePage(browser);
    await mo.goto(link);
    await mo.getByRole('heading', { name: 'Join Acme News' }).waitFor();
    await mo.getByLabel('Choose a user name').fill('mo');
    await mo.getByLabel('Choose a password').fill('a long enough password');
    await mo.getByRole('button', { name: 'Join and sign in' }).click();
    await mo.waitForURL((url) => url.pathname.startsWith('/console/contracts/') && !url.searchParams.has('code'));
    await mo.locator('#screen-title').waitFor();
    await expect.poll(() => nav(mo)).toEqual(['Contracts & collections', 'Moderation', 'Display', 'Analytics']);
    await expect.poll(() => mo.getByRole('button', { name: /^(Rename|Retention)/ }).count()).toBe(0);
    expect(await mo.getByRole('link', { name: /^Sources/ }).count()).toBe(0);
    expect(await mo.getByRole('heading', { name: 'New collection' }).count()).toBe(0);

    await mo.goto(`${sluice.origin}${queue()}`);
    await mo.getByRole('article', { name: 'Council vote' }).waitFor();
    await mo.getByRole('button', { name: 'Publish Council vote', exact: true }).click();
    await mo.getByRole('button', { name: 'Unpublish Council vote', exact: true }).waitFor();
    await expect.poll(async () => (await sluice.app.inject({ method: 'GET', url: `/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}` })).json().map((item: { id: string }) => item.id)).toEqual(['rss_b']);
    await mo.getByRole('button', { name: 'Unpublish Council vote', exact: true }).click();
    await mo.getByRole('button', { name: 'Publish Council vote', exact: true }).waitFor();
    // No Sources, Filters, Publication, Connections controls, also by address.
    for (const [segment, label] of [['sources', 'Sources'], ['filters', 'Filters'], ['publication', 'Publication'], ['connections', 'Connections'], ['team', 'Team']]) {
      await mo.goto(`${sluice.origin}${screen(segment!)}`);
      await mo.getByText(`${label} needs the role`).waitFor();
      expect(await mo.getByRole('button').filter({ hasNotText: 'Sign out' }).count()).toBe(0);
      expect(await mo.getByRole('textbox').count()).toBe(0);
    }

    // Back with the admin: Mo is a member, signed in, and can be given another role and removed.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'Mo Moderator' });
    await row.getByRole('combobox', { name: 'Role of Mo Moderator' }).waitFor();
    expect(await row.getByRole('combobox', { name: 'Role of Mo Moderator' }).inputValue()).toBe('moderator');
    expect(await row.locator('time').count()).toBe(1);
    await row.getByRole('combobox', { name: 'Role of Mo Moderator' }).selectOption('viewer');
    await page.getByText('Mo Moderator is now viewer.').waitFor();
    await row.getByRole('button', { name: 'Remove Mo Moderator' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove Mo Moderator?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('row').filter({ hasText: 'Mo Moderator' }).count()).toBe(1);
    await row.getByRole('button', { name: 'Remove Mo Moderator' }).click();
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await page.getByText('Mo Moderator was removed.').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Mo Moderator' }).count()).toBe(0);
    await page.getByRole('rowheader').filter({ hasText: 'Ada Admin (you)' }).waitFor();
  });

  it('a viewer reads the queue but has no moderation buttons', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, queue(), viewer);
    await page.getByRole('article', { name: 'Harbour festival opens' }).waitFor();
    await page.getByRole('article', { name: 'Council vote' }).waitFor();
    expect(await nav(page)).toEqual(['Contracts & collections', 'Moderation', 'Analytics']);
    expect(await page.getByRole('button', { name: /^(Publish|Unpublish|Pin|Spotlight|Edit|Split off)/ }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    await page.getByText('moderating needs the role moderator').waitFor();
    // The p shortcut does nothing for a viewer.
    await page.getByRole('article', { name: 'Council vote' }).click();
    await page.keyboard.press('p');
    expect((await sluice.app.inject({ method: 'GET', url: `/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}` })).json()).toEqual([]);
    await expectAccessible(page);
    // No display controls either, also by address.
    await page.goto(`${sluice.origin}${screen('display')}`);
    await page.getByText('Display needs the role moderator').waitFor();
    expect(await page.getByRole('button', { name: /^(Pause|Blank|Resume)$/ }).count()).toBe(0);
  });

  it('the owner’s Team screen: axe clean, the last owner kept, and usable 375 px wide', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, screen('team'));
    const role = page.getByRole('combobox', { name: 'Role of Mia Moderator' });
    await role.waitFor();
    expect(await role.isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Remove Mia Moderator' }).isDisabled()).toBe(true);
    await page.getByText('The last owner can be neither removed nor given another role').waitFor();
    // The owner may invite an owner; the admin could not.
    expect(await page.getByLabel('Role', { exact: true }).locator('option').allTextContents()).toEqual(['viewer', 'moderator', 'editor', 'admin', 'owner']);
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);

    await page.getByLabel('Name', { exact: true }).fill('Ed Editor with a rather long name for a narrow phone screen');
    await page.getByLabel('E-mail address').fill('ed.editor.with.a.long.address@newsroom.example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('textbox', { name: 'Invitation link' }).waitFor();
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
  });
});
