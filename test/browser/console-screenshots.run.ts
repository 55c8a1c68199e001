/**
 * Screenshots of the console for the README: every screen of the route table at desktop width
 * and at 375 px, signed in as the test user. Run by `npm run screenshots` (with the publication's
 * pictures); writes docs/console-<screen>-desktop.png and docs/console-<screen>-phone.png.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { buildItem, seedItems } from '../helper.ts';
import { addCustomization } from '../publication-fixtures.ts';
import { consolePage, DESKTOP, launch, PHONE, signIn, startConsole } from './console-harness.ts';

const SCREENS = [
  ['contracts', ''],
  ['sources', '/sources'],
  ['moderation', '/moderation'],
  ['filters', '/filters'],
  ['publication', '/publication'],
] as const;

it('writes the console screenshots', async () => {
  mkdirSync('docs', { recursive: true });
  const browser = await launch();
  const sluice = await startConsole();
  try {
    for (const name of ['Sports', 'Conference 2026']) await createCollection(sluice.db, sluice.tenant.contract.id, { name }, 'test');
    // Publication: published items for the preview, a customization with an earlier version.
    await seedItems(sluice.db, sluice.tenant, [
      buildItem({ id: 'rss_harbour', title: 'The harbour reopens after two years of works', text: 'Ferries run again from Monday.' }),
      buildItem({ id: 'rss_park', title: 'A new park by the river', text: 'Four hectares of meadow and trees.' }),
      buildItem({ id: 'rss_market', title: 'The night market is back', text: 'Every Friday until October.' }),
    ]);
    const brand = await addCustomization(sluice.db, sluice.tenant.contract.id, { name: 'Brand', type: 'css', data: '.card {\n  border-radius: 12px;\n}\n' });
    await sluice.app.inject({ method: 'PATCH', url: `/publication/customizations/${brand}`, headers: { authorization: `Bearer ${sluice.user.token}` }, payload: { data: '.card {\n  border-radius: 12px;\n  border-color: #1d4ed8;\n}\n' } });
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path}`);
        await page.locator('#screen-title').waitFor();
        if (name === 'publication') {
          await page.getByRole('textbox', { name: 'data of Brand' }).waitFor();
          await page.getByLabel('Preview of the wall').contentFrame().getByRole('main').waitFor();
          await page.getByRole('heading', { name: 'version 1', exact: true }).waitFor();
          await page.getByRole('button', { name: 'Show changes from version 1 to version 2' }).click();
          await page.getByLabel('Preview of the wall').contentFrame().getByRole('heading', { name: 'The night market is back' }).waitFor();
          // The preview is a sandboxed (out-of-process) frame, which a stitched full-page shot leaves
          // blank below the first screen: make the viewport as tall as the page instead.
          const height = await page.evaluate(() => document.documentElement.scrollHeight);
          await page.setViewportSize({ width: viewport.width, height });
          await page.getByLabel('Preview of the wall').contentFrame().getByRole('heading', { name: 'The night market is back' }).waitFor();
          await page.screenshot({ path: `docs/console-${name}-${suffix}.png` });
          await page.setViewportSize(viewport);
          continue;
        }
        await page.screenshot({ path: `docs/console-${name}-${suffix}.png`, fullPage: true });
      }
      await page.context().close();
    }
  } finally {
    await sluice.close();
    await browser.close();
  }
  expect(true).toBe(true);
});
