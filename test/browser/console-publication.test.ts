/**
 * The console's Publication screen in Chromium (issue 12): edit a CSS customization in the code
 * editor and see the preview of the wall change before saving (a computed style in the preview
 * frame), save, see the history with the previous version and its diff, restore it; the layout
 * choice; copy the embed snippet; a customization that "Applies to" one collection shows on that
 * collection's wall only (issue 33 point 7); axe clean, no CSP violations, keyboard and 375 px
 * usable. Role and label locators only.
 */
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { buildItem, seedItems } from '../helper.ts';
import { addCustomization } from '../publication-fixtures.ts';
import { browserMissing, consolePage, type ConsoleServer, cspViolations, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;
let customizationId: string;

const STORED = 'body { background-color: #fafafa; }';
const DRAFT = 'body { background-color: #7a1f5c; }';

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_harbour', title: 'The harbour reopens' }), buildItem({ id: 'rss_park', title: 'A new park' })]);
  customizationId = await addCustomization(sluice.db, sluice.tenant.contract.id, { name: 'Brand', type: 'css', data: STORED });
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const preview = (page: Page): FrameLocator => page.getByLabel('Preview of the wall').contentFrame();

/** The preview's body background colour once the wall (its main landmark) is there. */
async function previewBackground(page: Page): Promise<string> {
  return preview(page)
    .getByRole('main')
    .evaluate((main) => getComputedStyle(main.ownerDocument.body).backgroundColor);
}

/** Waits (bounded by the page's default timeout) until the preview's background is `colour`. */
async function waitForBackground(page: Page, colour: string): Promise<void> {
  await preview(page)
    .getByRole('main')
    .evaluate(
      (main, wanted) =>
        new Promise<void>((resolve, reject) => {
          const give = setTimeout(() => reject(new Error(`background is ${getComputedStyle(main.ownerDocument.body).backgroundColor}, not ${wanted}`)), 6_000);
          const check = () => {
            if (getComputedStyle(main.ownerDocument.body).backgroundColor === wanted) {
              clearTimeout(give);
              resolve();
            } else setTimeout(check, 50); // by timer: an unpainted frame gets no animation frames
          };
          check();
        }),
      colour,
    );
}

async function storedData(): Promise<string> {
  return (await sluice.db.selectFrom('customizations').select('data').where('id', '=', customizationId).executeTakeFirstOrThrow()).data;
}

describe.skipIf(browserMissing)('console: Publication', () => {
  it('previews an unsaved CSS change, saves it, shows the history with its diff and restores the previous version', async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    const editor = page.getByRole('textbox', { name: 'data of Brand' });
    await editor.waitFor();
    await preview(page).getByRole('heading', { name: 'The harbour reopens' }).waitFor();
    expect(await previewBackground(page)).toBe('rgb(250, 250, 250)');
    await page.getByText('No earlier versions yet', { exact: false }).waitFor();

    // Edit: the preview follows before anything is saved.
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.insertText(DRAFT);
    await waitForBackground(page, 'rgb(122, 31, 92)');
    expect(await storedData()).toBe(STORED);
    await page.getByRole('status').filter({ hasText: 'Unsaved changes' }).waitFor();
    // A reload (a silent re-sign-in) keeps the unsaved change, in the editor and in the preview.
    await page.reload();
    await expect(page.getByRole('textbox', { name: 'data of Brand' }).textContent()).resolves.toBe(DRAFT);
    await waitForBackground(page, 'rgb(122, 31, 92)');

    // Save: the previous version appears in the history, with its diff.
    await page.getByRole('button', { name: 'Save Brand' }).click();
    await page.getByRole('heading', { name: 'version 1', level: 3, exact: true }).waitFor();
    expect(await storedData()).toBe(DRAFT);
    await page.getByRole('heading', { name: /Brand · css · version 2/ }).waitFor();
    await page.getByRole('button', { name: 'Show changes from version 1 to version 2' }).click();
    const diff = page.getByRole('group', { name: 'Changes from version 1 to version 2' });
    const diffText = await diff.textContent();
    expect(diffText).toContain(`removed: ${STORED}`);
    expect(diffText).toContain(`added: ${DRAFT}`);
    await expectAccessible(page);

    // Restore version 1: a PATCH with its data, which keeps version 2 in turn.
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 1 restored as version 3.' }).waitFor();
    expect(await storedData()).toBe(STORED);
    await page.getByRole('heading', { name: 'version 2', level: 3, exact: true }).waitFor();
    await expect(page.getByRole('textbox', { name: 'data of Brand' }).textContent()).resolves.toBe(STORED);
    await waitForBackground(page, 'rgb(250, 250, 250)');
    const versions = (await sluice.db.selectFrom('customizationVersions').select(['version', 'data']).where('customizationId', '=', customizationId).orderBy('id').execute()).map((v) => [v.version, v.data]);
    expect(versions).toEqual([
      ['1', STORED],
      ['2', DRAFT],
    ]);

    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('chooses the layout and copies the embed snippet, with a status message', async () => {
    const page = await consolePage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sluice.origin });
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    await page.getByLabel('layout').selectOption('vertical');
    await expect(preview(page).getByRole('main').getAttribute('data-layout')).resolves.toBe('vertical');
    const snippet = await page.getByLabel('Embed snippet').inputValue();
    expect(snippet).toBe(
      `<div data-sluice-contract="${sluice.tenant.contract.slug}" data-sluice-q="${sluice.tenant.collection.slug}" data-sluice-layout="vertical"></div>\n` +
        `<script src="${sluice.origin}/v1/embed.js" async></script>`,
    );
    await page.getByRole('button', { name: 'Copy embed snippet' }).click();
    await page.getByRole('status').filter({ hasText: 'Embed snippet copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('works at 375 px and by keyboard: Tab leaves the editor for Save', async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    const editor = page.getByRole('textbox', { name: 'data of Brand' });
    await editor.waitFor();
    await preview(page).getByRole('main').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await editor.focus();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.insertText('\n/* phone */');
    await page.keyboard.press('Tab');
    // the active checkbox and name come before the editor; Save follows it
    await expect(page.getByRole('button', { name: 'Save Brand' }).evaluate((button) => button === document.activeElement)).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /Brand · css · version 4/ }).waitFor();
    expect(await storedData()).toBe(`${STORED}\n/* phone */`);
    await expectAccessible(page);
    expect(cspViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('applies a customization to one collection: the list says which walls, and only that wall shows it', async () => {
    const side = await createCollection(sluice.db, sluice.tenant.contract.id, { name: 'Side wall' }, 'test');
    await seedItems(sluice.db, { ...sluice.tenant, collection: side }, [buildItem({ id: 'rss_side', title: 'On the side wall' })]);
    const page = await consolePage(browser);
    await signIn(page, sluice, `/console/contracts/${sluice.tenant.contract.id}/publication`);
    const list = page.getByRole('region', { name: 'Customizations' });
    await expect(list.getByRole('listitem').filter({ hasText: 'Brand' }).textContent()).resolves.toContain('All walls of this contract');

    const create = page.getByRole('form', { name: 'New customization' });
    await create.getByLabel('name').fill('Side only');
    await create.getByLabel('Applies to').selectOption({ label: 'Side wall' });
    await create.getByRole('button', { name: 'Create customization' }).click();
    const editor = page.getByRole('textbox', { name: 'data of Side only' });
    await editor.waitFor();
    await expect(list.getByRole('listitem').filter({ hasText: 'Side only' }).textContent()).resolves.toContain('Side wall');
    const form = page.getByRole('form', { name: /Side only · css/ });
    await expect(form.getByLabel('Applies to').inputValue()).resolves.toBe(side.id);
    await editor.click();
    await page.keyboard.insertText('body { background-color: #0b5d3b; }');
    await form.getByRole('button', { name: 'Save Side only' }).click();
    await page.getByRole('heading', { name: /Side only · css · version 2/ }).waitFor();

    // The preview of the side wall has it; that of World News (another collection) does not.
    await page.getByLabel('collection', { exact: true }).selectOption({ label: 'Side wall' });
    await preview(page).getByRole('heading', { name: 'On the side wall' }).waitFor();
    await waitForBackground(page, 'rgb(11, 93, 59)');
    await page.getByLabel('collection', { exact: true }).selectOption({ label: 'World News' });
    await preview(page).getByRole('heading', { name: 'The harbour reopens' }).waitFor();
    expect(await previewBackground(page)).not.toBe('rgb(11, 93, 59)');
    await expectAccessible(page);

    // Moved to all walls: World News's wall has it too (the preview reloads on save).
    await form.getByLabel('Applies to').selectOption({ label: 'All walls of this contract' });
    await form.getByRole('button', { name: 'Save Side only' }).click();
    await page.getByRole('heading', { name: /Side only · css · version 3/ }).waitFor();
    await expect(list.getByRole('listitem').filter({ hasText: 'Side only' }).textContent()).resolves.toContain('All walls of this contract');
    await waitForBackground(page, 'rgb(11, 93, 59)');
    expect(cspViolations(page)).toEqual([]);
    // Leave the contract as the other tests expect it.
    await sluice.db.deleteFrom('customizations').where('name', '=', 'Side only').execute();
    await page.context().close();
  });
});
