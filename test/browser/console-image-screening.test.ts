/**
 * Image screening in the console (issue 37 point 2; src/console/app/screens/moderation-image.ts,
 * docs/filters.md#the-model) in Chromium: on the Moderation screen a picture whose screening
 * scores (`media[].moderation`) add up to `porn + hentai + sexy` above 0.5 is blurred (CSS filter)
 * with a "Show image" button, as is a held item's picture not classified yet; a low-scored one is
 * not. Revealing un-blurs that card only, by keyboard alone, sends nothing to the server and is
 * forgotten on reload. The pictures are PNGs made with sharp on a local image server, reaching
 * the browser as the console gets them: through Sluice's media proxy at QUEUE_URL
 * (docs/api.md#media-proxy; ALLOW_PRIVATE_FETCH lets it fetch from 127.0.0.1). Role and label
 * locators; axe clean; a 375 px screenshot (written to SCREENSHOT_DIR when set).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, signIn, startConsole, tabTo } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;
let images: SourceServer;

const MIN = 60_000;
const at = (ms: number) => new Date(Date.now() - ms).toISOString();
const scores = (porn: number, hentai: number, sexy: number) => ({ drawing: 0.01, hentai, neutral: Math.max(0, 0.99 - porn - hentai - sexy), porn, sexy });

/** A 480×320 PNG of two colour bands and a disc: stands in for a photo (the scores are seeded, not computed). */
const picture = (top: string, bottom: string) =>
  sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="480" height="320"><rect width="480" height="160" fill="${top}"/><rect y="160" width="480" height="160" fill="${bottom}"/><circle cx="240" cy="160" r="90" fill="#fff"/></svg>`)).png().toBuffer();

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole({ ALLOW_PRIVATE_FETCH: 'true' });
  const pictures: Record<string, Buffer> = { '/high.png': await picture('#d9467a', '#5b2a86'), '/low.png': await picture('#2f7fc1', '#3d9a5b'), '/pending.png': await picture('#c17a2f', '#6b4f2a') };
  images = await startSourceServer((req) => {
    const png = pictures[req.parsed.pathname];
    return png ? { body: png, headers: { 'content-type': 'image/png' } } : { status: 404 };
  });
  const image = (name: string, alt: string, moderation?: ReturnType<typeof scores>) => [{ type: 'image' as const, url: `${images.base}/${name}.png`, alt, ...(moderation && { moderation }) }];
  await seedItems(sluice.db, sluice.tenant, [
    buildItem({ id: 'rss_high', type: 'image', title: 'Late show at the pier', text: 'Tonight', media: image('high', 'Dancers on the pier', scores(0.62, 0.08, 0.21)), date: at(1 * MIN) }),
    buildItem({ id: 'rss_low', type: 'image', title: 'Harbour at dusk', text: 'Boats', media: image('low', 'Boats in the harbour', scores(0.01, 0.0, 0.02)), date: at(2 * MIN) }),
    buildItem({ id: 'rss_pending', type: 'image', title: 'Fresh upload', text: 'Just in', media: image('pending', 'A new picture'), date: at(3 * MIN) }),
  ]);
  // rss_pending as the screening leaves an item it has not classified yet: held, unpublished.
  const held = { set: { id: 'set-1', name: 'screen images' }, rule: 0, reason: 'awaiting image screening' };
  await sluice.db.updateTable('items').set({ state: 'unpublished', held: JSON.stringify(held) }).where('id', '=', 'rss_pending').execute();
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
  await images?.close();
});

const moderationPath = () => `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${sluice.tenant.collection.id}`;
const card = (page: Page, title: string) => page.getByRole('article', { name: title });
/** The computed CSS `filter` of a card's picture ('none' when not blurred). */
const filterOf = (where: Locator) => where.locator('img').evaluate((img) => getComputedStyle(img).filter);
/** Whether a card's picture arrived from the image server and was decoded. */
const loaded = (where: Locator) => where.locator('img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 480);

describe.skipIf(browserMissing)('console: image screening', () => {
  it('blurs the high-scored and the unclassified held picture, not the low one; Show image reveals one card only, by keyboard, and is not stored', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, moderationPath());
    const high = card(page, 'Late show at the pier');
    const low = card(page, 'Harbour at dusk');
    const pending = card(page, 'Fresh upload');
    await high.waitFor();
    await expect.poll(() => loaded(high)).toBe(true);
    await expect.poll(() => loaded(low)).toBe(true);
    expect(images.requests.map((r) => r.url)).toEqual(expect.arrayContaining(['/high.png', '/low.png']));

    // Blurred, with the score and the button; the alternative text is withheld while blurred.
    expect(await filterOf(high)).toBe('blur(48px)');
    expect(await high.getByText('May be explicit').textContent()).toBe('May be explicit: screening score 0.91');
    await high.getByRole('button', { name: 'Show image of Late show at the pier', exact: true }).waitFor();
    expect(await high.getByRole('img', { name: 'Dancers on the pier' }).count()).toBe(0);
    // Held and not classified yet: blurred too.
    expect(await filterOf(pending)).toBe('blur(48px)');
    expect(await pending.getByText('Not screened yet').count()).toBe(1);
    await pending.getByRole('button', { name: 'Show image of Fresh upload', exact: true }).waitFor();
    // Low-scored: as the wall shows it.
    expect(await filterOf(low)).toBe('none');
    expect(await low.getByRole('button', { name: /^Show image/ }).count()).toBe(0);
    await low.getByRole('img', { name: 'Boats in the harbour' }).waitFor();
    await expectAccessible(page);

    // Keyboard alone: Tab to the button, Enter. The reveal asks nothing of the server.
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(sluice.origin)) asked.push(`${request.method()} ${request.url()}`);
    });
    await tabTo(page, 'Show image of Late show at the pier');
    await page.keyboard.press('Enter');
    await high.getByRole('button', { name: 'Hide image of Late show at the pier', exact: true }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Hide image of Late show at the pier');
    expect(await filterOf(high)).toBe('none');
    await high.getByRole('img', { name: 'Dancers on the pier' }).waitFor();
    expect(asked).toEqual([]);
    if (process.env.SCREENSHOT_DIR) writeFileSync(join(process.env.SCREENSHOT_DIR, 'console-image-screening-desktop.png'), await page.screenshot({ fullPage: true }));
    // That card only.
    expect(await filterOf(pending)).toBe('blur(48px)');
    await expectAccessible(page);
    // Hide again, by keyboard.
    await page.keyboard.press('Enter');
    await high.getByRole('button', { name: 'Show image of Late show at the pier', exact: true }).waitFor();
    expect(await filterOf(high)).toBe('blur(48px)');

    // Revealed, then reloaded: blurred again (the choice was the page's, never stored).
    await high.getByRole('button', { name: 'Show image of Late show at the pier', exact: true }).click();
    expect(await filterOf(high)).toBe('none');
    await page.reload();
    await high.waitFor();
    expect(await filterOf(high)).toBe('blur(48px)');

    // The Held view shows the held card's picture blurred as well.
    await page.getByLabel('View').selectOption('true');
    await expect.poll(() => page.getByRole('list', { name: 'Queue of World News' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual(['Fresh upload']);
    expect(await filterOf(pending)).toBe('blur(48px)');
    await pending.getByRole('button', { name: 'Show image of Fresh upload', exact: true }).click();
    await pending.getByRole('img', { name: 'A new picture' }).waitFor();
    expect(await filterOf(pending)).toBe('none');
    await page.context().close();
  });

  it('at 375 px the blurred picture stays blurred with a 44 px Show image button; a screenshot', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, moderationPath());
    const high = card(page, 'Late show at the pier');
    await high.waitFor();
    await expect.poll(() => loaded(high)).toBe(true);
    expect(await filterOf(high)).toBe('blur(48px)');
    const button = high.getByRole('button', { name: 'Show image of Late show at the pier', exact: true });
    const box = (await button.boundingBox())!;
    expect(box.height).toBeGreaterThanOrEqual(44);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await high.scrollIntoViewIfNeeded();
    const shot = await page.screenshot();
    expect(shot.length).toBeGreaterThan(1000);
    if (process.env.SCREENSHOT_DIR) writeFileSync(join(process.env.SCREENSHOT_DIR, 'console-image-screening-375.png'), shot);
    await expectAccessible(page);
    await page.context().close();
  });
});
