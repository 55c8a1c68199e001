import { describe, expect, it } from 'vitest';
import { sourceKey, type SourceOf } from './sources.ts';

const rss = (input: string): SourceOf => ({ service: 'rss', type: 'feed', input });

describe('sourceKey: when two inputs read the same source', () => {
  const same: Array<[string, SourceOf, SourceOf]> = [
    ['a feed URL with www, http and a trailing slash', rss('https://example.org/feed'), rss('http://WWW.Example.org/feed/')],
    ['a feed URL with a tracking parameter and a fragment', rss('https://example.org/feed?b=2&a=1'), rss('https://example.org/feed?a=1&b=2&utm_source=x#top')],
    ['a feed URL with spaces around it', rss('https://example.org/feed'), rss('  https://example.org/feed ')],
    ['a twitter handle with @ and case', { service: 'twitter', type: 'user', input: 'Sluice' }, { service: 'twitter', type: 'user', input: '@sluice' }],
    ['an instagram tag with #', { service: 'instagram', type: 'tag', input: '#Election' }, { service: 'instagram', type: 'tag', input: 'election' }],
    ['a mastodon tag in three forms', { service: 'mastodon', type: 'tag', input: 'https://Mastodon.social/tags/Vote' }, { service: 'mastodon', type: 'tag', input: '#vote@mastodon.social' }],
    ['a mastodon account in two forms', { service: 'mastodon', type: 'user', input: 'https://mastodon.social/@Gargron' }, { service: 'mastodon', type: 'user', input: '@gargron@mastodon.social' }],
    ['a bluesky handle with case', { service: 'bluesky', type: 'user', input: 'Alice.bsky.social' }, { service: 'bluesky', type: 'user', input: 'alice.bsky.social' }],
    ['a linkedin organization as id and as URN', { service: 'linkedin', type: 'organization', input: '2414183' }, { service: 'linkedin', type: 'organization', input: 'urn:li:organization:2414183' }],
    ['a tiktok username with @ and case', { service: 'tiktok', type: 'user', input: '@Scout2015' }, { service: 'tiktok', type: 'user', input: 'scout2015' }],
    ['a location with the same circle', { service: 'twitter', type: 'location', input: 'Bern', latitude: 46.9, longitude: 7.4, radius: 1000 }, { service: 'twitter', type: 'location', input: 'bern', latitude: 46.9, longitude: 7.4, radius: 1000 }],
  ];
  it.each(same)('same: %s', (_name, a, b) => expect(sourceKey(a)).toBe(sourceKey(b)));

  const different: Array<[string, SourceOf, SourceOf]> = [
    ['two feed paths', rss('https://example.org/feed'), rss('https://example.org/feed2')],
    ['two feed queries', rss('https://example.org/feed?cat=1'), rss('https://example.org/feed?cat=2')],
    ['a handle and a keyword of one service', { service: 'twitter', type: 'user', input: 'sluice' }, { service: 'twitter', type: 'keyword', input: 'sluice' }],
    ['one handle on two services', { service: 'twitter', type: 'user', input: 'sluice' }, { service: 'tumblr', type: 'user', input: 'sluice' }],
    ['youtube channel ids differing in case', { service: 'youtube', type: 'channel', input: 'UCabc' }, { service: 'youtube', type: 'channel', input: 'UCABC' }],
    ['one mastodon tag on two instances', { service: 'mastodon', type: 'tag', input: 'vote@mastodon.social' }, { service: 'mastodon', type: 'tag', input: 'vote@chaos.social' }],
    ['a location with another radius', { service: 'twitter', type: 'location', input: 'Bern', latitude: 46.9, longitude: 7.4, radius: 1000 }, { service: 'twitter', type: 'location', input: 'Bern', latitude: 46.9, longitude: 7.4, radius: 2000 }],
    ['a text that is not a URL and one that is', rss('not a url'), rss('https://not/a/url')],
  ];
  it.each(different)('different: %s', (_name, a, b) => expect(sourceKey(a)).not.toBe(sourceKey(b)));
});
