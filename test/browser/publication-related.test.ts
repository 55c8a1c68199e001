/**
 * The related widget in real Chromium (issue 36 point 4; docs/api.md#related-widget): a news site
 * on its own port embeds embed.js with `data-sluice-related` left empty on an article page; the
 * widget reads the page's canonical URL, Sluice fetches that article from the site, and the frame
 * shows the contract's items related to it (not the unrelated ones) in the layout asked; the
 * widget page is axe-core clean.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildItem, seedItems } from '../helper.ts';
import { expectAccessible } from './console-harness.ts';
import { browserMissing, launch, serve } from './harness.ts';

let browser: Browser;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  if (!browserMissing) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A news site whose article page embeds the related widget for itself (its canonical URL). */
async function newsSite(sluiceOrigin: string, contract: string, q: string, layout: string) {
  let port = 0;
  const article = () => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Solar village</title>
<link rel="canonical" href="http://127.0.0.1:${port}/news/solar-village"></head>
<body><header><a href="/">The Valley Courier</a></header><main><article><h1>Rooftop solar panels keep a village going through winter</h1>
<p>Kettlewick fitted solar panels to the school, the chapel and eleven farms this spring. Through the darkest weeks the panels and their batteries kept the lights on.</p>
<p>Engineer Marta Olsen said the batteries stored enough solar energy for three nights. Households now sell surplus solar power to the grid through a cooperative.</p>
</article><aside><h2>Related posts</h2><div id="related" data-sluice-contract="${contract}" data-sluice-q="${q}" data-sluice-layout="${layout}" data-sluice-related></div></aside></main>
<script src="${sluiceOrigin}/v1/embed.js"></script></body></html>`;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/news/solar-village')) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(article());
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${port}/news/solar-village?utm_source=feed#top`, canonical: `http://127.0.0.1:${port}/news/solar-village` };
}

describe.skipIf(browserMissing)('related widget', () => {
  it.each(['vertical', 'grid'])('shows the items related to the page it is on (%s layout), accessible', { timeout: 60_000 }, async (layout) => {
    const sluice = await serve({ ALLOW_PRIVATE_FETCH: 'true' });
    await seedItems(sluice.db, sluice.tenant, [
      buildItem({ id: 'rss_solar1', title: 'Solar panels on the school roof', text: 'Kettlewick school runs on solar panels and batteries' }),
      buildItem({ id: 'rss_solar2', title: 'Marta Olsen on batteries', text: 'Solar batteries through the winter, says the engineer' }),
      buildItem({ id: 'rss_foot', title: 'Football cup final tonight', text: 'The cup final kicks off at eight' }),
    ]);
    const site = await newsSite(sluice.origin, sluice.tenant.contract.slug, sluice.tenant.collection.slug, layout);
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    closers.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(site.url);
    const frame = (await (await page.waitForSelector('#related iframe')).contentFrame()) as Frame;
    await frame.waitForSelector('.card');
    // The widget asked about the canonical address, not the address with its tracking query.
    expect(new URL(frame.url()).searchParams.get('related')).toBe(site.canonical);
    expect(await page.getAttribute('#related iframe', 'title')).toBe('Related posts');
    expect(await frame.getAttribute('#wall', 'class')).toContain(`wall--${layout}`);
    const ids = await frame.$$eval('.card', (els) => els.map((el) => (el as HTMLElement).dataset.id));
    expect(ids.sort()).toEqual(['rss_solar1', 'rss_solar2']);
    expect(errors).toEqual([]);
    // The widget page itself, opened alone, is accessible.
    const alone = await context.newPage();
    await alone.goto(frame.url());
    await alone.waitForSelector('.card');
    await expectAccessible(alone);
  });
});
