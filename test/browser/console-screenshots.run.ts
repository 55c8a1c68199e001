/**
 * Screenshots of the console for the README: every screen of the route table at desktop width
 * and at 375 px, signed in as the test user. Run by `npm run screenshots` (with the publication's
 * pictures); writes docs/console-<screen>-desktop.png and docs/console-<screen>-phone.png.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createCollection } from '../../src/store/collections.ts';
import { buildItem, seedItems } from '../helper.ts';
import { consolePage, type ConsoleServer, DESKTOP, launch, PHONE, signIn, startConsole } from './console-harness.ts';

/** Filters: a set in the rule builder that uses a patterns list, previewed over stored items. */
async function filtersShot(page: Page, sluice: ConsoleServer, suffix: string): Promise<void> {
  await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}/filters/sets`);
  await page.getByRole('heading', { name: 'New set' }).waitFor();
  await page.getByLabel('Set name').fill('No spam');
  const rule = page.getByRole('group', { name: 'Rule 1' });
  await rule.getByLabel('Operator').selectOption('patternin');
  await rule.getByLabel('List').selectOption({ label: 'Spam words' });
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByRole('table', { name: 'Rejections by rule' }).waitFor();
  await page.screenshot({ path: `docs/console-filters-${suffix}.png`, fullPage: true });
}

const SCREENS = [
  ['contracts', ''],
  ['sources', '/sources'],
  ['moderation', '/moderation'],
  ['publication', '/publication'],
] as const;

it('writes the console screenshots', async () => {
  mkdirSync('docs', { recursive: true });
  const browser = await launch();
  const sluice = await startConsole();
  try {
    for (const name of ['Sports', 'Conference 2026']) await createCollection(sluice.db, sluice.tenant.contract.id, { name }, 'test');
    const token = `?access_token=${encodeURIComponent(sluice.user.token)}`;
    await sluice.app.inject({ method: 'POST', url: `/collection/lists${token}`, payload: { name: 'Spam words', contractId: sluice.tenant.contract.id, type: 'patterns', entries: ['/viagra/i', '/casino/i'] } });
    await seedItems(sluice.db, sluice.tenant, [
      buildItem({ id: 'rss_spam', text: 'Buy VIAGRA now' }),
      buildItem({ id: 'rss_news', text: 'The council met today' }),
      buildItem({ id: 'rss_casino', text: 'Casino night in town' }),
    ]);
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path}`);
        await page.locator('#screen-title').waitFor();
        await page.screenshot({ path: `docs/console-${name}-${suffix}.png`, fullPage: true });
      }
      await filtersShot(page, sluice, suffix);
      await page.context().close();
    }
  } finally {
    await sluice.close();
    await browser.close();
  }
  expect(true).toBe(true);
});
