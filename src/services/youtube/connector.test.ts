import { describe, expect, it } from 'vitest';
import { useFakeApi, type FakeResponse, fixtureBytes, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { isoDuration, pushedVideos, untilQuotaReset, youtube } from './connector.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const fetcher = api.fetcher;
const ctx = (env: Record<string, string> = { YOUTUBE_API_KEY: 'yt-key' }) =>
  ({ fetch: fetcher, now: NOW, services: loadConfig({ YOUTUBE_API_URL: `${api.base}/youtube/v3`, YOUTUBE_FEED_URL: `${api.base}/feeds/videos.xml`, ...env }).services });
const input = (type: string, value: string, extra: Partial<SourceInput> = {}): SourceInput => ({ id: 'a'.repeat(24), service: 'youtube', type, input: value, ...extra });
const raw = (file: string): FakeResponse => ({ body: fixtureBytes('youtube', file), headers: { 'content-type': 'application/json' } });

describe('youtube: keyless feed', () => {
  it('maps the Atom feed with yt:videoId, media:group and media:statistics', async () => {
    api.respond = () => ({ body: fixtureBytes('youtube', 'channel-videos-feed-atom.xml'), headers: { 'content-type': 'application/atom+xml', etag: '"e1"' } });
    const { items, state } = await youtube.collect(input('channel', 'UCP7uiEZIqci43m22KDl0sNw'), {}, ctx({}));
    expect(api.requests[0]!.path).toBe('/feeds/videos.xml');
    expect(api.requests[0]!.query.get('channel_id')).toBe('UCP7uiEZIqci43m22KDl0sNw');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      id: 'youtube_ULBuIB9lHkc', type: 'video', title: 'Multi-dollar String Interpolation in Kotlin | $$',
      url: 'https://www.youtube.com/watch?v=ULBuIB9lHkc', date: '2024-12-16T15:10:21.000Z',
      author: { name: 'Kotlin by JetBrains', username: null, userid: 'UCP7uiEZIqci43m22KDl0sNw', url: 'https://www.youtube.com/channel/UCP7uiEZIqci43m22KDl0sNw' },
      media: [
        { type: 'embed', embed: '<iframe width="640" height="360" src="https://www.youtube.com/embed/ULBuIB9lHkc" frameborder="0" allowfullscreen></iframe>' },
        { type: 'image', url: 'https://i2.ytimg.com/vi/ULBuIB9lHkc/hqdefault.jpg', width: 480, height: 360 },
      ],
      kudos: { score: 0, youtube_views: 4689, youtube_likes: 247 }, // no score from YouTube statistics (III.E.4.h)
    });
    expect(items[0]!.text).toContain('<a href="https://kotlinlang.org/docs/whatsnew21.html#multi-dollar-string-interpolation" rel="nofollow noopener">');
    expect(items[0]!.text).toContain('<a href="https://www.youtube.com/hashtag/kotlin" rel="nofollow noopener">#kotlin</a>');
    expect(state).toEqual({ feedEtag: '"e1"' });
  });

  it('reads the full feed fixture and sends the ETag on the next poll', async () => {
    api.respond = (req) => req.headers['if-none-match'] ? { status: 304, body: '' } : { body: fixtureBytes('youtube', 'channel-videos-feed-atom-full.xml') };
    const first = await youtube.collect(input('playlist', 'PLx'), {}, ctx({}));
    expect(api.requests[0]!.query.get('playlist_id')).toBe('PLx');
    expect(first.items.length).toBeGreaterThan(1);
    expect(first.items.every((i) => /^youtube_[\w-]{11}$/.test(i.id))).toBe(true);
    const again = await youtube.collect(input('playlist', 'PLx'), { feedEtag: '"e1"' }, ctx({}));
    expect(api.requests[1]!.headers['if-none-match']).toBe('"e1"');
    expect(again.items).toEqual([]);
  });

  it('fails on a truncated feed rather than returning part of it', async () => {
    const whole = fixtureBytes('youtube', 'channel-videos-feed-atom-full.xml');
    api.respond = () => ({ body: whole.subarray(0, Math.floor(whole.length * 0.6)), headers: { 'content-type': 'application/atom+xml' } });
    const error = await youtube.collect(input('channel', 'UCx'), {}, ctx({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ message: 'not a feed: the document ends before its root element is closed (truncated?)', permanent: false });
  });

  it.each(['keyword', 'user', 'location'])('reports %s inputs as not configured without a key', async (type) => {
    await expect(youtube.collect(input(type, 'x', { latitude: 1, longitude: 2, radius: 3 }), {}, ctx({}))).rejects.toMatchObject({
      permanent: true, message: `youtube ${type} inputs need the Data API: set YOUTUBE_API_KEY` });
    expect(api.requests).toEqual([]);
  });
});

describe('youtube: Data API', () => {
  it('channel → uploads playlist → playlist items → videos, with seen ids and the ETag next time', async () => {
    const channels = fixtureJson('youtube', 'channels_list_contentDetails.json');
    api.respond = (req) => {
      if (req.path.endsWith('/channels')) return { body: { ...channels, items: channels.items.slice(0, 1) } };
      if (req.path.endsWith('/playlistItems')) return req.headers['if-none-match'] ? { status: 304, body: '' } : raw('playlistItems_list_p1.json');
      return raw('videos_list_statistics_contentDetails.json');
    };
    const first = await youtube.collect(input('channel', 'UCK8sQmJBp8GCxrOtXWBpyEA'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/channels', '/youtube/v3/playlistItems', '/youtube/v3/videos']);
    expect(api.requests.every((r) => r.query.get('key') === 'yt-key')).toBe(true);
    expect(api.requests[1]!.query.get('playlistId')).toBe('UUK8sQmJBp8GCxrOtXWBpyEA');
    const playlistIds = fixtureJson('youtube', 'playlistItems_list_p1.json').items.map((i: any) => i.snippet.resourceId.videoId);
    expect(api.requests[2]!.query.get('id')).toBe(playlistIds.join(','));
    expect(first.items[0]).toMatchObject({
      id: 'youtube_D-lhorsDlUQ', type: 'video', title: 'What are Actions on Google (Assistant on Air)',
      date: '2019-03-21T20:37:49.000Z', url: 'https://www.youtube.com/watch?v=D-lhorsDlUQ',
      author: { name: 'Google Developers', username: '@google', userid: 'UC_x5XG1OV2P6uZZ5FSM9Ttw', url: 'https://www.youtube.com/channel/UC_x5XG1OV2P6uZZ5FSM9Ttw' },
      media: [{ type: 'embed', duration: expect.any(Number) }, { type: 'image', url: 'https://i.ytimg.com/vi/D-lhorsDlUQ/maxresdefault.jpg', width: 1280, height: 720 }],
    });
    const video = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items[0];
    const [likes, comments] = [Number(video.statistics.likeCount), Number(video.statistics.commentCount)];
    // YouTube API Services Developer Policies III.E.4.h: the statistics are shown, never made into a score.
    expect(first.items[0]!.kudos).toEqual({ score: 0, youtube_views: Number(video.statistics.viewCount), youtube_likes: likes, youtube_comments: comments });
    expect((first.items[0]!.media![0] as { duration: number }).duration).toBe(isoDuration(video.contentDetails.duration));
    expect(first.items[0]!.tags).toContain('Actions on Google');
    expect(first.state).toMatchObject({ for: 'UCK8sQmJBp8GCxrOtXWBpyEA', playlist: 'UUK8sQmJBp8GCxrOtXWBpyEA', handle: '@google', seen: playlistIds });

    api.requests.length = 0;
    const second = await youtube.collect(input('channel', 'UCK8sQmJBp8GCxrOtXWBpyEA'), first.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/playlistItems']);
    expect(api.requests[0]!.headers['if-none-match']).toBe(fixtureJson('youtube', 'playlistItems_list_p1.json').etag);
    expect(second.items).toEqual([]);
  });

  it('searches keywords by date and sends publishedAfter next time; decodes entities in titles', async () => {
    api.respond = (req) => req.path.endsWith('/search') ? raw('search_list_keyword_p1.json') : raw('videos_list_statistics_contentDetails.json');
    const { state } = await youtube.collect(input('keyword', 'surfing'), {}, ctx());
    expect(api.requests[0]!.query.get('q')).toBe('surfing');
    expect(api.requests[0]!.query.get('order')).toBe('date');
    expect(api.requests[1]!.query.get('id')!.split(',')).toHaveLength(25);
    expect(state).toEqual({ publishedAfter: '2019-03-21T20:37:49.000Z' });
    api.requests.length = 0;
    await youtube.collect(input('location', 'x', { latitude: 52.5, longitude: 13.4, radius: 1500 }), state, ctx());
    expect(api.requests[0]!.query.get('location')).toBe('52.5,13.4');
    expect(api.requests[0]!.query.get('locationRadius')).toBe('1500m');
    expect(api.requests[0]!.query.get('publishedAfter')).toBe('2019-03-21T20:37:49.000Z');
  });

  it.each<[string, number, unknown, boolean, number | undefined]>([
    ['quotaExceeded', 403, { error: { code: 403, message: 'quota', errors: [{ reason: 'quotaExceeded', domain: 'youtube.quota' }] } }, false, untilQuotaReset(NOW)],
    ['keyInvalid', 400, fixtureJson('youtube', 'error_400_keyInvalid.json'), true, undefined],
    ['permission', 403, fixtureJson('youtube', 'error_403_permission.json'), true, undefined],
    ['backend error', 503, { error: { code: 503 } }, false, undefined],
  ])('%s', async (_name, status, body, permanent, retryAfterMs) => {
    api.respond = () => ({ status, body });
    const error = await youtube.collect(input('playlist', 'PLx'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('reads ISO 8601 durations and the quota reset', () => {
    expect(isoDuration('PT21M7S')).toBe(1267);
    expect(isoDuration('P1DT2H')).toBe(93600);
    expect(isoDuration('x')).toBeUndefined();
    expect(untilQuotaReset(NOW)).toBe(8 * 3600_000);
    expect(untilQuotaReset(Date.parse('2030-01-01T09:00:00Z'))).toBe(23 * 3600_000);
  });
});

describe("youtube: a connected account's OAuth token", () => {
  it('sends the token as Authorization: Bearer and no key; without a key it still reads the Data API', async () => {
    api.respond = (req) => raw(req.path.endsWith('/search') ? 'search_list_keyword_p1.json' : 'videos_list_statistics_contentDetails.json');
    const { items } = await youtube.collect(input('keyword', 'kotlin'), {}, ctx({ YOUTUBE_ACCESS_TOKEN: 'ya29.connected-token' }));
    expect(items.length).toBeGreaterThan(0);
    for (const request of api.requests) {
      expect(request.path.startsWith('/youtube/v3/')).toBe(true);
      expect(request.headers.authorization).toBe('Bearer ya29.connected-token');
      expect(request.query.get('key')).toBeNull();
    }
  });
});

describe('youtube lookup (docs/services.md#re-verification)', () => {
  const lookup = youtube.lookup!;
  const stats = (id: string, views: number) => ({ id, statistics: { viewCount: String(views), likeCount: '4', commentCount: '1' } });

  it('asks videos.list only for the videos among the ids, and takes only videos asked', async () => {
    api.respond = () => ({ body: { items: [stats('ULBuIB9lHkc', 100), stats('a-b_c', 7), stats('other', 1)] } });
    const { items } = await lookup.lookup(input('keyword', 'x'), ['youtube_ULBuIB9lHkc', 'youtube_a-b_c', 'youtube_', 'youtube_a,b', 'twitter_1001'], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(50);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.path).toBe('/youtube/v3/videos');
    expect(api.requests[0]!.query.get('part')).toBe('snippet,contentDetails,statistics,recordingDetails'); // 1 unit whatever the parts
    expect(api.requests[0]!.query.get('id')).toBe('ULBuIB9lHkc,a-b_c');
    expect(Object.fromEntries(kudos)).toEqual({
      youtube_ULBuIB9lHkc: { score: 0, youtube_views: 100, youtube_likes: 4, youtube_comments: 1 },
      'youtube_a-b_c': { score: 0, youtube_views: 7, youtube_likes: 4, youtube_comments: 1 },
    });
  });

  // videos.list answers only the videos that exist and are visible
  // (https://developers.google.com/youtube/v3/docs/videos/list): an id asked and not answered is gone.
  it('takes a video left out of the answer as gone, and reads the rest whole', async () => {
    api.respond = () => raw('videos_list_statistics_contentDetails.json');
    const listed = (fixtureJson('youtube', 'videos_list_statistics_contentDetails.json') as { items: { id: string }[] }).items.map((v) => `youtube_${v.id}`);
    const { items, gone } = await lookup.lookup(input('keyword', 'x'), [...listed, 'youtube_deletedVid1'], ctx());
    expect([...items.keys()].sort()).toEqual([...listed].sort());
    expect(items.get(listed[0]!)!.title).toBeTruthy();
    expect(Object.fromEntries(gone)).toEqual({ youtube_deletedVid1: 'gone' });
  });

  it('a failed request says nothing is gone', async () => {
    api.respond = () => ({ status: 500, body: { error: { code: 500, message: 'backendError' } } });
    await expect(lookup.lookup(input('keyword', 'x'), ['youtube_ULBuIB9lHkc'], ctx())).rejects.toBeInstanceOf(SourceError);
  });

  it('spends no unit when no id is a video, and needs a key or an account', async () => {
    expect((await lookup.lookup(input('keyword', 'x'), ['youtube_', 'vimeo_42'], ctx())).items.size).toBe(0);
    expect(api.requests).toEqual([]);
    await expect(lookup.lookup(input('keyword', 'x'), ['youtube_ULBuIB9lHkc'], ctx({}))).rejects.toMatchObject({ permanent: true });
  });
});

describe('youtube: WebSub notifications (pushedVideos)', () => {
  // As YouTube's hub sends them (developers.google.com/youtube/v3/guides/push_notifications): a
  // new or updated video as an entry, a deleted one as an Atom tombstone (RFC 6721).
  const notification = (body: string) => new TextEncoder().encode(`<?xml version='1.0' encoding='UTF-8'?><feed xmlns:at="http://purl.org/atompub/tombstones/1.0" xmlns="http://www.w3.org/2005/Atom" xmlns:yt="http://www.youtube.com/xml/schemas/2015"><link rel="hub" href="https://pubsubhubbub.appspot.com"/><title>YouTube video feed</title><updated>2026-11-23T10:00:00Z</updated>${body}</feed>`);
  const tombstone = (ref: string) => `<at:deleted-entry ref="${ref}" when="2026-11-23T10:00:00+00:00"><link href="https://www.youtube.com/watch?v=x"/><at:by><name>Channel</name><uri>https://www.youtube.com/channel/UCx</uri></at:by></at:deleted-entry>`;
  it.each([
    ['a deleted video: its item id', tombstone('yt:video:VIDEO000001'), [], ['youtube_VIDEO000001']],
    ['twice: once', tombstone('yt:video:VIDEO000001') + tombstone('yt:video:VIDEO000001'), [], ['youtube_VIDEO000001']],
    ['a ref that is not a video: nothing', tombstone('yt:channel:UCx') + tombstone('VIDEO000001') + tombstone('yt:video:../x'), [], []],
    ['a new video: an item, nothing deleted', '<entry><id>yt:video:VIDEO000002</id><yt:videoId>VIDEO000002</yt:videoId><title>New</title><published>2026-11-23T09:59:00+00:00</published></entry>', ['youtube_VIDEO000002'], []],
  ])('%s', (_name, body, items, deleted) => {
    const read = pushedVideos(notification(body), Date.parse('2026-11-23T10:00:00Z'));
    expect(read.items.map((i) => i.id)).toEqual(items);
    expect(read.deleted).toEqual(deleted);
  });
});
