/**
 * The Threads connector on the recorded payloads (test/fixtures/threads/, a local server):
 * every type field by field, paging across two polls, and the failures the Graph API reports.
 */
import { describe, expect, it } from 'vitest';
import { type FakeRequest, fixtureBytes, useFakeApi } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { FIELDS, threads } from './connector.ts';
import { checkThreadsInput } from './row.ts';
import { threadsSearches } from './index.ts';
import { utcDay } from '../../lib/quota-windows.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const ctx = (env: Record<string, string> = { THREADS_ACCESS_TOKEN: 'th-token' }) =>
  ({ fetch: api.fetcher, now: NOW, services: loadConfig({ THREADS_API_URL: `${api.base}/v1.0`, ...env }).services });
const input = (type: string, value: string): SourceInput => ({ id: 'a'.repeat(24), service: 'threads', type, input: value });
const raw = (file: string, status = 200, headers: Record<string, string> = {}) => ({ status, body: fixtureBytes('threads', file), headers: { 'content-type': 'application/json', ...headers } });
const AUTHOR = { name: null, username: 'threadsapitestuser', userid: '1234567', url: 'https://www.threads.com/@threadsapitestuser' };

describe('threads: user (GET /me/threads)', () => {
  it('maps the docs sample field by field, asks the fields explicitly with a Bearer token', async () => {
    api.respond = () => raw('me_threads_docs_sample.json');
    const { items, state } = await threads.collect(input('user', 'me'), {}, ctx());
    expect(items).toEqual([{
      id: 'threads_1234567', service: 'threads', type: 'status', text: 'Today Is Monday', tags: [],
      url: 'https://www.threads.net/@threadsapitestuser/post/abcdefg', date: '2023-10-17T05:42:03.000Z',
      author: AUTHOR, media: null, kudos: { score: 0 },
    }]);
    const [req] = api.requests;
    expect(req!.path).toBe('/v1.0/me/threads');
    expect(req!.headers.authorization).toBe('Bearer th-token');
    expect(req!.query.get('fields')).toBe(FIELDS);
    expect(req!.query.get('fields')).toMatch(/^id,media_type,media_url,permalink,text,timestamp,username,.*children\{/);
    expect(req!.query.get('since')).toBeNull();
    expect(req!.query.get('access_token')).toBeNull(); // the token stays out of URLs
    expect(state).toEqual({ seen: { latest: '2023-10-17T05:42:03.000Z', ids: ['1234567'] } });
  });

  it('maps a carousel (children as media, alt text kept), a video and an image', async () => {
    api.respond = () => raw('me_threads_media_p1.json');
    const { items } = await threads.collect(input('user', 'me'), {}, ctx());
    expect(items.map((i) => [i.id, i.type])).toEqual([['threads_18050206876707110', 'image'], ['threads_18050206876707120', 'video'], ['threads_18050206876707130', 'image']]);
    expect(items[0]).toEqual({
      id: 'threads_18050206876707110', service: 'threads', type: 'image',
      text: 'Two photos and a clip from the <a href="https://www.threads.com/search?q=harbour&amp;serp_type=tags" rel="nofollow noopener">#harbour</a> walk with '
        + '<a href="https://www.threads.com/@friend.ly" rel="nofollow noopener">@friend.ly</a> <a href="https://example.com/walk" rel="nofollow noopener">https://example.com/walk</a>',
      tags: ['harbour'], url: 'https://www.threads.net/@threadsapitestuser/post/C6ZCarousel', date: '2024-05-06T18:30:00.000Z', author: AUTHOR,
      media: [
        { type: 'image', url: 'https://scontent.cdninstagram.com/v/t51.2885-15/harbour_1.jpg?stp=dst-jpg&_nc_cat=1', alt: 'Boats at the harbour at dusk' },
        { type: 'image', url: 'https://scontent.cdninstagram.com/v/t51.2885-15/harbour_2.jpg' },
        { type: 'embed', url: 'https://scontent.cdninstagram.com/o1/v/t16/harbour_3.mp4',
          embed: '<video controls src="https://scontent.cdninstagram.com/o1/v/t16/harbour_3.mp4" poster="https://scontent.cdninstagram.com/v/t51.2885-15/harbour_3_thumb.jpg"></video>' },
      ],
      kudos: { score: 0 },
    });
    expect(items[1]!.media).toEqual([{ type: 'embed', url: 'https://scontent.cdninstagram.com/o1/v/t16/waves.mp4',
      embed: '<video controls src="https://scontent.cdninstagram.com/o1/v/t16/waves.mp4" poster="https://scontent.cdninstagram.com/v/t51.2885-15/waves_thumb.jpg"></video>' }]);
    expect(items[2]!.media).toEqual([{ type: 'image', url: 'https://scontent.cdninstagram.com/v/t51.2885-15/lighthouse.jpg', alt: 'A white lighthouse on a cliff' }]);
  });

  it('pages across two polls: the first reads one page, the next sends since and follows the after cursor until it reaches what it saw', async () => {
    api.respond = () => raw('me_threads_media_p2.json');
    const first = await threads.collect(input('user', 'me'), {}, ctx());
    expect(first.items.map((i) => i.id)).toEqual(['threads_18050206876707140']);
    expect(api.requests).toHaveLength(1);
    api.requests.length = 0;
    // Three newer threads arrived; the second page ends with the one already collected.
    api.respond = (req: FakeRequest) => raw(req.query.get('after') === 'QVFIUkltYWdl' ? 'me_threads_media_p2.json' : 'me_threads_media_p1.json');
    const second = await threads.collect(input('user', 'me'), first.state, ctx());
    expect(second.items.map((i) => i.id)).toEqual(['threads_18050206876707110', 'threads_18050206876707120', 'threads_18050206876707130']);
    expect(api.requests.map((r) => [r.query.get('since'), r.query.get('after')])).toEqual([
      [String(Date.parse('2024-05-06T15:00:00Z') / 1000 - 1), null],
      [String(Date.parse('2024-05-06T15:00:00Z') / 1000 - 1), 'QVFIUkltYWdl'],
    ]);
    expect(second.state).toEqual({ seen: { latest: '2024-05-06T18:30:00.000Z', ids: ['18050206876707110'] } });
    api.requests.length = 0;
    api.respond = () => ({ body: { data: [] } });
    expect((await threads.collect(input('user', 'me'), second.state, ctx())).items).toEqual([]);
  });

  it("checks once that a named username is the connected account's, and refuses another", async () => {
    api.respond = (req: FakeRequest) => (req.path === '/v1.0/me' ? { body: { id: '1234567', username: 'ThreadsApiTestUser' } } : raw('me_threads_docs_sample.json'));
    const first = await threads.collect(input('user', '@threadsapitestuser'), {}, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/v1.0/me', '/v1.0/me/threads']);
    expect(api.requests[0]!.query.get('fields')).toBe('id,username');
    expect(first.state.account).toBe('threadsapitestuser');
    api.requests.length = 0;
    await threads.collect(input('user', 'threadsapitestuser'), first.state, ctx());
    expect(api.requests.map((r) => r.path)).toEqual(['/v1.0/me/threads']);
    api.requests.length = 0;
    const error = await threads.collect(input('mention', '@zuck'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent: true, message: expect.stringContaining('this credential is @threadsapitestuser, not @zuck') });
    expect(api.requests.map((r) => r.path)).toEqual(['/v1.0/me']);
  });
});

describe('threads: keyword (GET /keyword_search)', () => {
  it('searches the most recent posts and maps the docs sample field by field (its TEXT media type a status)', async () => {
    api.respond = () => raw('keyword_search_docs_sample.json');
    const { items, state } = await threads.collect(input('keyword', ' First Thread '), {}, ctx());
    const [req] = api.requests;
    expect(req!.path).toBe('/v1.0/keyword_search');
    expect(Object.fromEntries(req!.query)).toEqual({ q: 'First Thread', search_type: 'RECENT', fields: FIELDS, limit: '25' });
    expect(items).toEqual([{
      id: 'threads_1234567890', service: 'threads', type: 'status', text: 'First Thread', tags: [],
      url: 'https://www.threads.net/@threadsapitestuser/post/abcdefg', date: '2023-10-17T05:42:03.000Z',
      author: { ...AUTHOR, userid: null }, // keyword search never returns `owner`
      media: null, kudos: { score: 0 },
    }]);
    api.requests.length = 0;
    expect((await threads.collect(input('keyword', 'First Thread'), state, ctx())).items).toEqual([]);
    expect(api.requests[0]!.query.get('since')).toBe(String(Date.parse('2023-10-17T05:42:03Z') / 1000 - 1));
  });
});

describe('threads: mention (GET /me/mentions)', () => {
  it("maps others' posts that mention the account, field by field, and follows only cursors (no since)", async () => {
    api.respond = () => raw('mentions_p1.json');
    const first = await threads.collect(input('mention', 'me'), {}, ctx());
    expect(api.requests[0]!.path).toBe('/v1.0/me/mentions');
    expect(first.items[1]).toEqual({
      id: 'threads_17930333123456789', service: 'threads', type: 'image',
      text: 'Photo by <a href="https://www.threads.com/@threadsapitestuser" rel="nofollow noopener">@threadsapitestuser</a>', tags: [],
      url: 'https://www.threads.net/@ashlandphotos/post/C7AMention2', date: '2024-05-07T08:00:00.000Z',
      author: { name: null, username: 'ashlandphotos', userid: null, url: 'https://www.threads.com/@ashlandphotos' },
      media: [{ type: 'image', url: 'https://scontent.cdninstagram.com/v/t51.2885-15/mention_photo.jpg' }], kudos: { score: 0 },
    });
    expect(first.items[0]).toMatchObject({ type: 'status', tags: ['weekend'], author: { username: 'keldorwalks' } });
    api.requests.length = 0;
    api.respond = () => raw('mentions_p1.json');
    expect((await threads.collect(input('mention', 'me'), first.state, ctx())).items).toEqual([]);
    expect(api.requests.map((r) => r.query.get('since'))).toEqual([null]);
  });
});

describe('threads: failures', () => {
  it('names the missing credential', async () => {
    await expect(threads.collect(input('user', 'me'), {}, ctx({}))).rejects.toMatchObject({ permanent: true, message: 'threads is not configured: set THREADS_ACCESS_TOKEN' });
    expect(api.requests).toEqual([]);
  });

  it.each([
    ['an expired token (code 190)', 'error_190_expired.json', 400, {}, true, undefined, /^HTTP 400: Error validating access token: Session has expired/],
    ['a rate limit (code 4) with the time to regain access', 'error_4_rate_limit.json', 403, { 'x-app-usage': '{"call_count":100,"total_cputime":20,"total_time":25}', 'x-business-use-case-usage': '{"1234567":[{"type":"threads","call_count":100,"estimated_time_to_regain_access":45}]}' }, false, 45 * 60_000, /^threads rate limit \(code 4\)/],
    ['a rate limit (code 4) without usage headers: an hour', 'error_4_rate_limit.json', 400, {}, false, 3600_000, /^threads rate limit/],
    ['not found (code 100)', 'error_100_not_found.json', 400, {}, true, undefined, /^HTTP 400: Unsupported get request/],
    ['forbidden (code 10, a permission not granted)', 'error_10_permission.json', 403, {}, true, undefined, /^HTTP 403: \(#10\) Application does not have permission/],
  ])('%s', async (_name, file, status, headers, permanent, retryAfterMs, message) => {
    api.respond = () => raw(file, status, headers);
    const error = await threads.collect(input('mention', 'me'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
    expect((error as Error).message).toMatch(message);
  });

  it('polls later when a usage header is at 90 % or more (before Meta refuses)', async () => {
    api.respond = () => raw('me_threads_docs_sample.json', 200, { 'x-app-usage': '{"call_count":92,"total_cputime":5,"total_time":5}' });
    expect((await threads.collect(input('user', 'me'), {}, ctx())).nextRunAt).toBe(NOW + 3600_000);
  });
});

describe('threads: input check', () => {
  it.each([
    ['keyword', 'coffee', null],
    ['keyword', 'first thread', null],
    ['keyword', '', 'input of a threads keyword input must be 1 to 100 characters on one line'],
    ['keyword', '   ', 'input of a threads keyword input must be 1 to 100 characters on one line'],
    ['keyword', 'x'.repeat(101), 'input of a threads keyword input must be 1 to 100 characters on one line'],
    ['keyword', 'two\nlines', 'input of a threads keyword input must be 1 to 100 characters on one line'],
    ['user', 'me', null],
    ['user', '@threadsapitestuser', null],
    ['mention', 'some.user_1', null],
    ['user', 'https://www.threads.com/@zuck', expect.stringContaining("must be me or the connected account's Threads username")],
    ['mention', '@' + 'a'.repeat(31), expect.stringContaining('must be me')],
    ['user', 'zuck zuck', expect.stringContaining('must be me')],
  ])('%s %j', (type, text, problem) => {
    expect(checkThreadsInput(text, type)).toEqual(problem);
  });
});

describe('threads: what a call counts against the keyword searches quota', () => {
  const API = 'https://graph.threads.net/v1.0';
  const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  it.each([
    [`${API}/keyword_search?q=a`, { data: [{ id: '1' }] }, 1],
    [`${API}/keyword_search?q=a&after=x`, { data: [] }, 0], // found nothing: Meta does not count it
    [`${API}/keyword_search?q=a`, 'not json', 0],
    [`${API}/me/threads`, { data: [{ id: '1' }] }, 0],
    [`${API}/me/mentions`, { data: [{ id: '1' }] }, 0],
    ['https://elsewhere.example/v1.0/keyword_search', { data: [{ id: '1' }] }, 0],
    [`${API}/keyword_search/extra`, { data: [{ id: '1' }] }, 0],
  ])('%s %j → %i', (url, answer, searches) => {
    expect(threadsSearches(url, body(answer), API)).toBe(searches);
  });

  it.each([
    ['2026-11-27T20:59:59.999Z', '2026-11-27', '2026-11-28T00:00:00.000Z'],
    ['2026-12-31T23:00:00.000Z', '2026-12-31', '2027-01-01T00:00:00.000Z'],
    ['2028-02-28T00:00:00.000Z', '2028-02-28', '2028-02-29T00:00:00.000Z'],
  ])('the UTC day of %s is %s, ending %s', (at, key, end) => {
    expect(utcDay(Date.parse(at))).toEqual({ key, resetsAt: Date.parse(end) });
  });
});
