import { describe, expect, it } from 'vitest';
import { failureCases, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { vk, vkItem, vkOwner } from './connector.ts';

// No recorded VK response exists (fixtures README, "Not copied"): the wall.get and
// newsfeed.search payloads below are built from the documented shape in docs/services.md#vk
// ({response:{count, items, profiles, groups}}, errors as {error:{error_code, error_msg}} in 200).
const NOW = Date.parse('2030-01-01T00:00:00Z');
const photoPost = {
  id: 2170, owner_id: -1, from_id: -1, date: 1700000000, post_type: 'post', is_pinned: 0,
  text: 'Новости [id100|Павел Дуров] #VK@apiclub и https://vk.com/dev & <b>',
  attachments: [{ type: 'photo', photo: { id: 1, owner_id: -1, sizes: [
    { type: 's', url: 'https://sun9-1.userapi.com/s.jpg', width: 75, height: 50 },
    { type: 'w', url: 'https://sun9-1.userapi.com/w.jpg', width: 1280, height: 853 },
    { type: 'm', url: 'https://sun9-1.userapi.com/m.jpg', width: 130, height: 87 } ] } }],
  likes: { count: 10 }, reposts: { count: 3 }, comments: { count: 4 }, views: { count: 900 },
  geo: { type: 'point', coordinates: '59.9343 30.3351', place: { title: 'Санкт-Петербург' } },
};
const videoPost = {
  id: 2171, owner_id: -1, from_id: 100, date: 1700000600, text: 'clip',
  attachments: [{ type: 'video', video: { id: 456239017, owner_id: -1, title: 'Clip "one"', duration: 95 } }],
  likes: { count: 1 }, reposts: { count: 0 }, comments: { count: 0 },
};
const pinnedOld = { ...photoPost, id: 5, date: 1600000000, is_pinned: 1 };
const wall = (items: unknown[], count = items.length) => ({ response: {
  count, items,
  profiles: [{ id: 100, first_name: 'Павел', last_name: 'Дуров', screen_name: 'durov' }],
  groups: [{ id: 1, name: 'VK API', screen_name: 'apiclub' }],
} });

const server = useSourceServer();
const fetcher = server.fetcher;
const ctx = (env: Record<string, string> = { VK_ACCESS_TOKEN: 'vk-token' }) => ({
  fetch: fetcher, services: loadConfig({ VK_API_URL: `${server.base}/method`, ...env }).services, now: NOW });
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'vk', type, input: value });


describe('vk', () => {
  it('reads a group wall and maps posts field by field', async () => {
    server.handle(() => ({ body: wall([photoPost, videoPost]) }));
    const { items, state } = await vk.collect(input('group', '1'), {}, ctx());
    const req = server.requests[0]!;
    expect(req.parsed.pathname).toBe('/method/wall.get');
    expect(Object.fromEntries(req.parsed.searchParams)).toEqual({
      owner_id: '-1', count: '100', offset: '0', filter: 'owner', extended: '1', v: '5.199', access_token: 'vk-token' });
    expect(items[0]).toEqual({
      id: 'vk_-1_2170',
      service: 'vk',
      type: 'image',
      text: 'Новости <a href="https://vk.com/id100" rel="nofollow noopener">Павел Дуров</a> '
        + '<a href="https://vk.com/feed?section=search&amp;q=%23VK" rel="nofollow noopener">#VK</a>@apiclub и '
        + '<a href="https://vk.com/dev" rel="nofollow noopener">https://vk.com/dev</a> &amp; &lt;b&gt;',
      tags: ['VK'],
      url: 'https://vk.com/wall-1_2170',
      date: '2023-11-14T22:13:20.000Z',
      author: { name: 'VK API', username: 'apiclub', userid: '-1', url: 'https://vk.com/apiclub' },
      media: [{ type: 'image', url: 'https://sun9-1.userapi.com/w.jpg', width: 1280, height: 853 }],
      kudos: { score: 10 + 6 + 4, vk_likes: 10, vk_reposts: 3, vk_comments: 4, vk_views: 900 },
      location: { latitude: 59.9343, longitude: 30.3351, name: 'Санкт-Петербург' },
    });
    expect(items[1]).toMatchObject({
      id: 'vk_-1_2171', type: 'video',
      author: { name: 'Павел Дуров', username: 'durov', userid: '100', url: 'https://vk.com/durov' },
      media: [{ type: 'embed', url: 'https://vk.com/video_ext.php?oid=-1&id=456239017', duration: 95,
        embed: '<iframe width="640" height="360" src="https://vk.com/video_ext.php?oid=-1&amp;id=456239017" title="Clip &quot;one&quot;" frameborder="0" allowfullscreen></iframe>' }],
    });
    expect(state).toEqual({ latest: '2023-11-14T22:23:20.000Z', ids: ['-1_2171'] });
  });

  it('pages by offset on later polls until it reaches seen posts, past an old pinned post', async () => {
    server.handle(() => ({ body: wall([photoPost]) }));
    const first = await vk.collect(input('user', 'durov'), {}, ctx());
    expect(server.requests[0]!.parsed.searchParams.get('domain')).toBe('durov');
    const newer = (id: number) => ({ ...videoPost, id, date: 1700001000 + id });
    server.handle((r) => ({ body: r.parsed.searchParams.get('offset') === '0'
      ? wall([pinnedOld, newer(1), newer(2)], 6) : wall([newer(3), photoPost], 6) }));
    const second = await vk.collect(input('user', 'durov'), first.state, ctx());
    expect(server.requests.slice(1).map((r) => r.parsed.searchParams.get('offset'))).toEqual(['0', '3']);
    expect(second.items.map((i) => i.id)).toEqual(['vk_-1_1', 'vk_-1_2', 'vk_-1_3']);
  });

  it('searches a tag with newsfeed.search, then from the newest date seen', async () => {
    server.handle(() => ({ body: { response: { ...wall([photoPost]).response, next_from: 'nf1' } } }));
    const first = await vk.collect(input('tag', '#VK'), {}, ctx());
    expect(Object.fromEntries(server.requests[0]!.parsed.searchParams)).toMatchObject({ q: '#VK', extended: '1' });
    expect(server.requests).toHaveLength(1);
    server.handle(() => ({ body: wall([]) }));
    await vk.collect(input('tag', 'VK'), first.state, ctx());
    expect(server.requests[1]!.parsed.searchParams.get('start_time')).toBe('1700000000');
  });

  it.each([
    [6, 'Too many requests per second', false, 1000],
    [9, 'Flood control', false, 600_000],
    [29, 'Rate limit reached', false, 3_600_000],
    [5, 'User authorization failed: invalid access_token (4).', true, undefined],
    [15, 'Access denied', true, undefined],
    [18, 'User was deleted or banned', true, undefined],
    [30, 'This profile is private', true, undefined],
  ])('reads error %i in a 200 body', async (code, message, permanent, retryAfterMs) => {
    server.handle(() => ({ body: { error: { error_code: code, error_msg: message, request_params: [] } } }));
    await expect(vk.collect(input('user', '1'), {}, ctx())).rejects.toMatchObject({ permanent, retryAfterMs, message: `vk error ${code}: ${message}` });
  });

  it.each([
    ['user', 'https://vk.com/durov', { domain: 'durov' }],
    ['user', '1', { owner_id: '1' }],
    ['group', '-1', { owner_id: '-1' }],
    ['group', 'apiclub', { domain: 'apiclub' }],
  ])('%s input %s', (type, value, params) => expect(vkOwner(type, value)).toEqual(params));

  it('names the missing credential and calls nothing', async () => {
    await expect(vk.collect(input('user', '1'), {}, ctx({}))).rejects.toMatchObject({ permanent: true, message: 'vk is not configured: set VK_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await vk.collect(input('user', '1'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});

// wall.getById with extended=1 answers {response:{items, profiles, groups}}
// (https://dev.vk.com/en/method/wall.getById), built here like the wall.get pages above.
describe('vk lookup (docs/services.md#re-verification)', () => {
  const lookup = vk.lookup!;
  const byId = (items: unknown[]) => ({ response: { items, profiles: wall([]).response.profiles, groups: wall([]).response.groups } });

  it('reads up to 100 posts of any walls with wall.getById, and maps them as collect does', async () => {
    const liked = { ...photoPost, likes: { count: 50 }, reposts: { count: 5 }, comments: { count: 7 }, views: { count: 4000 } };
    const stranger = { ...videoPost, id: 9999 };
    server.handle(() => ({ body: byId([liked, videoPost, stranger]) }));
    const { items, nextAt } = await lookup.lookup(input('tag', 'VK'), ['vk_-1_2170', 'vk_-1_2171', 'vk_100_3', 'vk_abc_1', 'twitter_1'], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(100);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.parsed.pathname).toBe('/method/wall.getById');
    expect(Object.fromEntries(req!.parsed.searchParams)).toEqual({ posts: '-1_2170,-1_2171,100_3', extended: '1', v: '5.199', access_token: 'vk-token' });
    // A post the lookup did not ask for is not taken; one VK no longer shows (100_3) is absent.
    expect(Object.fromEntries(kudos)).toEqual({
      'vk_-1_2170': { score: 50 + 10 + 7, vk_likes: 50, vk_reposts: 5, vk_comments: 7, vk_views: 4000 },
      'vk_-1_2171': vkItem(videoPost, [], [])!.kudos,
    });
    expect(nextAt).toBeUndefined();
  });

  it('asks nothing for ids that are not wall posts', async () => {
    expect((await lookup.lookup(input('user', '1'), ['vk_1', 'vk_-1_x', 'bluesky_did:plc:a_b'], ctx())).items.size).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    [6, 'Too many requests per second', false, 1000],
    [29, 'Rate limit reached', false, 3_600_000],
    [5, 'User authorization failed: invalid access_token (4).', true, undefined],
  ])('holds further lookups, or fails for good, on error %i in a 200 body', async (code, message, permanent, retryAfterMs) => {
    server.handle(() => ({ body: { error: { error_code: code, error_msg: message, request_params: [] } } }));
    await expect(lookup.lookup(input('user', '1'), ['vk_-1_2170'], ctx())).rejects.toMatchObject({ permanent, retryAfterMs, message: `vk error ${code}: ${message}` });
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await lookup.lookup(input('user', '1'), ['vk_-1_2170'], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('names the missing credential and calls nothing', async () => {
    await expect(lookup.lookup(input('user', '1'), ['vk_-1_2170'], ctx({}))).rejects.toMatchObject({ permanent: true, message: 'vk is not configured: set VK_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });
});
