/**
 * Screenshots of the publication for the README: the three layouts, plain and with a
 * customization (a dark theme in CSS, a heading added by JS through window.sluice).
 * Also the display page for event screens (docs/api.md#display-page) in each mode (`wall`,
 * `carousel`, `ticker`, set by the collection's `publication.display.mode`) at 1920×1080 and at
 * 3840×2160 (device scale factor 1; the 4K picture is saved at full size in a 256-colour palette
 * with sharp, to keep each PNG under about 1.5 MB).
 * Run with `npm run screenshots`; writes docs/publication-<layout>[-custom].png and
 * docs/display-<mode>-<1080|2160>.png.
 */
import { mkdirSync } from 'node:fs';
import sharp from 'sharp';
import type { Browser } from 'playwright-core';
import { expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { addCustomization, picture, typedItems } from '../publication-fixtures.ts';
import { launch, serve } from './harness.ts';

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

function moreItems() {
  return [
    buildItem({ id: 'flickr_market', service: 'flickr', type: 'image', title: undefined, text: 'Saturday market colours', date: minutesAgo(40), author: { name: 'Lena Ortiz', username: 'lenao', userid: null, url: null }, media: [{ type: 'image', url: picture('#facc15', '#dc2626', '<rect x="120" y="140" width="220" height="160" rx="18" fill="rgba(255,255,255,.3)"/>'), width: 800, height: 600 }], kudos: { score: 34 } }),
    buildItem({ id: 'twitter_update', service: 'twitter', type: 'status', title: undefined, text: 'Doors open at 9:00 tomorrow. Bring your badge and a good mood! <a href="https://t.example/x">#AcmeConf</a>', date: minutesAgo(55), author: { name: 'Acme Events', username: 'acmeevents', userid: null, url: null }, kudos: { score: 210, twitter_likes: 180, twitter_retweets: 15 } }),
    buildItem({ id: 'instagram_team', service: 'instagram', type: 'image', title: undefined, text: 'The team after the final rehearsal', date: minutesAgo(75), author: { name: 'Acme', username: 'acme', userid: null, url: null }, media: [{ type: 'image', url: picture('#06b6d4', '#4f46e5', '<circle cx="560" cy="200" r="70" fill="rgba(255,255,255,.4)"/>'), width: 800, height: 800 }], kudos: { score: 96 } }),
    buildItem({ id: 'rss_review', service: 'rss', type: 'link', title: 'Review: the new Acme app is fast, friendly and free', text: 'We spent a week with the redesigned app. Here is what we liked, and what still needs work.', url: 'https://reviews.example/acme-app', date: minutesAgo(130), author: { name: 'Tech Weekly', username: null, userid: null, url: null }, media: [{ type: 'image', url: picture('#64748b', '#0f172a', '<rect x="300" y="150" width="200" height="320" rx="28" fill="rgba(255,255,255,.5)"/>'), width: 800, height: 600 }], kudos: { score: 0 } }),
  ];
}

const DARK = `:root { --sluice-bg: #0b1020; --sluice-card: #151b2e; --sluice-text: #e6e9f2; --sluice-muted: #98a2b8;
  --sluice-accent: #f59e0b; --sluice-radius: 6px; --sluice-shadow: 0 0 0 1px #232b45; }
.card__service { background: #232b45; }
.wall-heading { margin: 0 0 16px; font: 700 20px/1.2 var(--sluice-font); color: var(--sluice-text); display: flex; gap: 10px; align-items: center; }
.wall-heading .live { font-size: 11px; letter-spacing: .08em; padding: 3px 8px; border-radius: 999px; background: #dc2626; color: #fff; }
.wall--vertical .wall-heading { max-width: 38rem; margin: 0 auto 16px; }`;
const HEADING = `var h = document.createElement('h1'); h.className = 'wall-heading';
h.innerHTML = '<span class="live">LIVE</span> #AcmeConf 2026';
var wall = document.getElementById('wall'); wall.insertBefore(h, wall.firstChild);
sluice.on('item', function (item) { if (item.type === 'video') item.element.classList.add('featured'); });`;

it('writes the README screenshots', { timeout: 240_000 }, async () => {
  mkdirSync('docs', { recursive: true });
  const browser = await launch();
  try {
    for (const custom of [false, true]) {
      const sluice = await serve();
      await seedItems(sluice.db, sluice.tenant, [...typedItems(), ...moreItems()]);
      if (custom) {
        await addCustomization(sluice.db, sluice.tenant.contract.id, { name: 'dark', type: 'css', data: DARK });
        await addCustomization(sluice.db, sluice.tenant.contract.id, { name: 'heading', type: 'js', data: HEADING });
      }
      for (const [layout, width, height] of [['grid', 1200, 900], ['vertical', 760, 1100], ['horizontal', 1200, 460]] as const) {
        const page = await browser.newPage({ viewport: { width, height } });
        await page.goto(sluice.wallUrl(layout));
        await page.waitForSelector('.card');
        await page.screenshot({ path: `docs/publication-${layout}${custom ? '-custom' : ''}.png` });
        if (layout === 'grid' && !custom) {
          await page.click('[data-id="rss_story"] .card__title a');
          await page.screenshot({ path: 'docs/publication-overlay.png' });
        }
        await page.close();
      }
      await sluice.app.close();
    }
    await displayShots(browser);
  } finally {
    await browser.close();
  }
  expect(true).toBe(true);
});

/** The display page in each mode at 1080p and 2160p, the header with a hashtag and a QR code. */
async function displayShots(browser: Browser): Promise<void> {
  for (const mode of ['wall', 'carousel', 'ticker'] as const) {
    const sluice = await serve();
    const { tenant, origin } = sluice;
    const res = await sluice.app.inject({
      method: 'PATCH',
      url: `/collection/collections/${tenant.collection.id}?access_token=${encodeURIComponent(tenant.token)}`,
      payload: { publication: { display: { mode, perSlide: mode === 'carousel' ? 3 : 1, header: '#AcmeConf 2026', qrUrl: 'https://acme.example/conf' } } },
    });
    expect(res.statusCode, res.body).toBe(200);
    await seedItems(sluice.db, tenant, [...typedItems(), ...moreItems()]);
    for (const [width, height] of [[1920, 1080], [3840, 2160]] as const) {
      const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
      const page = await context.newPage();
      await page.goto(`${origin}/v1/publication/${tenant.contract.slug}/display?q=${tenant.collection.slug}`);
      await page.getByRole('heading', { name: '#AcmeConf 2026', level: 1 }).waitFor();
      await page.locator('.display__items .card').first().waitFor();
      // The cards fade in: take the picture once their animations have finished.
      await page.evaluate(() => Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished)));
      const shot = await page.screenshot();
      const path = `docs/display-${mode}-${height}.png`;
      // The 4K picture keeps its 3840×2160 pixels in a 256-colour palette (sharp's libimagequant), about a
      // third of the full-colour PNG's bytes.
      await sharp(shot).png(width > 1920 ? { palette: true, compressionLevel: 9 } : { compressionLevel: 9 }).toFile(path);
      await context.close();
    }
    await sluice.app.close();
  }
}
