/**
 * The console's wall settings on the Publication screen in Chromium (issue 35 point 2;
 * docs/api.md#publication-settings, src/console/README.md): an unsaved card colour shows in the
 * preview before saving (a computed style in the preview frame), saving stores the settings
 * (read back from the database) and the preview reloads with them; a colour pair the API refuses
 * for contrast (400, code 1003) is shown under the colour the request set, and nothing is stored;
 * a bad address is shown under its field. Every control labelled (axe), no CSP violation.
 */
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPublicationSettings } from '../../src/store/collections.ts';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_harbour', title: 'The harbour reopens' })]);
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const preview = (page: Page): FrameLocator => page.getByLabel('Preview of the wall').contentFrame();

/** Waits (up to 6 s) until the preview's first card has background `colour`. */
async function waitForCardBackground(page: Page, colour: string): Promise<void> {
  await preview(page)
    .locator('.card')
    .first()
    .evaluate(
      (card, wanted) =>
        new Promise<void>((resolve, reject) => {
          const give = setTimeout(() => reject(new Error(`card background is ${getComputedStyle(card).backgroundColor}, not ${wanted}`)), 6_000);
          // Polled by timer, not requestAnimationFrame: a frame Chromium does not paint (the
          // preview out of view, a busy machine) gets no animation frames, and the wait would miss
          // a colour that has long arrived.
          const check = () => {
            if (getComputedStyle(card).backgroundColor === wanted) {
              clearTimeout(give);
              resolve();
            } else setTimeout(check, 50);
          };
          check();
        }),
      colour,
    );
}

/** The text of the elements that describe the control labelled `label` (its hint and errors). */
const description = (page: Page, label: string) =>
  page.getByLabel(label, { exact: true }).evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

/** The collection's stored publication settings. */
const storedPublication = () => findPublicationSettings(sluice.db, sluice.tenant.contract.id, sluice.tenant.collection.id);

describe.skipIf(browserMissing)('console: wall settings', () => {
  it('previews an unsaved card colour, saves the settings and reloads the preview with them', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    await page.getByRole('heading', { name: 'Wall settings of World News' }).waitFor();
    await preview(page).getByRole('heading', { name: 'The harbour reopens' }).waitFor();
    await waitForCardBackground(page, 'rgb(255, 255, 255)');

    await page.getByLabel('Card colour', { exact: true }).fill('#fff8e1');
    await waitForCardBackground(page, 'rgb(255, 248, 225)');
    expect(await storedPublication()).toEqual({});

    await page.getByLabel('Language', { exact: true }).fill('NL');
    await page.getByLabel('Scroll by itself').check();
    await page.getByLabel('Corner radius (pixels)').fill('6');
    await page.getByLabel('Font', { exact: true }).selectOption('serif');
    await page.getByLabel('Display header text').fill('#SluiceCon');
    await page.getByRole('button', { name: 'Save wall settings' }).click();
    await expect.poll(storedPublication, { timeout: 5_000 }).toEqual({ language: 'nl', autoScroll: true, theme: { card: '#fff8e1', radius: 6, font: 'serif' }, display: { header: '#SluiceCon' } });
    // The form shows what was stored (the language in its normal form); the preview has the wall's Dutch words.
    await expect.poll(() => page.getByLabel('Language', { exact: true }).inputValue()).toBe('nl');
    await preview(page).locator('html[lang="nl"]').waitFor();
    await waitForCardBackground(page, 'rgb(255, 248, 225)');

    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
  });

  it('shows a contrast refusal under the colour it names and a bad address under its field, storing nothing', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    await page.getByRole('heading', { name: 'Wall settings of World News' }).waitFor();
    const before = await storedPublication();

    // Light grey on the default badge background (#f4f5f7): about 2:1, below 4.5:1.
    await page.getByLabel('Source badge text colour', { exact: true }).fill('#aaaaaa');
    await page.getByLabel('Full-screen button link', { exact: true }).fill('http://example.org/wall');
    await page.getByRole('button', { name: 'Save wall settings' }).click();
    await expect.poll(() => description(page, 'Source badge text colour')).toMatch(/badgeText #aaaaaa on badgeBackground #f4f5f7 has a contrast of 2\.12:1/);
    expect(await page.getByLabel('Source badge text colour', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await description(page, 'Full-screen button link')).toMatch(/https/);
    // The other colours carry no error.
    expect(await description(page, 'Card colour')).not.toMatch(/contrast/);
    expect(await storedPublication()).toEqual(before);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
  });
});
