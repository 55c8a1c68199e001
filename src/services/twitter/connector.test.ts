import { describe, expect, it } from 'vitest';
import { useFakeApi, type FakeResponse, fixtureBytes, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { goneTweets, twitter } from './connector.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const fetcher = api.fetcher;
const json = (file: string): FakeResponse => ({ body: fixtureBytes('twitter', file), headers: { 'content-type': 'application/json' } });
const cassette = (file: string): FakeResponse => {
  const [rec] = fixtureJson('twitter', file);
  return { body: rec.body, headers: rec.headers };
};


const ctx = (env: Record<string, string> = { TWITTER_BEARER_TOKEN: 'secret-token' }) =>
  ({ fetch: fetcher, now: NOW, services: loadConfig({ TWITTER_API_URL: api.base, ...env }).services });
const input = (type: string, value: string, extra: Partial<SourceInput> = {}): SourceInput =>
  ({ id: 'a'.repeat(24), service: 'twitter', type, input: value, ...extra });

describe('twitter: keyword search with includes', () => {
  it('maps tweets, authors, places and languages field by field', async () => {
    api.respond = () => json('search_recent_with_includes_docs_sample.json');
    const { items, state, nextRunAt } = await twitter.collect(input('keyword', 'snowman'), {}, ctx());
    expect(items.map((i) => i.id)).toEqual(['twitter_1276035977375477760', 'twitter_1275882613572583424', 'twitter_1275763727908798470', 'twitter_1275653067283759104']);
    const [first, second, third] = items;
    expect(first).toMatchObject({
      service: 'twitter',
      type: 'status', // its media key has no `includes.media` entry, its only URL is X's own
      url: 'https://x.com/happycamper/status/1276035977375477760',
      date: '2020-06-25T06:14:19.000Z',
      author: { name: 'Emily Waligoske 🏕', username: 'happycamper', userid: '63046977', url: 'https://x.com/happycamper' },
      language: 'en',
      media: null,
      kudos: { score: 0 },
    });
    expect(first!.text).toBe(
      '<a href="https://x.com/snowman" rel="nofollow noopener">@snowman</a> Ooo, thanks error message, public_metircs are not the metrics you’re looking for ' +
      '<a href="https://twitter.com/happycamper/status/1276035977375477760/photo/1" rel="nofollow noopener">pic.twitter.com/14TzLYBBXi</a>');
    expect(second).toMatchObject({ type: 'status', author: { username: 'snowman', name: 'Jim Moffitt', userid: '17200003' }, language: 'en' });
    expect(third!.language).toBeUndefined(); // `und`
    expect(state).toEqual({ sinceId: '1276035977375477760' });
    expect(nextRunAt).toBeUndefined();
    const [req] = api.requests;
    expect(req!.path).toBe('/2/tweets/search/recent');
    expect(req!.query.get('query')).toBe('snowman -is:retweet');
    expect(req!.query.get('expansions')).toBe('author_id,attachments.media_keys,geo.place_id');
    expect(req!.query.get('since_id')).toBeNull();
    expect(req!.headers.authorization).toBe('Bearer secret-token');
  });

  it('sends the newest id as since_id on the next poll and builds tag and location queries', async () => {
    api.respond = () => ({ body: { meta: { result_count: 0 } } });
    const { items, state } = await twitter.collect(input('tag', '#fresh'), { sinceId: '1276035977375477760' }, ctx());
    expect(items).toEqual([]);
    expect(state).toEqual({ sinceId: '1276035977375477760' });
    expect(api.requests[0]!.query.get('since_id')).toBe('1276035977375477760');
    expect(api.requests[0]!.query.get('query')).toBe('#fresh -is:retweet');
    await twitter.collect(input('location', 'Berlin', { latitude: 52.5, longitude: 13.4, radius: 5000 }), {}, ctx());
    expect(api.requests[1]!.query.get('query')).toBe('point_radius:[13.4 52.5 5km] -is:retweet');
  });
});

describe('twitter: user timeline through the user lookup', () => {
  it('looks the user up once, then reads the timeline with metrics and the owner as author', async () => {
    api.respond = (req) => req.path === '/2/users/by/username/TwitterDev'
      ? json('user_by_username_docs_sample.json')
      : json('users_tweets_public_metrics_docs_sample.json');
    const first = await twitter.collect(input('user', '@TwitterDev'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/2/users/by/username/TwitterDev', '/2/users/2244994945/tweets']);
    expect(api.requests[1]!.query.get('exclude')).toBe('retweets');
    expect(first.items).toHaveLength(5);
    expect(first.items[0]).toMatchObject({
      id: 'twitter_1364275610764201984',
      date: '2021-02-23T18:07:07.000Z',
      url: 'https://x.com/TwitterDev/status/1364275610764201984',
      author: { name: 'Twitter Dev', username: 'TwitterDev', userid: '2244994945', url: 'https://x.com/TwitterDev' },
      tags: ['TwitterAPI'],
      // likes 37 + 2 × (10 retweets + 1 quote) + 2 replies
      kudos: { score: 61, twitter_likes: 37, twitter_retweets: 10, twitter_replies: 2, twitter_quotes: 1 },
    });
    expect(first.items[0]!.text).toContain('<a href="https://x.com/hashtag/TwitterAPI" rel="nofollow noopener">#TwitterAPI</a>');
    expect(first.items[0]!.text).toContain('<a href="https://x.com/suhemparack" rel="nofollow noopener">@suhemparack</a>');
    expect(first.state).toMatchObject({ username: 'TwitterDev', sinceId: '1364275610764201984' });

    api.requests.length = 0;
    await twitter.collect(input('user', 'TwitterDev'), first.state, ctx());
    // With a cursor it follows next_token (the recording always has one) for at most 5 pages.
    expect(api.requests.map((r) => r.path)).toEqual(Array(5).fill('/2/users/2244994945/tweets'));
    expect(api.requests.every((r) => r.query.get('since_id') === '1364275610764201984')).toBe(true);
    expect(api.requests[1]!.query.get('pagination_token')).toBe('7140dibdnow9c7btw3w3itbygz8uu5pbs45oy6erjc2ls');
  });

  it('waits for x-rate-limit-reset when the window is used up, and keeps ids beyond 2^53 exact', async () => {
    const { body, headers } = cassette('users_tweets_tweepy_cassette.json');
    api.respond = (req) => req.path.startsWith('/2/users/by')
      ? json('user_by_username_docs_sample.json')
      : { body, headers: { ...headers, 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(NOW / 1000 + 600) } };
    const result = await twitter.collect(input('user', 'TwitterDev'), {}, ctx());
    expect(result.items.map((i) => i.id)).toEqual(['twitter_1577730467436138524', 'twitter_1565318587736285184']);
    expect(result.items[0]!.date).toBe(new Date(NOW).toISOString()); // no created_at in this recording
    expect(result.nextRunAt).toBe(NOW + 600_000);
  });
});

describe('twitter: media', () => {
  it('maps a video from includes.media to an embed with its duration', async () => {
    const tweet = fixtureJson('twitter', 'tweet_object_docs_sample.json');
    const video = fixtureJson('twitter', 'media_object_docs_sample.json');
    const includes = fixtureJson('twitter', 'includes_expansions_docs_sample.json');
    api.respond = () => ({ body: { data: [{ ...tweet, attachments: { media_keys: [video.media_key] } }], includes: { ...includes, media: [video] } } });
    const [item] = (await twitter.collect(input('keyword', 'x'), {}, ctx())).items;
    expect(item).toMatchObject({
      id: 'twitter_1212092628029698048', type: 'video', language: 'en', author: { username: 'TwitterDev' },
      media: [{ type: 'embed', url: 'https://x.com/i/status/1212092628029698048', duration: 46.947,
        embed: '<blockquote class="twitter-tweet"><a href="https://x.com/i/status/1212092628029698048">https://x.com/i/status/1212092628029698048</a></blockquote>' }],
      kudos: { score: 40 + 2 * 9 + 2 },
    });
  });
});

describe('twitter: failures', () => {
  it.each<[string, FakeResponse, Partial<SourceError>]>([
    ['429 with reset', { status: 429, headers: { 'x-rate-limit-reset': String(NOW / 1000 + 900) }, body: { title: 'Too Many Requests' } }, { permanent: false, retryAfterMs: 900_000 }],
    ['401', { status: 401, body: { title: 'Unauthorized', detail: 'Unauthorized' } }, { permanent: true, message: 'HTTP 401: Unauthorized' }],
    ['403', { status: 403, body: { detail: 'You are not permitted to use this endpoint' } }, { permanent: true }],
    ['500', { status: 500, body: 'oops' }, { permanent: false }],
    ['malformed JSON', { status: 200, body: '{"data": [' }, { permanent: false, message: 'malformed JSON' }],
  ])('%s', async (_name, response, expected) => {
    api.respond = () => response;
    const error = await twitter.collect(input('keyword', 'x'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    const { message, ...rest } = expected;
    expect(error).toMatchObject(rest);
    if (message) expect((error as Error).message.startsWith(message)).toBe(true);
  });

  it('reports an unknown user as permanent', async () => {
    api.respond = () => ({ body: { errors: [{ title: 'Not Found Error', detail: 'Could not find user with username: [nobody].' }] } });
    await expect(twitter.collect(input('user', 'nobody'), {}, ctx())).rejects.toMatchObject({
      permanent: true, message: 'twitter user nobody not found: Could not find user with username: [nobody].' });
  });

  it('names the missing credential and sends nothing', async () => {
    await expect(twitter.collect(input('keyword', 'x'), {}, ctx({}))).rejects.toMatchObject({
      permanent: true, message: 'twitter is not configured: set TWITTER_BEARER_TOKEN' });
    expect(api.requests).toEqual([]);
  });

  it('times out as a transient failure', async () => {
    api.respond = () => ({ body: undefined });
    await expect(twitter.collect(input('keyword', 'x'), {}, ctx())).rejects.toMatchObject({ kind: 'timeout' });
  });
});

describe('twitter lookup (docs/services.md#re-verification)', () => {
  const lookup = twitter.lookup!;
  const metrics = (id: string, likes: number) => ({ id, text: 'post', public_metrics: { like_count: likes, retweet_count: 1, reply_count: 2, quote_count: 0, impression_count: 10 } });

  it('asks only the posts among the ids, up to 100 at once, and takes only posts asked', async () => {
    api.respond = () => ({ body: { data: [metrics('1001', 5), metrics('9007199254740993', 7), metrics('555', 1)] } });
    const { items, nextAt } = await lookup.lookup(input('keyword', 'x'), ['twitter_1001', 'twitter_9007199254740993', 'twitter_abc', 'twitter_', 'youtube_ULBuIB9lHkc', 'mastodon_mastodon.social:1002'], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(100);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.path).toBe('/2/tweets');
    expect(api.requests[0]!.query.get('ids')).toBe('1001,9007199254740993');
    expect(api.requests[0]!.headers.authorization).toBe('Bearer secret-token');
    // 555 was not asked (an answer the lookup did not ask for is not taken).
    expect(Object.fromEntries(kudos)).toEqual({
      twitter_1001: { score: 5 + 2 + 2, twitter_likes: 5, twitter_retweets: 1, twitter_replies: 2, twitter_quotes: 0, twitter_views: 10 },
      twitter_9007199254740993: { score: 7 + 2 + 2, twitter_likes: 7, twitter_retweets: 1, twitter_replies: 2, twitter_quotes: 0, twitter_views: 10 },
    });
    expect(nextAt).toBeUndefined();
  });

  // X answers 200 with the posts it has in `data` and one entry per other id in `errors`
  // (https://docs.x.com/x-api/fundamentals/response-codes-and-errors#partial-errors); the error
  // objects below are hand-made in that documented shape (no recorded fixture holds them).
  it('says which posts X reports gone: Not Found Error deleted, Authorization Error protected, withheld; other errors say nothing', async () => {
    const error = (id: string, title: string, type: string) => ({ value: id, detail: `${title} for ${id}`, title, resource_type: 'tweet', parameter: 'ids', resource_id: id, type: `https://api.twitter.com/2/problems/${type}` });
    api.respond = () => ({ body: {
      data: [metrics('1001', 5), { ...metrics('1004', 1), withheld: { copyright: false, country_codes: ['DE'] } }],
      errors: [
        error('1002', 'Not Found Error', 'resource-not-found'),
        error('1003', 'Authorization Error', 'not-authorized-for-resource'),
        error('1005', 'Service Unavailable', 'service-unavailable'),
        error('9999', 'Not Found Error', 'resource-not-found'), // not asked
      ],
    } });
    const { items, gone } = await lookup.lookup(input('keyword', 'x'), ['twitter_1001', 'twitter_1002', 'twitter_1003', 'twitter_1004', 'twitter_1005'], ctx());
    expect([...items.keys()]).toEqual(['twitter_1001']);
    expect(items.get('twitter_1001')).toMatchObject({ text: 'post', service: 'twitter' });
    expect(Object.fromEntries(gone)).toEqual({ twitter_1002: 'deleted', twitter_1003: 'protected', twitter_1004: 'withheld' });
    // The lookup reads whole posts: a poll's fields, and `withheld`.
    expect(api.requests[0]!.query.get('tweet.fields')).toContain('withheld');
    expect(api.requests[0]!.query.get('expansions')).toBe('author_id,attachments.media_keys,geo.place_id');
  });

  it('asks nothing when no id is a post', async () => {
    expect((await lookup.lookup(input('keyword', 'x'), ['twitter_abc', 'twitter_1_2', 'bluesky_did:plc:x_3k'], ctx())).items.size).toBe(0);
    expect(api.requests).toEqual([]);
  });

  it('holds further lookups until x-rate-limit-reset when the window is spent, and throws on a 429', async () => {
    api.respond = () => ({ headers: { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(NOW / 1000 + 600) }, body: { data: [metrics('1001', 5)] } });
    expect((await lookup.lookup(input('keyword', 'x'), ['twitter_1001'], ctx())).nextAt).toBe(NOW + 600_000);
    api.respond = () => ({ status: 429, headers: { 'retry-after': '60' }, body: { title: 'Too Many Requests' } });
    await expect(lookup.lookup(input('keyword', 'x'), ['twitter_1001'], ctx())).rejects.toMatchObject({ permanent: false, retryAfterMs: 60_000 });
  });
});

// Hostile answers: only an error X documents as the post's own absence removes it.
describe('goneTweets (docs/services.md#re-verification)', () => {
  const asked = new Set(['twitter_1', 'twitter_2']);
  const e = (fields: Record<string, unknown>) => ({ errors: [{ parameter: 'ids', resource_type: 'tweet', ...fields }] });
  it.each([
    ['Not Found Error → deleted', e({ resource_id: '1', value: '1', title: 'Not Found Error', type: 'https://api.twitter.com/2/problems/resource-not-found' }), { twitter_1: 'deleted' }],
    ['Authorization Error → protected', e({ resource_id: '2', title: 'Authorization Error', type: 'https://api.twitter.com/2/problems/not-authorized-for-resource' }), { twitter_2: 'protected' }],
    ['an id not asked for', e({ resource_id: '3', title: 'Not Found Error' }), {}],
    ['another resource (the author, a media) not found', e({ resource_id: '1', resource_type: 'user', title: 'Not Found Error' }), {}],
    ['a server-side problem', e({ resource_id: '1', title: 'Service Unavailable', type: 'https://api.twitter.com/2/problems/service-unavailable' }), {}],
    ['no errors', {}, {}],
    ['errors not a list', { errors: 'Not Found Error' }, {}],
  ] as const)('%s', (_name, body, expected) => {
    expect(Object.fromEntries(goneTweets(body as Record<string, unknown>, asked))).toEqual(expected);
  });
});
