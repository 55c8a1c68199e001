import { beforeAll, describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { authorizationFor, linkRel, mastodon, mastodonItem, parseMastodonInput } from './connector.ts';

interface Cassette { request: { uri: string }; headers: Record<string, string>; body: unknown }
const tagCassette = fixtureJson('mastodon/timelines_tag_cassette.json') as Cassette[];
const accountCassette = fixtureJson('mastodon/account_statuses_paged_cassette.json') as Cassette[];
const mediaCassette = fixtureJson('mastodon/status_with_media_cassette.json') as Cassette[];
const docsStatus = fixtureJson('mastodon/status_entity_docs_example.json') as Record<string, unknown>;
const NOW = Date.parse('2026-08-01T13:50:00Z');
/** The recorded response headers that matter here (the cassette's Link and rate-limit headers). */
const recorded = (c: Cassette) => ({ link: c.headers.link!, 'x-ratelimit-limit': c.headers['x-ratelimit-limit']!,
  'x-ratelimit-remaining': c.headers['x-ratelimit-remaining']!, 'x-ratelimit-reset': c.headers['x-ratelimit-reset']! });

let host: string;
const server = useSourceServer();
const fetcher = server.fetcher;
const ctx = () => ({ fetch: fetcher, services: loadConfig({}).services, now: NOW });
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'mastodon', type, input: value });

beforeAll(() => {
  host = new URL(server.base).host;
});

describe('mastodon input forms', () => {
  it.each([
    ['tag', 'hoot@mastodon.social', 'https://mastodon.social', 'hoot'],
    ['tag', '#hoot@mastodon.social', 'https://mastodon.social', 'hoot'],
    ['tag', 'https://mastodon.social/tags/hoot', 'https://mastodon.social', 'hoot'],
    ['user', 'Gargron@mastodon.social', 'https://mastodon.social', 'Gargron'],
    ['user', '@Gargron@mastodon.social', 'https://mastodon.social', 'Gargron'],
    ['user', 'https://mastodon.social/@Gargron', 'https://mastodon.social', 'Gargron'],
    ['user', 'http://127.0.0.1:3000/@Gargron', 'http://127.0.0.1:3000', 'Gargron'],
  ])('%s %s', (type, value, origin, name) => {
    expect(parseMastodonInput(type, value)).toMatchObject({ origin, name });
  });

  it.each([
    ['tag', 'http://mastodon.social/tags/hoot'],
    ['tag', 'https://mastodon.social/@Gargron'],
    ['user', 'Gargron'],
    ['tag', 'https://mastodon.social/tags/%E0%A4%A'], // a broken escape: a bad input, not a URIError
  ])('refuses %s %s for good', (type, value) => {
    expect(() => parseMastodonInput(type, value)).toThrow(expect.objectContaining({ permanent: true }));
  });
});

describe('mastodon', () => {
  it('maps the recorded tag timeline field by field and keeps the Link prev cursor', async () => {
    server.handle(() => ({ body: tagCassette[0]!.body, headers: recorded(tagCassette[0]!) }));
    const { items, state, nextRunAt } = await mastodon.collect(input('tag', `${server.base}/tags/hoot`), {}, ctx());
    expect(server.requests[0]!.url).toBe('/api/v1/timelines/tag/hoot?limit=40');
    expect(items).toEqual([{
      id: `mastodon_${host}:117020593741189701`,
      service: 'mastodon',
      type: 'status',
      text: '<p><a href="http://localhost:3000/tags/hoot" class="mention hashtag" rel="tag">#<span>hoot</span></a> (hashtag toot)</p>',
      tags: ['hoot'],
      url: 'http://localhost:3000/@mastodonpy_test_2/117020593741189701',
      date: '2026-08-01T13:55:55.867Z',
      author: { name: 'mastodonpy_test_2', username: 'mastodonpy_test_2', userid: '117020566092212359', url: 'http://localhost:3000/@mastodonpy_test_2' },
      media: null,
      kudos: { score: 0, mastodon_favourites: 0, mastodon_reblogs: 0, mastodon_replies: 0, mastodon_quotes: 0 },
      language: 'ja', // as recorded, although the toot is English: the source's own value wins (docs/api.md#language)
    }]);
    expect(state).toEqual({ minId: '117020593741189701' });
    expect(nextRunAt).toBeUndefined(); // 299 of 300 requests left

    server.handle(() => ({ body: [] }));
    const next = await mastodon.collect(input('tag', `${server.base}/tags/hoot`), state, ctx());
    expect(server.requests[1]!.url).toBe('/api/v1/timelines/tag/hoot?limit=40&min_id=117020593741189701');
    expect(next).toEqual({ items: [], state });
  });

  it('looks the account up once, then reads its statuses from the recorded pages', async () => {
    const page1 = accountCassette[0]!;
    const account = (page1.body as Array<{ account: unknown }>)[0]!.account; // the Account entity lookup returns
    server.handle((req) => (req.parsed.pathname === '/api/v1/accounts/lookup' ? { body: account } : { body: page1.body, headers: recorded(page1) }));
    const first = await mastodon.collect(input('user', `${server.base}/@mastodonpy_test`), {}, ctx());
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/v1/accounts/lookup?acct=mastodonpy_test',
      '/api/v1/accounts/117020565966271181/statuses?limit=40&exclude_replies=true',
    ]);
    expect(first.items.map((i) => [i.id, i.text, i.date])).toEqual([
      [`mastodon_${host}:117020580518794573`, '<p>Toot number 9!</p>', '2026-08-01T13:52:34.108Z'],
      [`mastodon_${host}:117020580511453871`, '<p>Toot number 8!</p>', '2026-08-01T13:52:33.996Z'],
      [`mastodon_${host}:117020580503743669`, '<p>Toot number 7!</p>', '2026-08-01T13:52:33.877Z'],
      [`mastodon_${host}:117020580496489811`, '<p>Toot number 6!</p>', '2026-08-01T13:52:33.768Z'],
      [`mastodon_${host}:117020580489281910`, '<p>Toot number 5!</p>', '2026-08-01T13:52:33.658Z'],
    ]);
    expect(first.items[0]).toMatchObject({ language: 'en', author: { username: 'mastodonpy_test', userid: '117020565966271181' } });
    // min_id from the recorded `Link: <…min_id=117020580518794573>; rel="prev"`
    expect(first.state).toEqual({ minId: '117020580518794573', accountId: '117020565966271181', accountOf: `${server.base}/@mastodonpy_test` });

    server.requests.length = 0;
    const page2 = accountCassette[1]!;
    server.handle(() => ({ body: page2.body, headers: recorded(page2) }));
    const second = await mastodon.collect(input('user', `${server.base}/@mastodonpy_test`), first.state, ctx());
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/v1/accounts/117020565966271181/statuses?limit=40&exclude_replies=true&min_id=117020580518794573',
    ]);
    expect(second.items).toHaveLength(5);
    expect(second.state).toMatchObject({ minId: '117020580518794573' }); // older page: the cursor never goes back
  });

  it('maps a recorded video attachment as an embed with its duration', () => {
    const item = mastodonItem(mediaCassette[0]!.body as Record<string, unknown>, 'localhost:3000')!;
    expect(item.type).toBe('video');
    expect(item.media).toEqual([{
      type: 'embed',
      url: 'http://localhost:3000/system/media_attachments/files/117/020/575/776/246/986/original/eeff5cc9d35a00aa.mp4',
      embed: '<video controls src="http://localhost:3000/system/media_attachments/files/117/020/575/776/246/986/original/eeff5cc9d35a00aa.mp4" poster="http://localhost:3000/system/media_attachments/thumbnails/117/020/575/776/246/986/original/fc13dbf5f7602144.jpg"></video>',
      duration: 7.3,
    }]);
  });

  it('maps the documented status with a link card and counts', () => {
    expect(mastodonItem(docsStatus, 'mastodon.social')).toMatchObject({
      id: 'mastodon_mastodon.social:103270115826048975',
      type: 'link',
      title: '‘I lost my £193,000 inheritance – with one wrong digit on my sort code’',
      url: 'https://mastodon.social/@Gargron/103270115826048975',
      date: '2019-12-08T03:48:33.901Z',
      author: { name: 'Eugen', username: 'Gargron', userid: '1', url: 'https://mastodon.social/@Gargron' },
      kudos: { score: 11 + 2 * 6 + 5, mastodon_favourites: 11, mastodon_reblogs: 6, mastodon_replies: 5, mastodon_quotes: 2 },
      language: 'en',
    });
  });

  it('reads the Link header', () => {
    expect(linkRel(tagCassette[0]!.headers.link, 'next')).toBe('http://localhost:3000/api/v1/timelines/tag/hoot?max_id=117020593741189701');
    expect(linkRel(undefined, 'prev')).toBeNull();
  });

  it('waits for the ISO reset time when the quota is used up', async () => {
    server.handle(() => ({ body: [], headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-08-01T13:55:00.070144Z' } }));
    const { nextRunAt } = await mastodon.collect(input('tag', `${server.base}/tags/hoot`), {}, ctx());
    expect(nextRunAt).toBe(Date.parse('2026-08-01T13:55:00.070Z'));
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await mastodon.collect(input('tag', `${server.base}/tags/hoot`), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});

describe("mastodon: a connected account's token goes to its own instance only", () => {
  it.each([
    ['https://mastodon.social', 'https://mastodon.social', true],
    ['mastodon.social', 'https://mastodon.social', true],
    ['https://mastodon.social/', 'https://mastodon.social', true],
    ['https://mastodon.social', 'https://fosstodon.org', false],
    ['https://mastodon.social', 'https://mastodon.social.evil.example', false],
    ['http://mastodon.social', 'https://mastodon.social', false],
    ['not a url at all', 'https://mastodon.social', false],
  ])('credential of %s, request to %s → token sent: %s', (instance, origin, sent) => {
    expect(authorizationFor({ accessToken: 'tok', instance }, origin)).toEqual(sent ? { authorization: 'Bearer tok' } : {});
  });
  it('sends nothing without a token or an instance', () => {
    expect(authorizationFor({ accessToken: undefined, instance: 'mastodon.social' }, 'https://mastodon.social')).toEqual({});
    expect(authorizationFor({ accessToken: 'tok', instance: undefined }, 'https://mastodon.social')).toEqual({});
  });
});
