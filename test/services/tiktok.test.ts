/**
 * The TikTok connector (docs/services.md#tiktok) against a local server answering with the
 * recorded payloads (test/fixtures/tiktok/, written after TikTok's documented video object and
 * error codes): the request, the mapping field by field, paging by cursor, and TikTok's failures.
 */
import { describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../source-server.ts';
import { loadConfig } from '../../src/config.ts';
import { SourceError, type SourceInput } from '../../src/services/connector.ts';
import { TIKTOK_FIELDS, tiktok } from '../../src/services/tiktok/connector.ts';
import { row } from '../../src/services/tiktok/row.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const p1 = fixtureJson('tiktok/video_list_p1.json');
const p2 = fixtureJson('tiktok/video_list_p2.json');
const server = useSourceServer(1500);
const ctx = (env: Record<string, string> = {}) => ({
  fetch: server.fetcher,
  services: loadConfig({ TIKTOK_API_URL: server.base, TIKTOK_ACCESS_TOKEN: 'act.tiktok-token', ...env }).services,
  now: NOW,
});
const input: SourceInput = { id: 'i1', service: 'tiktok', type: 'user', input: '@scout2015' };

describe('tiktok', () => {
  it('asks for the video list with its fields, the Bearer token and a JSON body', async () => {
    server.handle(() => ({ body: p1 }));
    await tiktok.collect(input, {}, ctx());
    const [req] = server.requests;
    expect(req!.method).toBe('POST');
    expect(req!.parsed.pathname).toBe('/v2/video/list/');
    expect(req!.parsed.searchParams.get('fields')).toBe(TIKTOK_FIELDS);
    expect(req!.headers.authorization).toBe('Bearer act.tiktok-token');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req!.body)).toEqual({ max_count: 20 });
  });

  it('maps the recorded video object field by field', async () => {
    server.handle(() => ({ body: p1 }));
    const { items, state } = await tiktok.collect(input, {}, ctx());
    expect(items.map((i) => i.id)).toEqual(['tiktok_7380080137682881835', 'tiktok_7379990000000000001']);
    expect(items[0]).toEqual({
      id: 'tiktok_7380080137682881835',
      service: 'tiktok',
      type: 'video',
      title: 'Learned a new Dance',
      text: 'I finally nailed the this dance. <a href="https://www.tiktok.com/tag/dance" rel="nofollow noopener">#dance</a> '
        + '<a href="https://www.tiktok.com/tag/fyp" rel="nofollow noopener">#fyp</a> <a href="https://www.tiktok.com/@tiktok" rel="nofollow noopener">@tiktok</a>',
      tags: ['dance', 'fyp'],
      url: 'https://www.tiktok.com/@scout2015/video/7380080137682881835',
      date: '2024-06-14T03:00:00.000Z',
      author: { name: null, username: 'scout2015', userid: null, url: 'https://www.tiktok.com/@scout2015' },
      media: [
        {
          type: 'embed',
          url: 'https://www.tiktok.com/@scout2015/video/7380080137682881835',
          embed: '<iframe width="640" height="360" src="https://www.tiktok.com/player/v1/7380080137682881835?music_info=1&amp;description=1&amp;autoplay=1&amp;loop=1" title="Learned a new Dance" frameborder="0" allowfullscreen></iframe>',
          duration: 15,
        },
        { type: 'image', url: 'https://p16-sign.tiktokcdn-us.com/tos-useast5-p-0068-tx/PHOTO_ID~c5_300x400.jpeg?x-expires=1718355600&x-signature=abc' },
      ],
      kudos: { score: 1024 + 56 + 2 * 12, tiktok_views: 20480, tiktok_likes: 1024, tiktok_comments: 56, tiktok_shares: 12 },
    });
    // An empty title is left out.
    expect(items[1]!.title).toBeUndefined();
    expect(state).toEqual({ latest: '2024-06-14T03:00:00.000Z', ids: ['7380080137682881835'] });
  });

  it.each([
    ['javascript:', { share_url: 'javascript:alert(1)//@scout2015', embed_link: 'javascript:alert(2)' }],
    ['data:', { share_url: 'data:text/html,<script>alert(1)</script>', embed_link: 'data:text/html,x' }],
    ['not a URL', { share_url: 'not a url', embed_link: '//www.tiktok.com/player/v1/1' }],
    ['javascript: share URL beside a good player', { share_url: 'javascript:alert(1)//@scout2015', embed_link: 'https://www.tiktok.com/player/v1/7380080137682881835' }],
  ])('a share URL and embed link that are not http(s) (%s) give no medium or link of another scheme: the player URL stands in', async (_name, urls) => {
    server.handle(() => ({ body: { data: { videos: [{ id: '7380080137682881835', create_time: 1718334000, ...urls }], has_more: false }, error: { code: 'ok' } } }));
    const [item] = (await tiktok.collect(input, {}, ctx())).items;
    expect(item!.url).toBe('https://www.tiktok.com/@scout2015');
    expect(item!.author).toMatchObject({ username: 'scout2015', url: 'https://www.tiktok.com/@scout2015' });
    expect(item!.media).toEqual([{ type: 'embed', url: 'https://www.tiktok.com/player/v1/7380080137682881835', embed: expect.stringContaining('src="https://www.tiktok.com/player/v1/7380080137682881835"') }]);
  });

  it('reads only what is new on the next poll, following the cursor while every video is new', async () => {
    server.handle(() => ({ body: p2 }));
    const first = await tiktok.collect(input, {}, ctx());
    expect(first.items.map((i) => i.id)).toEqual(['tiktok_7370000000000000002']);
    server.requests.length = 0;
    server.handle((req) => ({ body: JSON.parse(req.body).cursor ? p2 : p1 }));
    const second = await tiktok.collect(input, first.state, ctx());
    expect(server.requests.map((r) => JSON.parse(r.body))).toEqual([{ max_count: 20 }, { max_count: 20, cursor: 1718247600000 }]);
    expect(second.items.map((i) => i.id)).toEqual(['tiktok_7380080137682881835', 'tiktok_7379990000000000001']);
    server.requests.length = 0;
    const third = await tiktok.collect(input, second.state, ctx());
    expect(third.items).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['an invalid or expired token (access_token_invalid)', 401, 'error_access_token_invalid.json', {}, { permanent: true, retryAfterMs: undefined }, 'access_token_invalid'],
    ['the scope not granted (scope_not_authorized: private/forbidden)', 401, 'error_scope_not_authorized.json', {}, { permanent: true, retryAfterMs: undefined }, 'scope_not_authorized'],
    ['a rate limit without a reset header: its one-minute window', 429, 'error_rate_limit_exceeded.json', {}, { permanent: false, retryAfterMs: 60_000 }, 'rate_limit_exceeded'],
    ['a rate limit with Retry-After', 429, 'error_rate_limit_exceeded.json', { 'retry-after': '7' }, { permanent: false, retryAfterMs: 7000 }, 'rate_limit_exceeded'],
    ['a rate limit with x-ratelimit-reset', 429, 'error_rate_limit_exceeded.json', { 'x-ratelimit-reset': String(NOW / 1000 + 300) }, { permanent: false, retryAfterMs: 300_000 }, 'rate_limit_exceeded'],
  ] as const)('%s', async (_name, status, file, headers, expected, code) => {
    server.handle(() => ({ status, headers, body: fixtureJson(`tiktok/${file}`) }));
    const error = await tiktok.collect(input, {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject(expected);
    expect((error as Error).message).toContain(code);
  });

  it('an error code in a 200 answer fails the poll too', async () => {
    server.handle(() => ({ body: fixtureJson('tiktok/error_access_token_invalid.json') }));
    await expect(tiktok.collect(input, {}, ctx())).rejects.toMatchObject({ permanent: true, message: expect.stringContaining('connect the TikTok account again') });
  });

  it('not found (404) is permanent', async () => {
    server.handle(() => ({ status: 404, body: { data: {}, error: { code: 'not_found', message: 'not found', log_id: 'x' } } }));
    await expect(tiktok.collect(input, {}, ctx())).rejects.toMatchObject({ permanent: true });
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await tiktok.collect(input, {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('names the missing credential and calls nothing', async () => {
    const error = await tiktok.collect(input, {}, { ...ctx(), services: loadConfig({ TIKTOK_API_URL: server.base }).services }).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, message: 'tiktok is not configured: set TIKTOK_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });

  it.each([['scout2015', null], ['@scout_2015.x', null], ['a', 'must be'], ['@has space', 'must be'], ['https://www.tiktok.com/@x', 'must be'], ['x'.repeat(25), 'must be']])(
    'checks the input %s',
    (value, problem) => {
      const result = row.checkInput(value);
      if (problem === null) expect(result).toBeNull();
      else expect(result).toContain(problem);
    },
  );
});

describe('tiktok lookup (docs/services.md#re-verification)', () => {
  const lookup = tiktok.lookup!;

  it('queries up to 20 videos by id with a poll fields and maps them as collect does; a video left out is not gone', async () => {
    const counted = { ...(p1 as { data: { videos: Record<string, unknown>[] } }).data.videos[0], like_count: 2000, cover_image_url: 'https://p16-sign.tiktokcdn-us.com/fresh.jpeg' };
    server.handle(() => ({ body: { data: { videos: [counted] }, error: { code: 'ok', message: '', log_id: 'x' } } }));
    const { items, gone } = await lookup.lookup(input, ['tiktok_7380080137682881835', 'tiktok_7379990000000000001', 'vimeo_1'], ctx());
    expect(lookup.batch).toBe(20);
    const [req] = server.requests;
    expect(req!.method).toBe('POST');
    expect(req!.parsed.pathname).toBe('/v2/video/query/');
    expect(req!.parsed.searchParams.get('fields')).toBe(TIKTOK_FIELDS);
    expect(req!.headers.authorization).toBe('Bearer act.tiktok-token');
    expect(JSON.parse(req!.body)).toEqual({ filters: { video_ids: ['7380080137682881835', '7379990000000000001'] } });
    expect([...items.keys()]).toEqual(['tiktok_7380080137682881835']);
    const item = items.get('tiktok_7380080137682881835')!;
    expect(item.kudos).toMatchObject({ tiktok_likes: 2000 });
    expect(item.media![1]).toEqual({ type: 'image', url: 'https://p16-sign.tiktokcdn-us.com/fresh.jpeg' });
    expect(gone.size).toBe(0);
  });

  it('asks nothing for ids of another kind', async () => {
    expect(await lookup.lookup(input, ['vimeo_1'], ctx())).toEqual({ items: new Map(), gone: new Map() });
    expect(server.requests).toHaveLength(0);
  });

  it('an expired token and a rate limit fail the lookup as they fail a poll', async () => {
    server.handle(() => ({ status: 401, body: fixtureJson('tiktok/error_access_token_invalid.json') }));
    await expect(lookup.lookup(input, ['tiktok_1'], ctx())).rejects.toMatchObject({ permanent: true });
    server.handle(() => ({ status: 429, body: fixtureJson('tiktok/error_rate_limit_exceeded.json') }));
    await expect(lookup.lookup(input, ['tiktok_1'], ctx())).rejects.toMatchObject({ permanent: false, retryAfterMs: 60_000 });
  });
});
