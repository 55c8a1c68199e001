/**
 * Screenshots of the console for the README: every screen of the route table at desktop width
 * and at 375 px, signed in as the test user (the contract's owner). Run by `npm run screenshots` (with the publication's
 * pictures); writes docs/console-<screen>-desktop.png and docs/console-<screen>-phone.png.
 * Each screen is awaited by its role and label locators (its heading, then the part the picture
 * is about), not by CSS classes or timers, so a screen's redesign keeps the script working.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createCollection } from '../../src/store/collections.ts';
import { flushBeacons } from '../../src/publication/beacon.ts';
import { addCounts, DAY_MS, hourOf } from '../../src/store/analytics.ts';
import { grant } from '../../src/store/contracts.ts';
import { buildItem, buildUser, seedItems } from '../helper.ts';
import { addCustomization } from '../publication-fixtures.ts';
import { consolePage, type ConsoleServer, DESKTOP, launch, PHONE, signIn, startConsole } from './console-harness.ts';

/** Filters: a set in the rule builder that uses a patterns list, previewed over stored items. */
async function filtersShot(page: Page, sluice: ConsoleServer, suffix: string): Promise<void> {
  await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}/filters/sets`);
  await page.getByRole('heading', { name: 'New set' }).waitFor();
  await page.getByLabel('Set name').fill('No spam');
  const rule = page.getByRole('group', { name: 'Rule 1' });
  await rule.getByLabel('Part of the item').selectOption('text');
  await rule.getByLabel('Condition').selectOption('patternin');
  await rule.getByLabel('List').selectOption({ label: 'Spam words' });
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByRole('table', { name: 'Rejections by rule' }).waitFor();
  await page.screenshot({ path: `docs/console-filters-${suffix}.png`, fullPage: true });
}

/** Account: the password form and two-factor sign-in being turned on (the secret, its QR code and URI). */
async function accountShot(page: Page, sluice: ConsoleServer, suffix: string): Promise<void> {
  await page.goto(`${sluice.origin}/console/account`);
  await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
  await page.getByRole('img', { name: /QR code/ }).waitFor();
  await page.screenshot({ path: `docs/console-account-${suffix}.png`, fullPage: true });
}

const SCREENS = [
  ['contracts', ''],
  ['sources', '/sources'],
  ['moderation', '/moderation?collection=<collection>'],
  ['display', '/display'],
  ['publication', '/publication'],
  ['analytics', '/analytics'],
  ['connections', '/connections'],
  ['team', '/team'],
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
    await seedSources(sluice);
    await seedModeration(sluice);
    await seedConnections(sluice);
    await seedTeam(sluice);
    await seedAnalytics(sluice);
    // Publication: published items for the preview, a customization with an earlier version.
    await seedItems(sluice.db, sluice.tenant, [
      buildItem({ id: 'rss_harbour_works', title: 'The harbour reopens after two years of works', text: 'Ferries run again from Monday.' }),
      buildItem({ id: 'rss_park', title: 'A new park by the river', text: 'Four hectares of meadow and trees.' }),
      buildItem({ id: 'rss_market', title: 'The night market is back', text: 'Every Friday until October.' }),
    ]);
    const brand = await addCustomization(sluice.db, sluice.tenant.contract.id, { name: 'Brand', type: 'css', data: '.card {\n  border-radius: 12px;\n}\n' });
    await sluice.app.inject({ method: 'PATCH', url: `/publication/customizations/${brand}`, headers: { authorization: `Bearer ${sluice.user.token}` }, payload: { data: '.card {\n  border-radius: 12px;\n  border-color: #1d4ed8;\n}\n' } });
    for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const page = await consolePage(browser, viewport);
      await signIn(page, sluice);
      for (const [name, path] of SCREENS) {
        await page.goto(`${sluice.origin}/console/contracts/${sluice.tenant.contract.id}${path.replace('<collection>', sluice.tenant.collection.id)}`);
        await page.locator('#screen-title').waitFor();
        if (name === 'sources') await page.getByRole('table').waitFor();
        if (name === 'moderation') {
          await page.getByText(/\d+ published · \d+ unpublished/).waitFor();
          await page.getByRole('button', { name: '2 duplicates of Harbour festival opens with a parade of tall ships' }).click();
        }
        if (name === 'connections') await page.getByRole('article', { name: 'Newsroom X' }).waitFor();
        if (name === 'team') await page.getByRole('heading', { name: 'Pending invitations' }).waitFor();
        if (name === 'display') {
          await page.getByRole('heading', { name: 'Screens of World News' }).waitFor();
          await page.getByRole('status').filter({ hasText: 'Now live' }).waitFor();
        }
        if (name === 'analytics') {
          await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
          await page.getByRole('combobox', { name: 'Collection' }).selectOption(sluice.tenant.collection.id);
          await page.getByLabel('Totals of the period').waitFor();
          await page.getByRole('region', { name: 'Top items by clicks' }).getByRole('rowheader').first().waitFor();
        }
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
      await filtersShot(page, sluice, suffix);
      await accountShot(page, sluice, suffix);
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

/** A few items in World News for the Moderation screen, one of them waiting unpublished. */
async function seedModeration(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const at = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  // De-duplication by URL while these are stored (the other screens' items are stored without).
  await sluice.db.updateTable('collections').set({ dedupe: 'url' }).where('id', '=', sluice.tenant.collection.id).execute();
  const image = (color: string) => `data:image/svg+xml;base64,${Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360"><rect width="640" height="360" fill="${color}"/></svg>`).toString('base64')}`;
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_harbour', title: 'Harbour festival opens with a parade of tall ships', text: 'Thousands lined the quays on Saturday as the festival began.', date: at(3), author: { name: 'Harbour Times', username: 'harbourtimes', userid: null, url: null }, media: [{ type: 'image', url: image('#7aa2c8') }] }),
    buildItem({ id: 'rss_council', title: 'Council approves the new budget', text: 'The vote passed 31 to 12 after a long debate.', date: at(25), author: { name: 'City Desk', username: 'citydesk', userid: null, url: null } }),
    buildItem({ id: 'rss_weather', type: 'status', title: undefined, text: 'Rain expected tonight: bring an umbrella to the concert.', date: at(60), author: { name: 'Weather Now', username: 'weathernow', userid: null, url: null } }),
  ]);
  // The festival story again, from X and Mastodon: merged into its card as duplicates.
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'twitter_1861', service: 'twitter', type: 'status', title: undefined, text: 'Tall ships in the harbour!', url: 'https://example.com/rss_harbour?utm_source=twitter', date: at(2), author: { name: 'Bob Sailor', username: 'bobsails', userid: null, url: null } }),
    buildItem({ id: 'mastodon_m1', service: 'mastodon', type: 'status', title: undefined, text: 'The parade was lovely', url: 'https://example.com/rss_harbour#top', date: at(1), author: { name: 'Ana', username: 'ana', userid: null, url: null } }),
  ]);
  await sluice.db.updateTable('collections').set({ dedupe: 'off' }).where('id', '=', sluice.tenant.collection.id).execute();
  await seedItems(
    sluice.db,
    sluice.tenant,
    [buildItem({ id: 'rss_rumour', title: 'Unconfirmed: headliner cancels', text: 'A post claims the headliner will not appear.', date: at(10), author: { name: 'Anonymous', username: 'anon', userid: null, url: null } })],
    'unpublished',
  );
}

/** Credentials of Acme News in several states of health, for the Connections screenshots. */
async function seedConnections(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const contractId = sluice.tenant.contract.id;
  const bodies = [
    { name: 'Newsroom X', service: 'twitter', bearerToken: 'AAAAAAAAAAAAAAAAAAAAAnewsroomk7Qz' },
    { name: 'Archive X', service: 'twitter', bearerToken: 'AAAAAAAAAAAAAAAAAAAAAarchive9fTe', default: false },
    { name: 'Brand Instagram', service: 'instagram', accessToken: 'EAAGm0PX4ZCpsBAexpiredtoken2Lw1', userId: '17841400008460056', expiresAt: new Date(Date.now() - 86_400_000).toISOString() },
    { name: 'Newsroom Bluesky', service: 'bluesky', identifier: 'newsroom.bsky.social', appPassword: 'abcd-efgh-ijkl-mnop' },
  ];
  const ids: string[] = [];
  for (const body of bodies) {
    const res = await sluice.app.inject({ method: 'POST', url: `/collection/credentials?access_token=${encodeURIComponent(sluice.user.token)}`, payload: { ...body, contractId } });
    ids.push((res.json() as { _id: string })._id);
  }
  const at = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  await sluice.db.updateTable('credentials').set({ lastUsed: at(45) }).where('id', '=', ids[0]!).execute();
  await sluice.db.updateTable('credentials').set({ status: 'failed', lastError: 'Error validating access token: Session has expired (OAuthException, code 190)', lastUsed: at(2 * 86_400) }).where('id', '=', ids[2]!).execute();
  await sluice.db.updateTable('credentials').set({ lastUsed: at(300) }).where('id', '=', ids[3]!).execute();
  await sluice.db.updateTable('credentials').set({ active: 0 }).where('id', '=', ids[1]!).execute();
}

/** The team of Acme News for the Team screenshots: an admin, an editor, a moderator who signed in, a viewer who never did, one pending invitation. */
async function seedTeam(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const contractId = sluice.tenant.contract.id;
  const hoursAgo = (hours: number) => Date.now() - hours * 3_600_000;
  const members = [
    { name: 'Ada Admin', username: 'ada', role: 'admin', signedIn: hoursAgo(2) },
    { name: 'Eli Editor', username: 'eli', role: 'editor', signedIn: hoursAgo(26) },
    { name: 'Mo Moderator', username: 'mo', role: 'moderator', signedIn: hoursAgo(0.2) },
    { name: 'Vic Viewer', username: 'vic', role: 'viewer', signedIn: null },
  ] as const;
  for (const member of members) {
    const user = await buildUser(sluice.db, { name: member.name, username: member.username, language: 'en' });
    await grant(sluice.db, user.consumer.id, contractId, undefined, member.role);
    await sluice.db.updateTable('consumers').set({ lastSignInAt: member.signedIn }).where('id', '=', user.consumer.id).execute();
  }
  await sluice.db.updateTable('consumers').set({ lastSignInAt: hoursAgo(0.1) }).where('id', '=', sluice.user.consumer.id).execute();
  await sluice.app.inject({ method: 'POST', url: `/collection/contracts/${contractId}/invitations?access_token=${encodeURIComponent(sluice.user.token)}`, payload: { name: 'Noor Night Desk', email: 'noor@newsroom.example.com', role: 'moderator' } });
}

/**
 * A week of views, impressions and clicks of World News for the Analytics screenshots: this hour's
 * through the public beacon (a wall embedded on two sites, one opened on its own, a display page),
 * flushed as the process would; the six days before written as the flush writes them (hourly rows).
 */
async function seedAnalytics(sluice: Awaited<ReturnType<typeof startConsole>>): Promise<void> {
  const { contract, collection } = sluice.tenant;
  const beacon = (body: Record<string, unknown>, ip: string) =>
    sluice.app.inject({ method: 'POST', url: `/v1/publication/${contract.slug}/beacon`, headers: { 'content-type': 'text/plain;charset=UTF-8' }, remoteAddress: ip, payload: JSON.stringify({ q: collection.slug, ...body }) });
  const items = ['rss_harbour', 'rss_council', 'rss_weather'];
  for (let i = 0; i < 12; i++) {
    const ip = `203.0.113.${i + 1}`;
    const origin = ['https://news.example.com', 'https://harbourfest.example', undefined][i % 3];
    await beacon({ page: 'wall', view: true, ...(origin ? { origin } : {}) }, ip);
    await beacon({ page: 'wall', impressions: items, clicks: i % 2 ? ['rss_harbour'] : i % 3 ? ['rss_council'] : [] }, ip);
  }
  for (let i = 0; i < 3; i++) await beacon({ page: 'display', view: true, impressions: items }, `198.51.100.${i + 1}`);
  await flushBeacons(sluice.app);
  const base = { contractId: contract.id, collectionId: collection.id };
  const rows = [];
  for (let day = 1; day <= 6; day++) {
    const hour = hourOf(Date.now() - day * DAY_MS);
    const views = 8 + ((day * 7) % 11);
    rows.push(
      { ...base, hour, kind: 'wall-view', key: 'https://news.example.com', count: views },
      { ...base, hour, kind: 'wall-view', key: '', count: Math.ceil(views / 3) },
      { ...base, hour, kind: 'display-view', key: '', count: day % 3 },
      { ...base, hour, kind: 'impression', key: 'rss_harbour', count: views * 2 },
      { ...base, hour, kind: 'impression', key: 'rss_council', count: views },
      { ...base, hour, kind: 'click', key: 'rss_harbour', count: Math.ceil(views / 4) },
      { ...base, hour, kind: 'click', key: 'rss_council', count: day % 2 },
      { ...base, hour, kind: 'author-click', key: 'Harbour Times', count: Math.ceil(views / 4) },
      { ...base, hour, kind: 'author-click', key: 'City Desk', count: day % 2 },
    );
  }
  await addCounts(sluice.db, rows);
}
