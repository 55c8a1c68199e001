/**
 * YouTube live chat inputs (type `live`, docs/services.md#youtube-live-chat) against a local
 * server answering with the recorded payloads: the chat resolved from a video or a channel's
 * current broadcast, paging with nextPageToken, the API's polling interval, Super Chats,
 * deletions, the end of the chat, and the failures.
 */
import { describe, expect, it } from 'vitest';
import { useFakeApi, type FakeRequest, type FakeResponse, fixtureBytes, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { untilQuotaReset, youtube } from './connector.ts';
import { youtubePollUnits, youtubeUnits } from './quota.ts';
import { row } from './row.ts';
import { urlKeys } from '../../lib/item-keys.ts';
import { ownsEntries } from '../table.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const ctx = (env: Record<string, string> = { YOUTUBE_API_KEY: 'yt-key' }) =>
  ({ fetch: api.fetcher, now: NOW, services: loadConfig({ YOUTUBE_API_URL: `${api.base}/youtube/v3`, ...env }).services });
const live = (value: string): SourceInput => ({ id: 'a'.repeat(24), service: 'youtube', type: 'live', input: value });
const raw = (file: string, status = 200): FakeResponse => ({ status, body: fixtureBytes('youtube', file), headers: { 'content-type': 'application/json' } });
const VIDEO = '9ywjjWAkeL0';
const CHAT = 'EiEKGFVDU0o0Z2tWQzZOcnZJSTh1bXp0ZjBPdxIFL2xpdmU';
const p1 = fixtureJson('youtube', 'liveChatMessages_list_p1.json');
const p2 = fixtureJson('youtube', 'liveChatMessages_list_p2.json');

/** The API as the fixtures answer it; `messages` answers liveChat/messages. */
const answer = (messages: (req: FakeRequest) => FakeResponse) => (req: FakeRequest): FakeResponse => {
  if (req.path.endsWith('/videos')) return raw('videos_list_liveStreamingDetails.json');
  if (req.path.endsWith('/search')) return raw('search_list_live.json');
  if (req.path.endsWith('/channels')) return { body: { items: [{ id: 'UCSJ4gkVC6NrvII8umztf0Ow' }] } };
  if (req.path.endsWith('/liveChat/messages')) return messages(req);
  return { status: 404, body: {} };
};
const paged = answer((req) => raw(req.query.get('pageToken') === p1.nextPageToken ? 'liveChatMessages_list_p2.json' : 'liveChatMessages_list_p1.json'));

describe('youtube live: the input', () => {
  it.each([
    [VIDEO, null],
    ['UCSJ4gkVC6NrvII8umztf0Ow', null],
    ['@LofiGirl', null],
    ['9ywjjWAkeL', 'must be a video id'], // 10 characters
    ['9ywjjWAkeL0x', 'must be a video id'],
    ['UCSJ4gkVC6NrvII8umztf0O', 'must be a video id'],
    ['https://www.youtube.com/watch?v=9ywjjWAkeL0', 'must be a video id'],
    ['@a', 'must be a video id'],
    ['@with space', 'must be a video id'],
    ['../videos', 'must be a video id'],
  ])('%s', (value, problem) => {
    const found = row.checkInput(value, { allowPrivateFetch: false, type: 'live' });
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
    // Other types of the service take any text, as before.
    expect(row.checkInput(value, { allowPrivateFetch: false, type: 'keyword' })).toBeNull();
  });
});

describe('youtube live: the chat', () => {
  it('reads the video\'s chat, maps each message field by field, keeps the page token and asks for the next poll at pollingIntervalMillis', async () => {
    api.respond = paged;
    const first = await youtube.collect(live(VIDEO), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/videos', '/youtube/v3/liveChat/messages']);
    expect(Object.fromEntries(api.requests[0]!.query)).toEqual({ part: 'snippet,liveStreamingDetails', id: VIDEO, key: 'yt-key' });
    expect(Object.fromEntries(api.requests[1]!.query)).toEqual({ liveChatId: CHAT, part: 'snippet,authorDetails', key: 'yt-key' });
    const [text, superChat, ...rest] = [first.items[0], first.items[2], ...first.items.slice(3)];
    expect(first.items).toHaveLength(3); // the new member event is no item
    expect(rest).toEqual([]);
    expect(text).toEqual({
      id: `youtube_${p1.items[0].id}`,
      service: 'youtube',
      type: 'status',
      text: 'kitni hai',
      tags: [],
      url: 'https://www.youtube.com/channel/UCrjdRCm0gGcdrYtl8z66t6g',
      date: '2023-05-25T20:08:08.479Z',
      author: { name: 'Mr Perfect', username: null, userid: 'UCrjdRCm0gGcdrYtl8z66t6g', url: 'https://www.youtube.com/channel/UCrjdRCm0gGcdrYtl8z66t6g' },
      media: null,
      kudos: { score: 0 },
    });
    expect(superChat).toEqual({
      id: 'youtube_LCC.SuperChat-written-by-hand-0001',
      service: 'youtube',
      type: 'status',
      // The amount as text, then the comment: linked, and its markup escaped.
      text: '₹100.00: see <a href="https://example.org/tips" rel="nofollow noopener">https://example.org/tips</a> &lt;b&gt;',
      tags: [],
      url: 'https://www.youtube.com/channel/UCnrTRAL2AJu2K3oNhLDQK8Q',
      date: '2023-05-25T20:08:30.000Z',
      author: { name: 'ITZ_SHABD_', username: null, userid: 'UCnrTRAL2AJu2K3oNhLDQK8Q', url: 'https://www.youtube.com/channel/UCnrTRAL2AJu2K3oNhLDQK8Q' },
      media: null,
      kudos: { score: 0 },
    });
    // A chat message has no title: the property is absent (docs/api.md#content-item), not ''.
    for (const item of first.items) expect(item).not.toHaveProperty('title');
    expect(first.state).toEqual({ for: VIDEO, videoId: VIDEO, liveChatId: CHAT, pageToken: p1.nextPageToken });
    expect(first.pollAfterMs).toBe(8000);
    expect(first.title).toBe('lofi hip hop radio - beats to relax/study to');
    expect(first.deleted).toBeUndefined();
    // Hostile: the messages of one chat must not be merged as duplicates by a shared URL (the
    // video's watch page would make them all one card): their URL is their author's page, which
    // de-duplication leaves out; a link in the text is still what a message shares.
    expect(urlKeys(text!, ownsEntries).urls).toEqual([]);
    expect(urlKeys(superChat!, ownsEntries).urls).toEqual(['https://example.org/tips']);

    // The next poll reads only the chat, from the page token; a deleted message is named as deleted.
    api.requests.length = 0;
    const second = await youtube.collect(live(VIDEO), first.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/liveChat/messages']);
    expect(api.requests[0]!.query.get('pageToken')).toBe(p1.nextPageToken);
    expect(second.items.map((i) => i.id)).toEqual([`youtube_${p2.items[1].id}`]);
    expect(second.deleted).toEqual([`youtube_${p1.items[0].id}`]);
    expect(second.state).toEqual({ for: VIDEO, videoId: VIDEO, liveChatId: CHAT, pageToken: p2.nextPageToken });
    expect(second.pollAfterMs).toBe(6000);
  });

  it('a channel (id or @handle): its live video found by search.list eventType=live, then kept', async () => {
    api.respond = paged;
    const byId = await youtube.collect(live('UCSJ4gkVC6NrvII8umztf0Ow'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/search', '/youtube/v3/videos', '/youtube/v3/liveChat/messages']);
    expect(Object.fromEntries(api.requests[0]!.query)).toEqual({ part: 'id', channelId: 'UCSJ4gkVC6NrvII8umztf0Ow', eventType: 'live', type: 'video', maxResults: '1', key: 'yt-key' });
    expect(byId.state).toMatchObject({ channelId: 'UCSJ4gkVC6NrvII8umztf0Ow', videoId: VIDEO, liveChatId: CHAT });
    api.requests.length = 0;
    await youtube.collect(live('UCSJ4gkVC6NrvII8umztf0Ow'), byId.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/liveChat/messages']);

    api.requests.length = 0;
    const byHandle = await youtube.collect(live('@LofiGirl'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/channels', '/youtube/v3/search', '/youtube/v3/videos', '/youtube/v3/liveChat/messages']);
    expect(api.requests[0]!.query.get('forHandle')).toBe('@LofiGirl');
    expect(byHandle.state).toMatchObject({ for: '@LofiGirl', channelId: 'UCSJ4gkVC6NrvII8umztf0Ow' });
    // State of another input text is not reused.
    api.requests.length = 0;
    await youtube.collect(live(VIDEO), byHandle.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/videos', '/youtube/v3/liveChat/messages']);
  });

  // Hostile: the handle is the input's text; a handle made of credential words must not make its
  // "not found" read as the credential's failure (collect/credentials.ts), nor a video id.
  it.each([
    ['@expiredpassword', 'youtube channel @expiredpassword not found'],
    ['unauthorize', 'youtube video unauthorize not found'],
  ])('%s not found is the input\'s failure, not the credential\'s', async (value, message) => {
    api.respond = (req) => (req.path.endsWith('/channels') || req.path.endsWith('/videos') ? { body: { items: [] } } : paged(req));
    const error = await youtube.collect(live(value), {}, ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ message, permanent: true, credential: false });
  });

  it('a channel with no broadcast now says so, and is looked for again (transient)', async () => {
    api.respond = (req) => (req.path.endsWith('/search') ? { body: { items: [] } } : paged(req));
    const error = await youtube.collect(live('UCSJ4gkVC6NrvII8umztf0Ow'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ message: 'youtube channel UCSJ4gkVC6NrvII8umztf0Ow has no live broadcast now', permanent: false });
  });
});

describe('youtube live: the end of the chat', () => {
  it('offlineAt: the last page is read, the next poll of the video fails for good saying when', async () => {
    api.respond = answer(() => raw('liveChatMessages_list_offline.json'));
    const last = await youtube.collect(live(VIDEO), { for: VIDEO, videoId: VIDEO, liveChatId: CHAT, pageToken: 'x' }, ctx());
    expect(last.items).toEqual([]);
    expect(last.state).toEqual({ for: VIDEO, videoId: VIDEO, ended: '2023-05-25T21:02:13.000Z' });
    expect(last.pollAfterMs).toBeUndefined();
    api.requests.length = 0;
    await expect(youtube.collect(live(VIDEO), last.state, ctx())).rejects.toMatchObject({
      message: `the live chat of youtube video ${VIDEO} has ended (offline at 2023-05-25T21:02:13.000Z)`, permanent: true });
    expect(api.requests).toEqual([]);
  });

  it.each([
    ['liveChatEnded', 'error_403_liveChatEnded.json', 403],
    ['liveChatNotFound', 'error_404_liveChatNotFound.json', 404],
  ])('%s: a video\'s input fails for good saying its chat ended', async (_name, file, status) => {
    api.respond = answer(() => raw(file, status));
    const error = await youtube.collect(live(VIDEO), { for: VIDEO, videoId: VIDEO, liveChatId: CHAT }, ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: `the live chat of youtube video ${VIDEO} has ended`, permanent: true });
  });

  it('liveChatEnded on a channel: its next broadcast is looked for in the same poll', async () => {
    let ended = true;
    api.respond = answer((req) => (ended && req.query.get('liveChatId') === 'old-chat' ? raw('error_403_liveChatEnded.json', 403) : raw('liveChatMessages_list_p1.json')));
    const result = await youtube.collect(live('UCSJ4gkVC6NrvII8umztf0Ow'), { for: 'UCSJ4gkVC6NrvII8umztf0Ow', channelId: 'UCSJ4gkVC6NrvII8umztf0Ow', videoId: 'oldVideo000', liveChatId: 'old-chat', pageToken: 'old' }, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/youtube/v3/liveChat/messages', '/youtube/v3/search', '/youtube/v3/videos', '/youtube/v3/liveChat/messages']);
    expect(api.requests[3]!.query.get('pageToken')).toBeNull(); // a new chat starts from its beginning
    expect(result.state).toMatchObject({ videoId: VIDEO, liveChatId: CHAT, pageToken: p1.nextPageToken });
    ended = false;
  });

  // The quota reserves `youtubePollUnits` before a poll (collect/quotas.ts) as the most it can spend:
  // a poll that spends more overruns YOUTUBE_DAILY_QUOTA. Each case ends a chat in the middle of a poll.
  const OLD = { for: '@LofiGirl', channelId: 'UCSJ4gkVC6NrvII8umztf0Ow', videoId: 'oldVideo000', liveChatId: 'old-chat', pageToken: 'old' };
  it.each<[string, string, Record<string, unknown>]>([
    ['a channel whose known chat ended: its next broadcast looked for', '@LofiGirl', OLD],
    ['a channel found by its @handle whose new chat ends at once', '@LofiGirl', {}],
    ['a channel found by its id whose new chat ends at once', 'UCSJ4gkVC6NrvII8umztf0Ow', {}],
    ['a known chat without its channel id in the state (an older state)', '@LofiGirl', { for: '@LofiGirl', videoId: 'oldVideo000', liveChatId: 'old-chat' }],
  ])('%s: the poll spends no more units than the quota reserved for it', async (_name, value, state) => {
    api.respond = answer(() => raw('error_403_liveChatEnded.json', 403));
    await youtube.collect(live(value), state, ctx()).catch(() => undefined);
    const spent = api.requests.reduce((sum, r) => sum + youtubeUnits(r.path.replace('/youtube/v3', '')), 0);
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(youtubePollUnits('live', { input: value, sourceState: JSON.stringify(state) })!);
  });

  it('a video whose broadcast ended, one that is no broadcast, and one not found', async () => {
    api.respond = () => raw('videos_list_liveStreamingDetails_ended.json');
    await expect(youtube.collect(live('D9fqFdv5ENo'), {}, ctx())).rejects.toMatchObject({
      message: 'the live chat of youtube video D9fqFdv5ENo has ended (the broadcast ended at 2023-05-25T21:02:13.000Z)', permanent: true });
    api.respond = () => raw('videos_list_statistics_contentDetails.json');
    await expect(youtube.collect(live('D9fqFdv5ENo'), {}, ctx())).rejects.toMatchObject({ message: 'youtube video D9fqFdv5ENo is not a live broadcast', permanent: true });
    api.respond = () => ({ body: { kind: 'youtube#videoListResponse', items: [] } });
    await expect(youtube.collect(live('D9fqFdv5ENo'), {}, ctx())).rejects.toMatchObject({ message: 'youtube video D9fqFdv5ENo not found', permanent: true });
  });
});

describe('youtube live: failures', () => {
  it.each<[string, number, unknown, boolean, number | undefined, string]>([
    ['quota exceeded: waits for the Pacific reset', 403, fixtureJson('youtube', 'error_403_quotaExceeded.json'), false, untilQuotaReset(NOW), 'youtube quota: quotaExceeded'],
    ['rate limited (sent too soon): waits for the reset too', 403, { error: { code: 403, message: 'too soon', errors: [{ reason: 'rateLimitExceeded' }] } }, false, untilQuotaReset(NOW), 'youtube quota: rateLimitExceeded'],
    ['invalid key', 400, fixtureJson('youtube', 'error_400_keyInvalid.json'), true, undefined, 'HTTP 400'],
    ['expired token', 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', errors: [{ reason: 'authError' }] } }, true, undefined, 'HTTP 401'],
    ['members-only chat', 403, { error: { code: 403, message: 'forbidden', errors: [{ reason: 'forbidden' }] } }, true, undefined, `the live chat of youtube video ${VIDEO} is closed to this reader`],
    ['chat turned off', 403, { error: { code: 403, message: 'disabled', errors: [{ reason: 'liveChatDisabled' }] } }, true, undefined, `youtube video ${VIDEO} has its live chat turned off`],
    ['backend error', 503, { error: { code: 503 } }, false, undefined, 'HTTP 503'],
  ])('%s', async (_name, status, body, permanent, retryAfterMs, message) => {
    api.respond = answer(() => ({ status, body }));
    const error = await youtube.collect(live(VIDEO), { for: VIDEO, videoId: VIDEO, liveChatId: CHAT }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
    expect((error as Error).message).toContain(message);
  });

  it('needs a key or a connected account', async () => {
    await expect(youtube.collect(live(VIDEO), {}, ctx({}))).rejects.toMatchObject({ permanent: true, message: 'youtube live inputs need the Data API: set YOUTUBE_API_KEY' });
    expect(api.requests).toEqual([]);
  });
});
