/**
 * Item HTML served by the content and queue API (issue 30, point 10; docs/api.md#content-item):
 * whatever markup a feed carries, and however its entities were decoded, a served item holds no
 * `<script>`, no event handler attribute and no `javascript:` URL; legitimate markup (paragraphs,
 * https links and images) survives. Collected through a real poll of a real local feed server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { build, buildTenant } from '../helper.ts';
import { startSourceServer } from '../source-server.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The description's HTML (in CDATA, so the XML parser leaves it as written). */
const DESCRIPTION = [
  '<p>Harbour news with <a href="https://example.com/ok">a link</a> and <img src="https://example.com/harbour.png" alt="harbour"></p>',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">click</a>',
  '<a href=" JaVa&#x09;ScRiPt:alert(1)">spaced</a>',
  '<script>alert(2)</script>',
  '<div onmouseover="alert(3)">hover</div>',
  '<iframe src="javascript:alert(4)"></iframe>',
].join('');

const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed</title><link>https://example.com/</link><description>d</description>
<item><title>Title &lt;scr&lt;b&gt;ipt&gt;alert(5)&lt;/script&gt;</title><link>https://example.com/a1</link><guid isPermaLink="false">a1</guid><description><![CDATA[${DESCRIPTION}]]></description><pubDate>${new Date().toUTCString()}</pubDate></item>
<item><title>Second</title><link>javascript:alert(6)</link><guid isPermaLink="false">a2</guid><description>&lt;p onclick="alert(7)"&gt;plain&lt;/p&gt;</description><pubDate>${new Date().toUTCString()}</pubDate></item>
</channel></rss>`;

/** What no served item may hold: a script element, an event handler attribute, a javascript: URL. */
function expectInert(body: string) {
  expect(body).not.toMatch(/<\s*script/i);
  expect(body).not.toMatch(/<[^>]*\son[a-z]+\s*=/i);
  expect(body).not.toMatch(/java\s*script\s*:/i);
}

/** A tenant whose collection has an rss input of `feed` (served on loopback), polled once by a real collector. */
async function collectFeed(feed: string) {
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
  const tenant = await buildTenant(ctx.db, 'Harbour Gazette');
  const source = await startSourceServer(() => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed }));
  closers.push(() => source.close());
  const input = await ctx.app.inject({
    method: 'POST', url: '/collection/inputs', headers: { authorization: `Bearer ${tenant.token}` },
    payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: `${source.base}/feed.xml` },
  });
  expect(input.statusCode, input.body).toBe(201);
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  closers.push(() => collector.stop());
  await collector.tick();
  await collector.idle();
  return { ctx, tenant };
}

describe('item HTML in the content and queue API', () => {
  it('a feed with script, event handlers and javascript: URLs is served inert, its legitimate markup kept', async () => {
    const { ctx, tenant } = await collectFeed(RSS);

    const q = `q=${tenant.collection.slug}`;
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?${q}` });
    const queue = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?${q}&access_token=${encodeURIComponent(tenant.token)}` });
    for (const res of [content, queue]) {
      expect(res.statusCode, res.body).toBe(200);
      const items = res.json() as { id: string; title?: string; text: string; url: string }[];
      expect(items).toHaveLength(2);
      expectInert(res.body);
      const first = items.find((item) => item.text.includes('Harbour news'))!;
      expect(first.text).toContain('<p>Harbour news with <a href="https://example.com/ok">a link</a>');
      expect(first.text).toContain('<img src="https://example.com/harbour.png" alt="harbour" />');
      expect(first.text).toContain('hover');
    }
    // One item read by id (a moderator's view) is served the same way.
    const id = (content.json() as { id: string }[])[0]!.id;
    const one = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?${q}&id=${id}&access_token=${encodeURIComponent(tenant.token)}` });
    expect(one.statusCode, one.body).toBe(200);
    expectInert(one.body);
  });
});

/** Issue 34 point 4: hostile HTML, each escaped into an RSS description as a feed sends it. */
const HOSTILE = [
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="javascript&#58;alert(1)">x</a>',
  '<svg><script>alert(1)</script></svg>',
  '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
  '<p style="font-family: &quot;times&quot;" onclick="alert(1)">p</p>',
];
const escapeXml = (html: string) => html.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const HOSTILE_RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed</title><link>https://example.com/</link>
${HOSTILE.map((html, i) => `<item><title>The &lt;canvas&gt; element ${i}</title><link>https://example.com/h${i}</link><guid isPermaLink="false">h${i}</guid><description>&lt;p&gt;Kept ${i}&lt;/p&gt;${escapeXml(html)}</description><pubDate>${new Date().toUTCString()}</pubDate></item>`).join('\n')}
</channel></rss>`;

describe('item HTML sanitized at collection (issue 34)', () => {
  it('a hostile feed is stored and served without script, handler or javascript: URL; its titles are text', async () => {
    const { ctx, tenant } = await collectFeed(HOSTILE_RSS);

    // What is stored is already clean: the content API is not the only reader of it.
    const rows = await ctx.db.selectFrom('items').select('body').where('collectionId', '=', tenant.collection.id).execute();
    expect(rows).toHaveLength(HOSTILE.length);
    // The body column is text on SQLite and jsonb on PostgreSQL.
    for (const { body } of rows) expectInert(((typeof body === 'string' ? JSON.parse(body) : body) as { text: string }).text);

    const content = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}` });
    expect(content.statusCode, content.body).toBe(200);
    const items = content.json() as { title: string; text: string }[];
    expect(items).toHaveLength(HOSTILE.length);
    for (const item of items) {
      expectInert(item.text);
      expect(item.text).toMatch(/^<p>Kept \d<\/p>/);
      // Decoded once: the escaped tag of the title is text, not removed.
      expect(item.title).toMatch(/^The <canvas> element \d$/);
    }
    // The escaped script is text to read, not markup.
    expect(items.map((i) => i.text)).toContainEqual(expect.stringContaining('&lt;script&gt;alert(1)&lt;/script&gt;'));
  });
});
