/**
 * Faithful feed HTML, sanitized once (issue 34 point 4; docs/services.md#rss): the entity and media
 * cases of the fixture files as tables (titles, text, media, dates, bases), and hostile HTML as
 * the attack. Pure: `parseFeed` over the bytes of the files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanHtml } from '../../lib/sanitize.ts';
import { parseDate, parseFeed } from './feed.ts';

const FIXTURES = new URL('../../../test/fixtures/rss/', import.meta.url);
const FEED_URL = 'https://example.org/feeds/markup.xml';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const items = (file: string) => parseFeed(readFileSync(new URL(file, FIXTURES)), undefined, FEED_URL, NOW).items;
const rss = items('issue34-entities-media.rss');
const atom = items('issue34-xhtml-base.atom');
const all = [...rss, ...atom];
const byTitle = (title: string) => all.find((i) => i.title === title)!;

describe('titles: text, entities decoded once', () => {
  it.each([
    // `&lt;canvas&gt;` in RSS is the text "<canvas>", not a tag to remove ("The element").
    ['issue34-entities-media.rss', 0, 'The <canvas> element'],
    // A numeric character reference is decoded by the XML reading, once.
    ['issue34-entities-media.rss', 1, 'Escaped script ’s text'],
    // Atom type="text": `&lt;b&gt;` is text.
    ['issue34-xhtml-base.atom', 0, 'A <b> tag as text'],
    // Atom type="html": the HTML's text (its `&lt;html&gt;` is the text "<html>").
    ['issue34-xhtml-base.atom', 1, 'Typed <html>'],
  ])('%s #%i → %s', (file, index, title) => expect(items(file)[index]!.title).toBe(title));

  it('the feed title likewise', () => {
    expect(parseFeed(readFileSync(new URL('issue34-entities-media.rss', FIXTURES)), undefined, FEED_URL, NOW).title).toBe('Markup &amp; Media');
    expect(parseFeed(readFileSync(new URL('issue34-xhtml-base.atom', FIXTURES)), undefined, FEED_URL, NOW).title).toBe('Prefixed & based');
  });
});

describe('text: HTML decoded once, then parsed as HTML; Atom text as text; XHTML without prefixes', () => {
  it.each([
    // An XML sample in <pre> stays text; `&amp;quot;` in an attribute does not end it (the style
    // attribute is then dropped by the allow-list, its paragraph kept).
    ['The <canvas> element', '<p>Serif &amp; sans</p><pre>&lt;feed xmlns="http://www.w3.org/2005/Atom"&gt;&lt;/feed&gt;</pre>'],
    // An escaped `&lt;script&gt;` is text; the real <script> is removed at collection.
    ['Escaped script ’s text', '<p>Say &lt;script&gt;alert(1)&lt;/script&gt; to show a tag.</p>'],
    // type="xhtml" with a prefixed namespace: prefixes gone, text escaped again.
    ['A <b> tag as text', '<p>Read <a href="https://example.net/news/2025/story.html">the story</a> &lt;tag&gt; &amp; more<br /><img src="https://example.net/pics/a.png" alt="a" /></p>'],
    // type="text": text, escaped.
    ['Typed <html>', '1 &lt; 2 &amp;&amp; &lt;i&gt;not italic&lt;/i&gt;'],
    // type="html": escaped HTML decoded once by the XML reading, then HTML.
    ['Escaped HTML', '<p>An <a href="https://example.net/about">about</a> page, &lt;pre&gt; as text</p>'],
  ])('%s', (title, text) => expect(byTitle(title).text.startsWith(text) ? text : byTitle(title).text).toBe(text));

  it('no prefix or namespace declaration is left', () => {
    for (const item of atom) expect(item.text).not.toMatch(/<\/?h:|xmlns/);
  });
});

describe('media: a known player given only as media:player is a video embed', () => {
  it.each([
    ['A Vimeo film', 'video', '<iframe width="640" height="360" src="https://player.vimeo.com/video/76979871" frameborder="0" allowfullscreen></iframe>'],
    ['A YouTube video', 'video', '<iframe width="640" height="360" src="https://www.youtube.com/embed/M7lc1UVf-VE" frameborder="0" allowfullscreen></iframe>'],
    // A player not on the list of known players is not framed.
    ['An unknown player', 'link', null],
  ])('%s → %s', (title, type, embed) => {
    const item = byTitle(title);
    expect(item.type).toBe(type);
    expect(item.media?.find((m) => m.type === 'embed')?.embed ?? null).toBe(embed);
  });
});

describe('dates: truncated zone offsets and other forms', () => {
  it.each([
    ['Tue, 10 Jun 2025 08:00:00 +00:0', '2025-06-10T08:00:00.000Z'],
    ['2025-06-11T09:30:00+00:0', '2025-06-11T09:30:00.000Z'],
    ['2025-06-11T09:30:00+02:0', '2025-06-11T07:30:00.000Z'],
    ['2025-06-11T09:30:00-05:3', '2025-06-11T15:00:00.000Z'],
    ['2025-06-11T09:30:00+00:00', '2025-06-11T09:30:00.000Z'],
    ['2025-06-11T09:30:00Z', '2025-06-11T09:30:00.000Z'],
    ['Thu, 12 Jun 2025 10:00:00 +0200', '2025-06-12T08:00:00.000Z'],
    ['Fri, 13 Jun 2025 10:00:00 GMT', '2025-06-13T10:00:00.000Z'],
  ])('%s → %s', (text, iso) => expect(parseDate(text)?.toISOString()).toBe(iso));

  it.each([
    ['issue34-entities-media.rss', 0, '2025-06-10T08:00:00.000Z'],
    ['issue34-entities-media.rss', 1, '2025-06-11T09:30:00.000Z'],
    ['issue34-xhtml-base.atom', 0, '2025-06-12T07:00:00.000Z'],
  ])('%s #%i is dated %s', (file, index, iso) => expect(items(file)[index]!.date).toBe(iso));
});

describe('bases: xml:base, else the channel link, else the feed URL', () => {
  const noLink = (description: string, base = '') => parseFeed(new TextEncoder().encode(
    `<rss version="2.0"><channel${base}><title>T</title><item><guid>g</guid><description>${description}</description></item></channel></rss>`),
  undefined, FEED_URL, NOW).items[0]!.text;
  it.each([
    // The entry's xml:base (relative, resolved against the feed's own): href, src.
    ['xml:base', atom[0]!.text, 'href="https://example.net/news/2025/story.html"'],
    ['xml:base, root-relative', atom[0]!.text, 'src="https://example.net/pics/a.png"'],
    // No xml:base: the channel's link (https://example.org/blog/), not the feed's URL: href, src, srcset.
    ['channel link', rss[0]!.text, 'href="https://example.org/blog/posts/next"'],
    ['channel link, root-relative', rss[0]!.text, 'src="https://example.org/img/canvas.png"'],
    ['channel link, srcset', rss[0]!.text, 'srcset="https://example.org/blog/canvas-2x.png 2x"'],
    // Neither: the feed's URL.
    ['feed URL', noLink('&lt;a href="b"&gt;b&lt;/a&gt;'), 'href="https://example.org/feeds/b"'],
    ['channel xml:base', noLink('&lt;a href="b"&gt;b&lt;/a&gt;', ' xml:base="https://example.com/x/"'), 'href="https://example.com/x/b"'],
  ])('%s', (_name, text, attribute) => expect(text).toContain(attribute));
});

/** What collected HTML may never hold: a script element, an event handler attribute, a javascript: URL, a frame. */
function expectInert(html: string) {
  expect(html).not.toMatch(/<\s*script/i);
  expect(html).not.toMatch(/<[^>]*\son[a-z]+\s*=/i);
  expect(html).not.toMatch(/java\s*script\s*:/i);
  expect(html).not.toMatch(/<\s*(iframe|svg|object|embed|style)/i);
}

/** Hostile HTML, each as a feed would escape it into an RSS description. */
const VECTORS = [
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<img src="https://x.example/a.png" onload="alert(1)">',
  '<img src="https://x.example/a.png" srcset="javascript:alert(1) 1x, https://x.example/b.png 2x">',
  '<a href="javascript:alert(1)">x</a>',
  '<a href=" JaVa&#x09;ScRiPt:alert(1)">x</a>',
  '<a href="javascript&#58;alert(1)">x</a>',
  '<a href="javascript&colon;alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<svg><script>alert(1)</script></svg>',
  '<svg onload=alert(1)>',
  '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<p style="font-family: &quot;times&quot;" onclick="alert(1)">p</p>',
  '<div onmouseover="alert(1)">hover</div>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<object data="javascript:alert(1)"></object>',
  '<form action="javascript:alert(1)"><button>b</button></form>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<!--<img src=x onerror=alert(1)>-->',
  '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">d</a>',
];

describe('hostile HTML is sanitized at collection', () => {
  const escape = (html: string) => html.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  it.each(VECTORS)('RSS description %s', (html) => {
    const [item] = parseFeed(new TextEncoder().encode(
      `<rss version="2.0"><channel><title>T</title><link>https://example.org/</link><item><guid>g</guid><description>${escape(html)}</description></item></channel></rss>`),
    undefined, FEED_URL, NOW).items;
    expectInert(item!.text);
  });

  it.each(VECTORS)('Atom html content in CDATA %s', (html) => {
    const [item] = parseFeed(new TextEncoder().encode(
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>e</id><title>E</title><content type="html"><![CDATA[${html}]]></content></entry></feed>`),
    undefined, FEED_URL, NOW).items;
    expectInert(item!.text);
  });

  it.each(VECTORS)('the one allow-list (cleanHtml) %s', (html) => expectInert(cleanHtml(html)));

  it('keeps the legitimate markup', () => {
    expect(cleanHtml('<p>a <a href="https://x.example/">l</a> <img src="https://x.example/i.png" alt="i"></p>'))
      .toBe('<p>a <a href="https://x.example/">l</a> <img src="https://x.example/i.png" alt="i" /></p>');
  });
});
