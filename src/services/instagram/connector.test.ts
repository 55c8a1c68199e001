import { describe, expect, it } from 'vitest';
import { useFakeApi, fixtureBytes, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { instagram, NO_LOCATION_SEARCH } from './connector.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const fetcher = api.fetcher;
const ENV = { INSTAGRAM_ACCESS_TOKEN: 'ig-token', INSTAGRAM_USER_ID: '17841406338772941' };
const ctx = (env: Record<string, string> = ENV) => ({ fetch: fetcher, now: NOW, services: loadConfig({ INSTAGRAM_API_URL: api.base, ...env }).services });
const input = (type: string, value: string): SourceInput => ({ id: 'a'.repeat(24), service: 'instagram', type, input: value });
const raw = (file: string) => ({ body: fixtureBytes('instagram', file), headers: { 'content-type': 'application/json' } });

describe('instagram: tag', () => {
  it('searches the hashtag once, reads recent media, and returns only unseen media on the next poll', async () => {
    api.respond = (req) => req.path === '/ig_hashtag_search' ? raw('ig_hashtag_search.json') : raw('hashtag_recent_media_p1.json');
    const first = await instagram.collect(input('tag', '#developers'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/ig_hashtag_search', '/17841562426109234/recent_media']);
    expect(api.requests[0]!.query.get('q')).toBe('developers');
    expect(api.requests[0]!.query.get('user_id')).toBe('17841406338772941');
    expect(api.requests[1]!.headers.authorization).toBe('Bearer ig-token');
    expect(first.items).toHaveLength(5);
    expect(first.items[0]).toEqual({
      // No permalink, medium or author: the item links to the tag's page.
      id: 'instagram_18088158883149835', service: 'instagram', type: 'image', text: '', tags: [], url: 'https://www.instagram.com/explore/tags/developers/',
      date: new Date(NOW).toISOString(), // hashtag media without a timestamp: first seen
      author: { name: null, username: null, userid: null, url: null }, media: null,
      kudos: { score: 804 + 8, instagram_likes: 804, instagram_comments: 8 },
    });
    expect(first.state).toMatchObject({ tag: 'developers', hashtagId: '17841562426109234' });

    api.requests.length = 0;
    const second = await instagram.collect(input('tag', 'developers'), first.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/17841562426109234/recent_media']);
    expect(second.items).toEqual([]);
  });

  it('maps captions with tags and media urls (top media page)', async () => {
    api.respond = () => raw('hashtag_top_media_p1.json');
    const { items } = await instagram.collect(input('tag', 'quokka'), { tag: 'quokka', hashtagId: '1' }, ctx());
    const quokka = items.find((i) => i.id === 'instagram_17842849828991925')!;
    expect(quokka).toMatchObject({ type: 'image', url: 'https://www.instagram.com/p/B8gonCEDBH0/', kudos: { score: 2030 + 60 } });
    expect(quokka.tags.slice(0, 3)).toEqual(['quokka', 'quokkas', 'perthlife']);
    expect(quokka.text).toContain('<a href="https://www.instagram.com/explore/tags/quokka/" rel="nofollow noopener">#quokka</a>');
    expect(quokka.media![0]).toMatchObject({ type: 'image', url: expect.stringMatching(/^https:\/\/scontent\.xx\.fbcdn\.net\/v\/t51\.2885-15\/84636247_/) });
  });
});

describe('instagram: user through Business Discovery', () => {
  it('maps a carousel with its children as media and the account as author', async () => {
    const carousel = fixtureJson('instagram', 'ig_media_carousel.json');
    api.respond = () => ({ body: { business_discovery: { id: '17841406338772941', username: 'ikroskun', name: 'Ikro', media: { data: [carousel] } }, id: '1' } });
    const { items } = await instagram.collect(input('user', '@ikroskun'), {}, ctx());
    expect(api.requests[0]!.path).toBe('/17841406338772941');
    expect(api.requests[0]!.query.get('fields')).toMatch(/^business_discovery\.username\(ikroskun\)\{id,username,name,media\.limit\(25\)\{/);
    expect(items[0]).toMatchObject({
      id: 'instagram_17896129349106152', type: 'image', text: 'ALBUM', date: '2021-07-26T10:45:20.000Z',
      url: 'https://www.instagram.com/p/CRyZpmrjYC4/',
      author: { name: 'Ikro', username: 'ikroskun', userid: '17841406338772941', url: 'https://www.instagram.com/ikroskun/' },
      kudos: { score: 1, instagram_likes: 1, instagram_comments: 0 },
    });
    expect(items[0]!.media!.map((m) => m.type)).toEqual(['image', 'image', 'embed']);
    expect((items[0]!.media![2] as { embed: string }).embed).toMatch(/^<video controls src="https:\/\/video-gmp1-1\.cdninstagram\.com\/.+&amp;.+" poster="https:\/\/scontent-gmp1-1\.cdninstagram\.com\/.+"><\/video>$/);
  });
});

describe('instagram: failures', () => {
  it('accepts location inputs but reports that Instagram has no location search', async () => {
    await expect(instagram.collect(input('location', 'Berlin'), {}, ctx())).rejects.toMatchObject({ permanent: true, message: NO_LOCATION_SEARCH });
    expect(api.requests).toEqual([]);
  });

  it('names each missing credential', async () => {
    await expect(instagram.collect(input('tag', 'x'), {}, ctx({}))).rejects.toThrow('set INSTAGRAM_ACCESS_TOKEN');
    await expect(instagram.collect(input('tag', 'x'), {}, ctx({ INSTAGRAM_ACCESS_TOKEN: 't' }))).rejects.toThrow('set INSTAGRAM_USER_ID');
  });

  it.each([
    [429, { error: { message: 'limit' } }, { 'retry-after': '120' }, false, 120_000],
    [400, { error: { message: 'Application request limit reached', code: 4 } }, { 'x-business-use-case-usage': '{"1":[{"call_count":100,"estimated_time_to_regain_access":30}]}' }, false, 1_800_000],
    [400, { error: { message: 'Invalid parameter', code: 100 } }, {}, true, undefined],
    [500, { error: { message: 'Unknown', code: 1 } }, {}, false, undefined],
  ])('HTTP %i is classified', async (status, body, headers, permanent, retryAfterMs) => {
    api.respond = () => ({ status, body, headers });
    const error = await instagram.collect(input('tag', 'x'), { tag: 'x', hashtagId: '1' }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});
