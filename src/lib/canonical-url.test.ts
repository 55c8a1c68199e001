/** Canonical URLs (canonical-url.ts): real addresses from the fixtures and the services' documented forms. */
import { describe, expect, it } from 'vitest';
import { canonicalUrl, firstExternalLink } from './canonical-url.ts';

/** [address, canonical form]: every row is a pair of addresses that must compare equal (or the form itself). */
const SAME: [string, string][] = [
  // Scheme and host case, default ports, trailing slashes, fragments, www.
  ['HTTP://Example.COM/a/b/', 'https://example.com/a/b'],
  ['https://example.com:443/a', 'https://example.com/a'],
  ['http://example.com:80/a', 'https://example.com/a'],
  ['https://www.example.com/a#section-2', 'https://example.com/a'],
  ['https://example.com/', 'https://example.com'],
  ['https://example.com:8443/a', 'https://example.com:8443/a'],
  // Tracking parameters, sorted remaining parameters (test/fixtures/rss, /work/shared/fixtures/facebook).
  [
    'http://www.carbonbrief.org/us-could-cut-power-emissions-78-by-2030-using-existing-technology-says-study?utm_content=buffer53ab3&utm_medium=social&utm_source=twitter.com&utm_campaign=buffer',
    'https://carbonbrief.org/us-could-cut-power-emissions-78-by-2030-using-existing-technology-says-study',
  ],
  [
    'https://engineering.fb.com/2021/05/20/networking-traffic/peering-automation/?utm_source=social-facebook&utm_medium=fb4d&utm_campaign=organic&utm_content=post-url',
    'https://engineering.fb.com/2021/05/20/networking-traffic/peering-automation',
  ],
  ['https://www.theguardian.com/world/2024/jan/01/story?CMP=share_btn_tw&fbclid=IwAR0abc', 'https://theguardian.com/world/2024/jan/01/story?CMP=share_btn_tw'],
  ['https://example.com/a?gclid=EAIaIQobChMI&b=2&a=1', 'https://example.com/a?a=1&b=2'],
  ['https://example.com/a?mc_cid=1a2b3c&mc_eid=4d5e6f', 'https://example.com/a'],
  ['https://example.com/a?igshid=MzRlODBiNWFlZA==', 'https://example.com/a'],
  ['https://example.com/a?ref_src=twsrc%5Etfw', 'https://example.com/a'],
  ['https://example.com/a?msclkid=abc&utm_term=x&id=7', 'https://example.com/a?id=7'],
  ['https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f6', 'https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk'],
  ['https://i.guim.co.uk/img/media/0086836dee8f4435d59083e73cae8525cd22b8bd/0_47_3456_2073/master/3456.jpg?w=140&q=55&auto=format&usm=12&fit=max', 'https://i.guim.co.uk/img/media/0086836dee8f4435d59083e73cae8525cd22b8bd/0_47_3456_2073/master/3456.jpg?auto=format&fit=max&q=55&usm=12&w=140'],
  // YouTube (developers.google.com/youtube/player_parameters; test/fixtures/youtube).
  ['https://youtu.be/dQw4w9WgXcQ', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://youtu.be/dQw4w9WgXcQ?si=Rb2OtIvTxyz&t=42', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://www.youtube.com/watch?v=dQw4w9WgXcQ&feature=youtu.be', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://m.youtube.com/watch?v=dQw4w9WgXcQ&list=PL1', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://www.youtube.com/shorts/dQw4w9WgXcQ', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://www.youtube.com/embed/dQw4w9WgXcQ?autoplay=1', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['https://www.youtube.com/live/dQw4w9WgXcQ?feature=share', 'https://youtube.com/watch?v=dQw4w9WgXcQ'],
  ['http://www.youtube.com/channel/UCACHW4qVHoE4zqhHxcVE3Kw', 'https://youtube.com/channel/UCACHW4qVHoE4zqhHxcVE3Kw'],
  // X / Twitter (developer.x.com: status URLs; test/fixtures/twitter).
  ['https://x.com/TwitterDev/status/1460323737035677698', 'https://twitter.com/i/status/1460323737035677698'],
  ['https://twitter.com/TwitterDev/status/1460323737035677698?s=20&t=abc', 'https://twitter.com/i/status/1460323737035677698'],
  ['https://mobile.twitter.com/TwitterDev/status/1460323737035677698', 'https://twitter.com/i/status/1460323737035677698'],
  ['https://twitter.com/i/web/status/1460323737035677698', 'https://twitter.com/i/status/1460323737035677698'],
  ['https://x.com/TwitterDev', 'https://twitter.com/TwitterDev'],
  // Facebook, VK, imgur, Reddit, Vimeo: mobile hosts.
  ['https://m.facebook.com/story.php?story_fbid=10158&id=20531316728', 'https://facebook.com/story.php?id=20531316728&story_fbid=10158'],
  ['https://www.facebook.com/20531316728/posts/10158/', 'https://facebook.com/20531316728/posts/10158'],
  ['https://m.vk.com/wall-1_340364', 'https://vk.com/wall-1_340364'],
  ['http://m.imgur.com/w0XlVjp.jpg', 'https://imgur.com/w0XlVjp.jpg'],
  ['https://old.reddit.com/r/news/comments/abc123/title/', 'https://reddit.com/r/news/comments/abc123/title'],
  ['https://en.m.wikipedia.org/wiki/SimHash', 'https://en.wikipedia.org/wiki/SimHash'],
  // AMP: amp. hosts, /amp suffix, ?amp, the Google AMP cache (developers.google.com/amp/cache).
  ['https://amp.theguardian.com/world/2024/jan/01/story', 'https://theguardian.com/world/2024/jan/01/story'],
  ['https://www.bbc.co.uk/news/world-12345678/amp', 'https://bbc.co.uk/news/world-12345678'],
  ['https://example.com/2024/story/?amp', 'https://example.com/2024/story'],
  ['https://example.com/2024/story?amp=1', 'https://example.com/2024/story'],
  ['https://www.google.com/amp/s/www.bbc.co.uk/news/world-12345678.amp', 'https://bbc.co.uk/news/world-12345678'],
  ['https://www-bbc-co-uk.cdn.ampproject.org/c/s/www.bbc.co.uk/news/world-12345678/amp', 'https://bbc.co.uk/news/world-12345678'],
  // Feeds: real links kept as they are (test/fixtures/rss).
  ['http://feedproxy.google.com/~r/blogspot/lQlzL/~3/1tTBNHDMUtQ/migrate-from-mutatejobservice-to.html', 'https://feedproxy.google.com/~r/blogspot/lQlzL/~3/1tTBNHDMUtQ/migrate-from-mutatejobservice-to.html'],
  ['http://noticias.uol.com.br/ultimas/', 'https://noticias.uol.com.br/ultimas'],
  ['http://welcometoyouredoom.tumblr.com/post/113875925022', 'https://welcometoyouredoom.tumblr.com/post/113875925022'],
  ['https://mastodon.social/@Gargron/109318821117356215', 'https://mastodon.social/@Gargron/109318821117356215'],
];

/** Addresses that must stay apart. */
const APART: [string, string][] = [
  ['https://youtube.com/watch?v=dQw4w9WgXcQ', 'https://youtube.com/watch?v=9bZkp7q19f0'],
  ['https://example.com/a?id=1', 'https://example.com/a?id=2'],
  ['https://example.com/a', 'https://example.org/a'],
  ['https://twitter.com/i/status/1', 'https://twitter.com/i/status/2'],
  ['https://example.com/a/b', 'https://example.com/a'],
];

describe('canonicalUrl', () => {
  it('has at least 40 pairs', () => expect(SAME.length).toBeGreaterThanOrEqual(40));
  it.each(SAME)('%s → %s', (raw, canonical) => {
    expect(canonicalUrl(raw)).toBe(canonical);
    expect(canonicalUrl(canonical)).toBe(canonical);
  });
  it.each(APART)('%s ≠ %s', (a, b) => expect(canonicalUrl(a)).not.toBe(canonicalUrl(b)));
  it.each(['', 'not a url', 'ftp://example.com/a', 'javascript:alert(1)', 'https://', '/relative/path'])('%j has none', (raw) => {
    expect(canonicalUrl(raw)).toBeUndefined();
  });
});

describe('firstExternalLink', () => {
  it.each([
    // A tweet (twitter connector: entities expanded into anchors).
    ['Read this <a href="https://www.example.com/story?utm_source=twitter">example.com/story</a>', ['https://x.com/i/status/1'], 'https://www.example.com/story?utm_source=twitter'],
    // Mastodon: mentions and hashtags link to the instance; the article is the first other link.
    [
      '<p><span class="h-card"><a href="https://mastodon.social/@bob" class="u-url mention">@<span>bob</span></a></span> <a href="https://mastodon.social/tags/news">#<span>news</span></a> <a href="https://example.com/story">example.com/story</a></p>',
      ['https://mastodon.social/@alice/1'],
      'https://example.com/story',
    ],
    // A bare link in plain text.
    ['Great read: https://example.com/story.', ['https://bsky.app/profile/a'], 'https://example.com/story'],
    // Only links to the item's own service: none.
    ['<a href="https://twitter.com/someone">@someone</a> <a href="https://x.com/a/status/2">x.com/a/status/2</a>', ['https://x.com/i/status/1'], undefined],
    ['no links at all', ['https://example.com'], undefined],
    ['<a href="javascript:alert(1)">click</a>', [], undefined],
  ] as [string, string[], string | undefined][])('%s', (text, own, link) => expect(firstExternalLink(text, own)).toBe(link));
});
