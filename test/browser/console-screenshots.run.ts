/**
 * Screenshots of the console for the README: every screen of the route table at desktop width
 * and at 375 px, signed in as the test user. Run by `npm run screenshots` (with the publication's
 * pictures); writes docs/console-<screen>-desktop.png and docs/console-<screen>-phone.png.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { buildItem, seedItems } from '../helper.ts';
import { consolePage, DESKTOP, launch, PHONE, signIn, startConsole } from './console-harness.ts';

const SCREENS = [
  ['contracts', ''],
  ['sources', '/sources'],
  ['moderation', '/moderation?collection=<collection>'],
  ['filters', '/filters'],
  ['publication', '/publication'],
] as const;

it('writes the console screenshots', async () => {
  mkdirSync('docs', { recursive: true });
  const browser = await launch();
  const sluice = await startConsole();
  try {
    for (const name of ['Sports', 'Conference 2026']) await createCollection(sluice.db, sluice.tenant.contract.id, { name }, 'test');
    await seedModeration(sluice);
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path.replace('<collection>', sluice.tenant.collection.id)}`);
        await page.locator('#screen-title').waitFor();
        if (name === 'moderation') await page.getByText('3 published · 1 unpublished').waitFor();
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

/** A few items in World News for the Moderation screen, one of them waiting unpublished. */
async function seedModeration(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const at = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  const image = (color: string) => `data:image/svg+xml;base64,${Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360"><rect width="640" height="360" fill="${color}"/></svg>`).toString('base64')}`;
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_harbour', title: 'Harbour festival opens with a parade of tall ships', text: 'Thousands lined the quays on Saturday as the festival began.', date: at(3), author: { name: 'Harbour Times', username: 'harbourtimes', userid: null, url: null }, media: [{ type: 'image', url: image('#7aa2c8') }] }),
    buildItem({ id: 'rss_council', title: 'Council approves the new budget', text: 'The vote passed 31 to 12 after a long debate.', date: at(25), author: { name: 'City Desk', username: 'citydesk', userid: null, url: null } }),
    buildItem({ id: 'rss_weather', type: 'status', title: undefined, text: 'Rain expected tonight: bring an umbrella to the concert.', date: at(60), author: { name: 'Weather Now', username: 'weathernow', userid: null, url: null } }),
  ]);
  await seedItems(
    sluice.db,
    sluice.tenant,
    [buildItem({ id: 'rss_rumour', title: 'Unconfirmed: headliner cancels', text: 'A post claims the headliner will not appear.', date: at(10), author: { name: 'Anonymous', username: 'anon', userid: null, url: null } })],
    'unpublished',
  );
}
