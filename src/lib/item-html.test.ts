/** Items made inert for serving (item-html.ts): hostile markup in, nothing active out; legitimate markup kept. */
import { describe, expect, it } from 'vitest';
import { inShape } from '../item.ts';
import { inertEmbed, inertHtml, inertItem, plainTitle, webUrl } from './item-html.ts';

describe('inertHtml', () => {
  it.each([
    ['a script and its content', '<p>a</p><script>alert(1)</script>', '<p>a</p>'],
    ['an event handler', '<img src="https://x.example/i.png" onerror="alert(1)">', '<img src="https://x.example/i.png" />'],
    ['an unquoted event handler on an unknown image', '<img src=x onerror=alert(1)>', '<img src="x" />'],
    ['a javascript: link', '<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['a spaced, cased, entity-hidden javascript: link', '<a href=" JaVa&#x09;ScRiPt:alert(1)">x</a>', '<a>x</a>'],
    ['a data: image', '<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<img />'],
    ['a style element and attribute', '<style>p{}</style><p style="color:red">t</p>', '<p>t</p>'],
    ['forms and iframes', '<form action="https://x.example"><input name="a"></form><iframe src="https://x.example"></iframe>t', 't'],
    ['escaped markup stays text', '&lt;script&gt;alert(1)&lt;/script&gt;', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['escaped markup inside markup stays text', '<p>&lt;script&gt;</p>', '<p>&lt;script&gt;</p>'],
    ['structure kept', '<h2>T</h2><ul><li><a href="https://x.example/a" title="a">a</a></li></ul><table><tr><td>1</td></tr></table>', '<h2>T</h2><ul><li><a href="https://x.example/a" title="a">a</a></li></ul><table><tr><td>1</td></tr></table>'],
    ['mailto kept', '<a href="mailto:a@x.example">m</a>', '<a href="mailto:a@x.example">m</a>'],
    ['plain text returned as is', 'AT&T says "hi" & bye', 'AT&T says "hi" & bye'],
    ['inert markup returned as written', '<p>a<br>b <A HREF="https://x.example/a?b&amp;c" title="t">l</a> <img src="https://x.example/i.png" alt="i"></p>', '<p>a<br>b <A HREF="https://x.example/a?b&amp;c" title="t">l</a> <img src="https://x.example/i.png" alt="i"></p>'],
    ['an attribute glued to the tag name', '<p/onclick="x()">t</p>', '<p>t</p>'],
    ['an attribute on a formatting tag', '<b onmouseover="x()">t</b>', '<b>t</b>'],
    ['an unquoted href', '<a href=javascript:x()>t</a>', '<a>t</a>'],
    ['an entity-encoded scheme', '<a href="&#106;avascript:x()">t</a>', '<a>t</a>'],
    ['a tag name that starts like an inert one', '<bdo onclick="x()">t</bdo><img src="https://x.example/i.png" onerror="x()"><iframe src="https://x.example"></iframe>', '<bdo>t</bdo><img src="https://x.example/i.png" />'],
    ['a less-than sign as text', 'a < b <p>c</p>', 'a &lt; b <p>c</p>'],
  ])('%s', (_name, html, expected) => expect(inertHtml(html)).toBe(expected));
});

describe('inertEmbed', () => {
  it.each([
    ['an https player kept', '<iframe src="https://www.youtube.com/embed/x" allowfullscreen></iframe>', '<iframe src="https://www.youtube.com/embed/x" allowfullscreen></iframe>'],
    ['a javascript: player dropped', '<iframe src="javascript:alert(1)"></iframe>', '<iframe></iframe>'],
    ['an http player loses its src', '<video src="http://x.example/v.mp4"></video>', '<video></video>'],
    ['a widget script dropped, its quote kept', '<blockquote class="twitter-tweet"><p>t</p></blockquote><script async src="https://platform.twitter.com/widgets.js"></script>', '<blockquote><p>t</p></blockquote>'],
  ])('%s', (_name, html, expected) => expect(inertEmbed(html)).toBe(expected));
});

describe('plainTitle', () => {
  it.each([
    // Issue 34: a title is text, and an inert element named in it stays (was removed, the old double-decoding view of titles).
    ['an inert element named as text', 'The <canvas> element and <b>bold</b>', 'The <canvas> element and <b>bold</b>'],
    ['a tag with attributes', 'a <b onclick="x()">bold</b> <img src=x onerror=alert(1)>title', 'a bold</b> title'],
    ['a tag hidden in a tag', 'x <scr<b>ipt>alert(1)</script>', 'x scr<b>ipt>alert(1)'],
    ['a tag hidden in a removed tag', 'x <scr<img>ipt>alert(1)</script>', 'x alert(1)'],
    ['an active element', '<svg><script>alert(1)</script></svg> <iframe srcdoc="x">', 'alert(1) '],
    ['an unclosed tag opening', 'x <script', 'x script'],
    ['a comparison is text', 'a < b and c > d', 'a < b and c > d'],
    ['entities are text', 'AT&amp;T &lt;script&gt;', 'AT&amp;T &lt;script&gt;'],
  ])('%s', (_name, title, expected) => expect(plainTitle(title)).toBe(expected));
});

describe('webUrl', () => {
  it.each<[string | null, string | undefined]>([
    ['https://x.example/a', 'https://x.example/a'],
    ['http://x.example/a', 'http://x.example/a'],
    ['javascript:alert(1)', undefined],
    [' JavaScript:alert(1)', undefined],
    ['java\tscript:alert(1)', undefined],
    ['data:text/html,<script>', undefined],
    ['/relative', undefined],
    ['', undefined],
    [null, undefined],
  ])('%s → %s', (url, expected) => expect(webUrl(url)).toBe(expected));
});

describe('inertItem', () => {
  it('cleans text, title, URLs and media, in children too, and keeps the shape and key order', () => {
    const item = inShape({
      id: 'rss_1', service: 'rss', type: 'link', title: '<i onclick="x()">T</i>', text: '<p onclick="x()">t</p>', url: 'javascript:alert(1)', date: '2026-01-01T00:00:00.000Z',
      author: { name: 'A', username: null, userid: null, url: 'javascript:alert(2)' },
      media: [{ type: 'image', url: 'javascript:alert(3)' }, { type: 'image', url: 'https://x.example/i.png' }, { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }, { type: 'embed', url: 'vbscript:x', embed: '<script>x</script><video src="https://x.example/v.mp4"></video>' }],
      kudos: { score: 1 }, tags: [],
      children: [{ id: 'rss_2', service: 'rss', type: 'comment', text: '<script>y</script>c', url: 'https://x.example/c', date: '2026-01-01T00:00:00.000Z', author: {}, kudos: { score: 0 } }],
    });
    const inert = inertItem(item);
    expect(Object.keys(inert)).toEqual(Object.keys(item));
    expect(inert).toMatchObject({
      title: 'T</i>', text: '<p>t</p>', url: 'https://x.example/i.png', author: { name: 'A', url: null },
      media: [{ type: 'image', url: 'https://x.example/i.png' }, { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }, { type: 'embed', embed: '<video src="https://x.example/v.mp4"></video>' }],
    });
    expect(inert.media![2]).not.toHaveProperty('url');
    expect(inert.children![0]!.text).toBe('c');
    // A stored url no reader should follow (inShape keeps it when nothing better is there) is served empty.
    expect(inertItem({ ...item, url: 'javascript:alert(1)' }).url).toBe('');
  });
});
