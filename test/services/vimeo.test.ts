import { describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../source-server.ts';
import { loadConfig } from '../../src/config.ts';
import { SourceError, type SourceInput } from '../../src/services/connector.ts';
import { FetchError } from '../../src/collect/fetch.ts';
import { vimeo, vimeoItem, vimeoPath } from '../../src/services/vimeo/connector.ts';

// The video object is real (vimeo/video_object_from_programmed_list.json); the list envelope
// around it ({total, page, per_page, paging, data}) is built from the documented shape
// (docs/services.md#vimeo), as no recorded list page was saved.
const video = fixtureJson('vimeo/video_object_from_programmed_list.json') as Record<string, unknown>;
const album = fixtureJson('vimeo/album_showcase_object.json') as { metadata: { connections: { videos: { uri: string } } } };
const NOW = Date.parse('2030-01-01T00:00:00Z');
const newer = { ...video, uri: '/videos/900000001', release_time: '2012-01-01T10:00:00+00:00', name: 'Newer' };
const newest = { ...video, uri: '/videos/900000002', release_time: '2012-02-01T10:00:00+00:00', name: 'Newest' };
const page = (data: unknown[], next: string | null = null) => ({ total: data.length, page: 1, per_page: 50, paging: { next, previous: null }, data });

const server = useSourceServer(1500);
const fetcher = server.fetcher;
const ctx = (env: Record<string, string> = {}) => ({
  fetch: fetcher,
  services: loadConfig({ VIMEO_API_URL: server.base, VIMEO_ACCESS_TOKEN: 'vimeo-token', ...env }).services,
  now: NOW,
});
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'vimeo', type, input: value });


describe('vimeo', () => {
  it('maps the recorded video object field by field', async () => {
    server.handle(() => ({ body: page([video]) }));
    const { items, state } = await vimeo.collect(input('user', 'stevieeatsworms'), {}, ctx());
    expect(items).toHaveLength(1);
    const item = items[0]!;
    expect(item).toMatchObject({
      id: 'vimeo_29433509',
      service: 'vimeo',
      type: 'video',
      title: 'Skindergarten',
      text: 'Ms. Lapachet struggles to control a kindergarten class.',
      tags: ['skindergarten', 'john', 'early', 'steve', 'girard'],
      url: 'https://vimeo.com/29433509',
      date: '2011-09-22T15:32:32.000Z',
      author: { name: 'stevieeatsworms', username: 'user5675338', userid: '5675338', url: 'https://vimeo.com/user5675338' },
      kudos: { score: 35 + 10, vimeo_views: 5357, vimeo_likes: 35, vimeo_comments: 10 },
    });
    expect(item.language).toBeUndefined(); // the fixture's language is null
    expect(item.media).toEqual([
      { type: 'embed', url: 'https://player.vimeo.com/video/29433509?title=0&byline=0&portrait=0&badge=0&autopause=0&player_id=0',
        embed: (video.embed as { html: string }).html, duration: 221 },
      { type: 'image', url: 'https://i.vimeocdn.com/video/371100002_1280x720.jpg?r=pad', width: 1280, height: 720 },
    ]);
    expect(state).toEqual({ latest: '2011-09-22T15:32:32.000Z', ids: ['29433509'] });
  });

  it('asks for the user videos newest first with the token and the 3.4 Accept header', async () => {
    server.handle(() => ({ body: page([video]) }));
    await vimeo.collect(input('user', 'https://vimeo.com/user5675338'), {}, ctx());
    const [req] = server.requests;
    expect(req!.parsed.pathname).toBe('/users/5675338/videos');
    expect(req!.parsed.searchParams.get('sort')).toBe('date');
    expect(req!.parsed.searchParams.get('direction')).toBe('desc');
    expect(req!.parsed.searchParams.get('fields')).toContain('metadata.connections.likes.total');
    expect(req!.headers.authorization).toBe('Bearer vimeo-token');
    expect(req!.headers.accept).toBe('application/vnd.vimeo.*+json;version=3.4');
  });

  it.each([
    ['5451829', album.metadata.connections.videos.uri],
    ['https://vimeo.com/showcase/5451829', '/albums/5451829/videos'],
    ['267176/5451829', '/users/267176/albums/5451829/videos'],
  ])('reads album input %s from %s', (value, path) => {
    expect(vimeoPath('album', value)).toBe(path);
  });

  it('refuses an unreadable album input for good', () => {
    expect(() => vimeoPath('album', 'not an album')).toThrow(expect.objectContaining({ permanent: true }));
  });

  it('reads only what is new on the next poll, following paging.next while every item is new', async () => {
    const first = await (async () => {
      server.handle(() => ({ body: page([video], '/users/x/videos?page=2') }));
      return vimeo.collect(input('user', 'x'), {}, ctx());
    })();
    expect(server.requests).toHaveLength(1); // the first poll reads one page only
    server.requests.length = 0;
    server.handle((req) => (req.parsed.searchParams.get('page') === '2'
      ? { body: page([newer, video]) }
      : { body: page([newest], '/users/x/videos?page=2') }));
    const second = await vimeo.collect(input('user', 'x'), first.state, ctx());
    expect(server.requests.map((r) => r.parsed.searchParams.get('page'))).toEqual([null, '2']);
    expect(second.items.map((i) => i.id)).toEqual(['vimeo_900000002', 'vimeo_900000001']);
    expect(second.state).toEqual({ latest: '2012-02-01T10:00:00.000Z', ids: ['900000002'] });
    server.handle(() => ({ body: page([newest, newer, video]) }));
    const third = await vimeo.collect(input('user', 'x'), second.state, ctx());
    expect(third.items).toEqual([]);
  });

  it('waits for the reset when the quota is used up', async () => {
    server.handle(() => ({ body: page([video]), headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 600) } }));
    const result = await vimeo.collect(input('user', 'x'), {}, ctx());
    expect(result.nextRunAt).toBe(NOW + 600_000);
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await vimeo.collect(input('user', 'x'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('reports Vimeo\'s own error message', async () => {
    server.handle(() => ({ status: 401, body: { error: 'Something strange occurred.', developer_message: 'The access token is invalid.', error_code: 8003 } }));
    await expect(vimeo.collect(input('user', 'x'), {}, ctx())).rejects.toThrow('HTTP 401: The access token is invalid.');
  });

  it('times out as a transient failure', async () => {
    server.handle(() => ({ hang: true }));
    const error = await vimeo.collect(input('user', 'x'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect(error).toMatchObject({ kind: 'timeout' });
  });

  it('names the missing credential and calls nothing', async () => {
    const error = await vimeo.collect(input('user', 'x'), {}, { ...ctx(), services: loadConfig({ VIMEO_API_URL: server.base }).services }).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, message: 'vimeo is not configured: set VIMEO_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('vimeo lookup (docs/services.md#re-verification)', () => {
  const lookup = vimeo.lookup!;
  /** A video as the lookup's `fields` ask for it: its uri and counters only. */
  const counters = (v: Record<string, unknown>, plays: number, likes: number, comments: number) =>
    ({ uri: v.uri, stats: { plays }, metadata: { connections: { likes: { total: likes }, comments: { total: comments } } } });

  it('reads up to 100 videos by uri in one page, and maps them as collect does', async () => {
    server.handle(() => ({ body: page([counters(video, 6000, 40, 12), counters(newer, 1, 0, 0), counters(newest, 9, 9, 9)]) }));
    const { items, nextAt } = await lookup.lookup(input('user', 'x'), ['vimeo_29433509', 'vimeo_900000001', 'vimeo_gone', 'youtube_29433509'], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(100);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.parsed.pathname).toBe('/videos');
    expect(Object.fromEntries(req!.parsed.searchParams)).toEqual({
      uris: '/videos/29433509,/videos/900000001', per_page: '100',
      // A poll's fields: the lookup reads the whole video (docs/services.md#re-verification).
      fields: 'uri,name,description,link,duration,created_time,release_time,language,pictures.sizes,embed.html,tags,stats.plays,metadata.connections.likes.total,metadata.connections.comments.total,user.name,user.link,user.uri',
    });
    expect(req!.headers.authorization).toBe('Bearer vimeo-token');
    expect(req!.headers.accept).toBe('application/vnd.vimeo.*+json;version=3.4');
    // A video the lookup did not ask for (vimeo_900000002) is not taken.
    expect(Object.fromEntries(kudos)).toEqual({
      vimeo_29433509: { score: 40 + 12, vimeo_views: 6000, vimeo_likes: 40, vimeo_comments: 12 },
      vimeo_900000001: vimeoItem(counters(newer, 1, 0, 0))!.kudos,
    });
    // The recorded video object gives the same kudos through the lookup as through collect.
    server.handle(() => ({ body: page([video]) }));
    expect((await lookup.lookup(input('user', 'x'), ['vimeo_29433509'], ctx())).items.get('vimeo_29433509')).toEqual(vimeoItem(video));
    expect(nextAt).toBeUndefined();
  });

  it('asks nothing for ids that are not Vimeo videos', async () => {
    expect((await lookup.lookup(input('user', 'x'), ['vimeo_', 'vimeo_1/2', 'vk_1_2'], ctx())).items.size).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('holds further lookups until x-ratelimit-reset when the quota is used up', async () => {
    server.handle(() => ({ body: page([video]), headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 600) } }));
    expect((await lookup.lookup(input('user', 'x'), ['vimeo_29433509'], ctx())).nextAt).toBe(NOW + 600_000);
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await lookup.lookup(input('user', 'x'), ['vimeo_29433509'], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('names the missing credential and calls nothing', async () => {
    const error = await lookup.lookup(input('user', 'x'), ['vimeo_29433509'], { ...ctx(), services: loadConfig({ VIMEO_API_URL: server.base }).services }).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, message: 'vimeo is not configured: set VIMEO_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });
});
