import { describe, expect, it } from 'vitest';
import { embed, hashtags, image, kudos, linkify, type LinkRules } from './normalize.ts';

const R = 'rel="nofollow noopener"';
const rules: LinkRules = { tag: (t) => `https://s.example/tag/${encodeURIComponent(t)}`, mention: (m) => `https://s.example/${m}` };

describe('linkify', () => {
  it.each<[string, string, LinkRules?]>([
    ['plain & <b>', 'plain &amp; &lt;b&gt;'],
    ['see https://a.example/x?q=1&r=2.', `see <a href="https://a.example/x?q=1&amp;r=2" ${R}>https://a.example/x?q=1&amp;r=2</a>.`],
    ['at example.com or www.example.com now', 'at example.com or www.example.com now'],
    ['#tag and #Ünïcode_1 but not #123 or a#b', `<a href="https://s.example/tag/tag" ${R}>#tag</a> and <a href="https://s.example/tag/%C3%9Cn%C3%AFcode_1" ${R}>#Ünïcode_1</a> but not #123 or a#b`, rules],
    ['hi @john.doe. mail a@b.example', `hi <a href="https://s.example/john.doe" ${R}>@john.doe</a>. mail a@b.example`, rules],
    ['#tag without a rule stays text', '#tag without a rule stays text'],
    ['a https://a.example/#frag b', `a <a href="https://a.example/#frag" ${R}>https://a.example/#frag</a> b`, rules],
    ['line\r\nbreak\nhere', 'line<br>\nbreak<br>\nhere'],
    ['javascript:alert(1) and ftp://x.example/f', 'javascript:alert(1) and ftp://x.example/f'],
    ['"><script>alert(1)</script>', '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['https://t.co/abc end', `<a href="https://expanded.example/a%22b" ${R}>expanded.example/a…</a> end`,
      { url: () => ({ href: 'https://expanded.example/a"b', label: 'expanded.example/a…' }) }],
    ['https://t.co/abc end', 'https://t.co/abc end', { url: () => null }],
    ['#x', '#x', { tag: () => 'javascript:alert(1)"' }],
  ])('%j', (text, html, linkRules) => {
    expect(linkify(text, linkRules)).toBe(html);
  });

  it('keeps a hostile tag link inside its attribute', () => {
    expect(linkify('#x', { tag: () => 'https://s.example/"onmouseover="x' })).toBe(`<a href="https://s.example/%22onmouseover=%22x" ${R}>#x</a>`);
  });
});

describe('hashtags', () => {
  it.each<[string | null, string[]]>([
    [null, []],
    ['#a #b #a', ['a', 'b']],
    ['#123 #1a #_ #ß', ['1a', '_', 'ß']],
    ['x#no &#39; #yes', ['yes']],
  ])('%j', (text, tags) => expect(hashtags(text)).toEqual(tags));
});

describe('kudos', () => {
  it.each<[Parameters<typeof kudos>, ReturnType<typeof kudos>]>([
    [['vk', { likes: 10, shares: 3, comments: 4 }, { likes: 10, reposts: 3, comments: 4, views: undefined }], { score: 20, vk_likes: 10, vk_reposts: 3, vk_comments: 4 }],
    [['tumblr', { likes: 7 }, { notes: 7 }], { score: 7, tumblr_notes: 7 }],
    [['x', {}, {}], { score: 0 }],
  ])('%j', (args, result) => expect(kudos(...args)).toEqual(result));
});

describe('media', () => {
  it('builds escaped embed markup of http(s) sources only', () => {
    expect(embed('iframe', 'https://p.example/e?a=1&b=2', { title: 'A "b"', duration: 3, url: 'https://p.example/w' })).toEqual([{
      type: 'embed', url: 'https://p.example/w', duration: 3,
      embed: '<iframe width="640" height="360" src="https://p.example/e?a=1&amp;b=2" title="A &quot;b&quot;" frameborder="0" allowfullscreen></iframe>',
    }]);
    expect(embed('video', 'https://p.example/v.mp4', { poster: 'https://p.example/p.jpg' })).toEqual([{
      type: 'embed', url: 'https://p.example/v.mp4', embed: '<video controls src="https://p.example/v.mp4" poster="https://p.example/p.jpg"></video>' }]);
    expect(embed('audio', 'https://p.example/a.mp3', { poster: 'https://p.example/p.jpg' })).toEqual([{
      type: 'embed', url: 'https://p.example/a.mp3', embed: '<audio controls src="https://p.example/a.mp3"></audio>' }]);
    expect(embed('video', 'https://p.example/v.mp4', { poster: 'javascript:x' })[0]).toMatchObject({ embed: '<video controls src="https://p.example/v.mp4"></video>' });
    expect(embed('iframe', 'javascript:alert(1)')).toEqual([]);
    expect(image('data:image/png;base64,AA')).toEqual([]);
    expect(image('https://p.example/i.jpg', 10, 20)).toEqual([{ type: 'image', url: 'https://p.example/i.jpg', width: 10, height: 20 }]);
  });
});
