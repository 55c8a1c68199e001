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
    await seedSources(sluice);
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path}`);
        await page.locator('#screen-title').waitFor();
        if (name === 'sources') await page.getByRole('table').waitFor();
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

/** Sources of World News in several states of health, for the Sources screenshots. */
async function seedSources(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const { contract, collection } = sluice.tenant;
  const bodies = [
    { service: 'rss', type: 'feed', input: 'https://www.theguardian.com/world/rss' },
    { service: 'mastodon', type: 'tag', input: 'climate@mastodon.social', display: false },
    { service: 'rss', type: 'feed', input: 'https://news.example.org/feed.xml' },
    { service: 'twitter', type: 'location', input: 'harbour', latitude: 53.54, longitude: 9.98, radius: 2000, active: false },
  ].map((body) => ({ ...body, contractId: contract.id, collectionId: collection.id }));
  const created = await sluice.app.inject({ method: 'POST', url: `/collection/inputs?access_token=${encodeURIComponent(sluice.user.token)}`, payload: bodies });
  const ids = (created.json() as { _id: string }[]).map((input) => input._id);
  const now = Date.now();
  const at = (seconds: number) => new Date(now - seconds * 1000).toISOString();
  const health = [
    { lastRun: at(40), lastSuccess: at(40), collected: 128, rejected: 3, nextRunAt: now + 260_000 },
    { lastRun: at(95), lastSuccess: at(95), collected: 42, rejected: 0, nextRunAt: now + 205_000, warnings: JSON.stringify([{ code: 'undated', count: 4, message: "4 entries have no readable date: dated with the feed's date" }]) },
    { lastRun: at(30), lastSuccess: at(7200), lastError: 'HTTP 404', collected: 17, rejected: 1, failures: 3, nextRunAt: now + 1_800_000 },
    { lastRun: at(86_400), lastSuccess: null, lastError: 'twitter is not configured: set TWITTER_BEARER_TOKEN', collected: 0, rejected: 0 },
  ];
  for (const [i, id] of ids.entries()) await sluice.db.updateTable('inputs').set(health[i]!).where('id', '=', id).execute();
}
