/**
 * The Account screen and the Team screen's account-security controls in Chromium (issue 32 point
 * 4, docs/api.md#account, #two-factor-sign-in, #requiring-two-factor-sign-in, #password-reset):
 *
 * - the owner changes the password with the keyboard only (a wrong current one → the error at
 *   that field; the right one → how many sessions ended), then signs in again with it; the owner
 *   cannot require two-factor sign-in before having it (the refusal links the Account screen);
 *   turns it on with a code computed here by `otpauth` from the secret the screen shows (the
 *   server's TOTP clock fixed, `app.twoFactorClock`: no waiting), sees the recovery codes once;
 *   signing in again goes through the code page; then requires it on the contract from Team;
 * - an admin issues a password-reset link for a moderator (none offered on the owner's row), the
 *   moderator sets a password in a second browser context and signs in with it;
 * - axe: no serious or critical violation on Account and Team with these controls; 375 px wide
 *   the Account screen does not scroll sideways, the enrolment's long URI included; Sign out
 *   everywhere (after its confirmation) leaves the console signed out, every token revoked.
 * Role and label locators.
 */
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant } from '../../src/store/contracts.ts';
import { buildUser } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, scrollsSideways, signIn, startConsole, tabTo } from './console-harness.ts';

/** A fixed instant at the start of a 30 s TOTP step: codes are computed for it and the steps after. */
const T = 1_800_000_000_000 - (1_800_000_000_000 % 30_000);
const STEP = 30_000;

let browser: Browser;
let sluice: ConsoleServer;
let admin: Awaited<ReturnType<typeof buildUser>>;
let moderator: Awaited<ReturnType<typeof buildUser>>;
let viewer: Awaited<ReturnType<typeof buildUser>>;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  sluice.app.twoFactorClock.now = () => T;
  admin = await buildUser(sluice.db, { name: 'Ada Admin', username: 'ada', language: 'en' });
  moderator = await buildUser(sluice.db, { name: 'Mo Moderator', username: 'mo', language: 'en' });
  viewer = await buildUser(sluice.db, { name: 'Vic Viewer', username: 'vic', language: 'en' });
  await grant(sluice.db, admin.consumer.id, sluice.tenant.contract.id, undefined, 'admin');
  await grant(sluice.db, moderator.consumer.id, sluice.tenant.contract.id, undefined, 'moderator');
  await grant(sluice.db, viewer.consumer.id, sluice.tenant.contract.id, undefined, 'viewer');
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const team = () => `/console/contracts/${sluice.tenant.contract.id}/team`;
const codeAt = (secret: string, timestamp: number) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp });

/** The secret the enrolment shows (grouped by four for typing), without its spaces. */
async function shownSecret(page: Page): Promise<string> {
  const text = await page.getByText(/^Secret key:/).textContent();
  return text!.replace(/^Secret key:/, '').replace(/\s+/g, '');
}

describe.skipIf(browserMissing)('console: account', () => {
  it('the owner changes the password by keyboard, turns two-factor on, signs in with the code, and requires it on the contract', { timeout: 120_000 }, async () => {
    const page = await consolePage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sluice.origin });
    await signIn(page, sluice);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/account');
    await page.getByText('Off.').waitFor();
    await expectAccessible(page);

    // Keyboard only: a wrong current password → the error at that field, nothing changed.
    const newPassword = 'a brand new passphrase';
    await page.locator('#screen-title').focus();
    await tabTo(page, 'Current password');
    await page.keyboard.type('not the password');
    await tabTo(page, 'New password');
    await page.keyboard.type(newPassword);
    await tabTo(page, 'New password again');
    await page.keyboard.type(newPassword);
    await tabTo(page, 'Change password');
    await page.keyboard.press('Enter');
    const current = page.getByLabel('Current password');
    await expect.poll(() => current.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await current.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/password/i);
    expect(await page.getByLabel('New password', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    // The right one, still by keyboard: the fields keep what was typed, so only the current one again.
    await current.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(sluice.user.password);
    await tabTo(page, 'Change password');
    await page.keyboard.press('Enter');
    await page.getByText(/^Your password is changed\. Signed out elsewhere: \d+ sign-in sessions? ended/).waitFor();
    expect(await current.inputValue()).toBe('');
    await expectAccessible(page);

    // Before two-factor is on, the owner cannot require it: the refusal says so and links Account.
    // (In-app navigation: the password change ended this browser's sign-in session, so a page
    // load would ask for the new password; the console's own token stays valid.)
    await page.getByRole('link', { name: 'Team' }).click();
    const requirement = page.getByRole('switch', { name: 'Require two-factor sign-in' });
    await requirement.click();
    await page.getByRole('alert').filter({ hasText: /two-factor/i }).waitFor();
    expect(await requirement.isChecked()).toBe(false);
    await page.getByRole('link', { name: 'Turn on two-factor sign-in on the Account screen' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();

    // Turn on: the secret as shown, a code computed from it, the recovery codes once.
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await page.getByRole('heading', { name: 'Add Sluice to your authenticator app' }).waitFor();
    const secret = await shownSecret(page);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = page.getByRole('link', { name: 'open in an authenticator app' });
    expect(await uri.getAttribute('href')).toMatch(new RegExp(`^otpauth://totp/.*secret=${secret}`));
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Code from the app').fill('000000' === codeAt(secret, T) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    await expect.poll(() => page.getByLabel('Code from the app').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Code from the app').fill(codeAt(secret, T));
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await page.getByText('They will not be shown again.').waitFor();
    const codes = await page.getByRole('list').filter({ hasText: /[a-z0-9]{5}-[a-z0-9]{5}/ }).getByRole('listitem').allTextContents();
    expect(codes).toHaveLength(10);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Recovery codes copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(codes.join('\n'));
    const download = page.getByRole('link', { name: 'Download as text' });
    expect(decodeURIComponent((await download.getAttribute('href'))!)).toContain(codes[9]);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('10 recovery codes left.').waitFor();
    expect(await page.getByText(codes[0]!).count()).toBe(0);

    // Sign out, sign in again: the new password, then the code page.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('User name').fill(sluice.user.username);
    await page.getByLabel('Password').fill(newPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Enter your code' }).waitFor();
    // The code of the next step (the one of step T was used to turn it on).
    await page.getByLabel('Code from your authenticator app').fill(codeAt(secret, T + STEP));
    await page.getByRole('button', { name: 'Verify and sign in' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/console/') && !url.searchParams.has('code'));
    await page.locator('#screen-title').waitFor();

    // Now the owner may require it, from Team; each member's two-factor shows there.
    await page.goto(`${sluice.origin}${team()}`);
    const row = (name: string) => page.getByRole('row').filter({ hasText: name });
    await expect.poll(() => row('Mia Moderator').getByRole('cell').allTextContents()).toContain('Two-factoron');
    expect(await row('Mo Moderator').getByRole('cell').allTextContents()).toContain('Two-factoroff');
    await page.getByText('Without it now: Ada Admin, Mo Moderator, Vic Viewer.').waitFor();
    await page.getByRole('switch', { name: 'Require two-factor sign-in' }).click();
    await expect.poll(() => page.getByRole('switch', { name: 'Require two-factor sign-in' }).isChecked()).toBe(true);
    const contract = await sluice.db.selectFrom('contracts').select('requireTwoFactor').where('id', '=', sluice.tenant.contract.id).executeTakeFirstOrThrow();
    expect(Number(contract.requireTwoFactor)).toBe(1);
    await expectAccessible(page);
    // The other tests' members have no two-factor: off again.
    await page.getByRole('switch', { name: 'Require two-factor sign-in' }).click();
    await expect.poll(() => page.getByRole('switch', { name: 'Require two-factor sign-in' }).isChecked()).toBe(false);
  });

  it('an admin issues a password-reset link for a moderator, who sets a password in another browser and signs in with it', { timeout: 90_000 }, async () => {
    const page = await consolePage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sluice.origin });
    await signIn(page, sluice, team(), admin);
    const row = (name: string) => page.getByRole('row').filter({ hasText: name });
    await row('Mo Moderator').getByRole('button', { name: 'Password reset link for Mo Moderator' }).waitFor();
    // An admin resets no owner's password (the API would refuse), nor their own here (Account).
    expect(await row('Mia Moderator').getByRole('button', { name: /^Password reset link/ }).count()).toBe(0);
    expect(await row('Ada Admin').getByRole('button', { name: /^Password reset link/ }).count()).toBe(0);
    expect(await page.getByRole('switch', { name: 'Require two-factor sign-in' }).count()).toBe(0); // owners only

    await row('Mo Moderator').getByRole('button', { name: 'Password reset link for Mo Moderator' }).click();
    await page.getByRole('heading', { name: 'Password reset link for Mo Moderator' }).waitFor();
    await page.getByText('The link was not e-mailed').waitFor();
    const link = await page.getByRole('textbox', { name: 'Password reset link' }).inputValue();
    expect(link).toMatch(new RegExp(`^${sluice.origin}/v1/password-reset/[A-Za-z0-9_-]{40,}$`));
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Link copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { name: 'Invite' }).waitFor();

    const mo = await consolePage(browser);
    await mo.goto(link);
    await mo.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await mo.getByRole('textbox', { name: 'New password' }).fill('mo chose this one');
    await mo.getByRole('button', { name: 'Set the password' }).click();
    await mo.getByRole('heading', { name: 'Your password is set' }).waitFor();
    await signIn(mo, sluice, '/console/', { username: 'mo', password: 'mo chose this one' });
    await mo.getByRole('link', { name: 'Account' }).waitFor();
    // The link worked once.
    await mo.goto(link);
    await mo.getByRole('heading', { name: /used|expired|no longer/i }).waitFor();
  });

  it('the Account screen 375 px wide: no sideways scrolling, the enrolment included; axe clean', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, '/console/account', viewer);
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByText('Off.').waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await page.getByRole('button', { name: 'Sign out everywhere…' }).click();
    await page.getByRole('group').getByRole('button', { name: 'Cancel' }).click();
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);

    // Sign out everywhere: this console's token is revoked too, so it ends signed out, and the
    // next sign-in asks for the password (the browser's sign-in session ended as well).
    await page.getByRole('button', { name: 'Sign out everywhere…' }).click();
    await page.getByRole('button', { name: 'Yes, sign out everywhere' }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    const live = await sluice.db.selectFrom('tokens').select('tokenHash').where('consumerId', '=', viewer.consumer.id).where('revoked', '=', 0).execute();
    expect(live).toEqual([]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('User name').waitFor();
  });
});
