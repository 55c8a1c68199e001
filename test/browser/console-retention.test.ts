/**
 * Retention in the console (issue 19, docs/api.md#retention): the Contracts & collections screen
 * shows what each collection keeps and sets it; an absurd value is shown at its field, in the
 * API's words. Role and label locators only, with the accessibility check at 375 px.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe.skipIf(browserMissing)('console retention', () => {
  it('shows and sets a collection’s retention; a bad value is named at its field', async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice);
    await page.getByText('keeps every item').waitFor();
    await page.getByRole('button', { name: 'Retention of World News' }).click();
    await page.getByLabel('Retention (days)').fill('0');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => page.getByLabel('Retention (days)').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await page.getByLabel('Retention (days)').fill('30');
    await page.getByLabel('Maximum items').fill('5000');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('items kept 30 days, at most 5000 items').waitFor();
    const row = await sluice.db.selectFrom('collections').select(['retentionDays', 'retentionMaxItems']).where('id', '=', sluice.tenant.collection.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ retentionDays: 30, retentionMaxItems: 5000 });
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });
});
