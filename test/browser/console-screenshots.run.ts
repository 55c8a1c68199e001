/**
 * Screenshots of the console for the README: every screen of the route table at desktop width
 * and at 375 px, signed in as the test user. Run by `npm run screenshots` (with the publication's
 * pictures); writes docs/console-<screen>-desktop.png and docs/console-<screen>-phone.png.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
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
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path}`);
        await page.locator('#screen-title').waitFor();
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
