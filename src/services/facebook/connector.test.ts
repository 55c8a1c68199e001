import { describe, expect, it } from 'vitest';
import { type FakeRequest, useFakeApi, fixtureBytes, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { facebook, postToItem } from './connector.ts';
import { graphNextRunAt } from '../kit/graph.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();
const fetcher = api.fetcher;
const ctx = (env: Record<string, string> = { FACEBOOK_ACCESS_TOKEN: 'page-token' }) =>
  ({ fetch: fetcher, now: NOW, services: loadConfig({ FACEBOOK_API_URL: `${api.base}/v25.0`, ...env }).services });
const page: SourceInput = { id: 'a'.repeat(24), service: 'facebook', type: 'page', input: 'FacebookforDevelopers' };

describe('facebook: page posts', () => {
  it('maps the feed fixture field by field and keeps the newest time as the cursor', async () => {
    api.respond = () => ({ body: fixtureBytes('facebook', 'page_feed_fields_p1.json'), headers: { 'content-type': 'application/json' } });
    const { items, state } = await facebook.collect(page, {}, ctx());
    expect(items.map((i) => i.id)).toEqual(fixtureJson('facebook', 'page_feed_fields_p1.json').data.map((p: { id: string }) => `facebook_${p.id}`));
    expect(items[0]).toMatchObject({
      service: 'facebook',
      type: 'image',
      url: 'https://www.facebook.com/19292868552/posts/10158349356748553/',
      date: '2021-07-09T19:09:52.000Z',
      author: { name: null, username: null, userid: '19292868552', url: 'https://www.facebook.com/19292868552' },
      media: [{ type: 'image', width: 720, height: 720,
        url: 'https://scontent-ssn1-1.xx.fbcdn.net/v/t1.6435-9/p720x720/211801276_10158349355018553_2104693261473191589_n.jpg?_nc_cat=101&ccb=1-3&_nc_sid=8024bb&_nc_ohc=XPjizdMqvkcAX8X4Q6l&_nc_ht=scontent-ssn1-1.xx&oh=92a00d7b2dc93cf00ee164b00f4a024f&oe=60F1D543' }],
      // 125 reactions + 2 × 10 shares + 13 comments
      kudos: { score: 158, facebook_likes: 125, facebook_shares: 10, facebook_comments: 13 },
    });
    expect(items[0]!.text).toContain('<a href="https://fb.me/Ninja-Van-Success-Story" rel="nofollow noopener">https://fb.me/Ninja-Van-Success-Story</a>');
    expect(items[0]).not.toHaveProperty('language');
    expect(items[0]).not.toHaveProperty('children'); // the fixture's comments.data is empty
    expect(items[1]).toMatchObject({ type: 'link', date: '2021-07-08T15:30:19.000Z' });
    const video = items[4]!;
    expect(video.type).toBe('video');
    expect(video.media![0]).toMatchObject({ type: 'embed' });
    expect((video.media![0] as { embed: string }).embed).toMatch(/^<iframe width="640" height="360" src="https:\/\/www\.facebook\.com\/plugins\/video\.php\?href=https%3A%2F%2F.+&amp;show_text=false"/);
    expect(state).toEqual({ since: Date.parse('2021-07-09T19:09:52Z') / 1000 });
    const [req] = api.requests;
    expect(req!.path).toBe('/v25.0/FacebookforDevelopers/posts');
    expect(req!.headers.authorization).toBe('Bearer page-token');
    expect(req!.query.get('fields')).toContain('comments.summary(total_count).limit(25)');
    expect(req!.query.get('since')).toBeNull();
  });

  it('maps album images and inline comments as children; sends since and follows the after cursor', async () => {
    const album = fixtureJson('facebook', 'post_album_attachments.json');
    const comment = { id: '10158407654328553_1', message: 'Nice #graph', created_time: '2021-08-10T18:45:03+0000', like_count: 2, from: { id: '42', name: 'Ann' } };
    api.respond = (req) => ({ body: req.query.get('after')
      ? { data: [] }
      : { data: [{ ...album, id: '565225540184937_4018908568149933', created_time: '2020-02-20T10:00:00+0000', comments: { data: [comment], summary: { total_count: 1 } } }],
          paging: { cursors: { after: 'QVFI' }, next: `${api.base}/next` } } });
    const { items } = await facebook.collect(page, { since: 1_500_000_000 }, ctx());
    expect(items[0]!.media!.length).toBe(album.attachments.data[0].subattachments.data.length);
    expect(items[0]!.media![0]).toMatchObject({ type: 'image', width: 720, height: 405 });
    expect(items[0]!.children).toEqual([{
      id: 'facebook_10158407654328553_1', service: 'facebook', type: 'comment',
      text: 'Nice <a href="https://www.facebook.com/hashtag/graph" rel="nofollow noopener">#graph</a>', tags: ['graph'], url: 'https://www.facebook.com/42',
      date: '2021-08-10T18:45:03.000Z', author: { name: 'Ann', username: null, userid: '42', url: 'https://www.facebook.com/42' },
      media: null, kudos: { score: 2, facebook_likes: 2 },
    }]);
    expect(api.requests.map((r) => r.query.get('since'))).toEqual(['1500000000', '1500000000']);
    expect(api.requests[1]!.query.get('after')).toBe('QVFI');
  });

  it('polls later when X-App-Usage is near 100 %', async () => {
    api.respond = () => ({ body: { data: [] }, headers: { 'x-app-usage': '{"call_count":95,"total_cputime":10,"total_time":12}' } });
    expect((await facebook.collect(page, {}, ctx())).nextRunAt).toBe(NOW + 3600_000);
    expect(graphNextRunAt({ 'x-business-use-case-usage': '{"1":[{"type":"pages","call_count":99,"total_cputime":1,"total_time":1,"estimated_time_to_regain_access":120}]}' }, NOW)).toBe(NOW + 7_200_000);
    expect(graphNextRunAt({ 'x-app-usage': '{"call_count":40}' }, NOW)).toBeUndefined();
  });

  it('reports a page that does not exist (#803) as permanent, with the message as before', async () => {
    api.respond = () => ({ status: 404, body: { error: { message: '(#803) Some of the aliases you requested do not exist: FacebookforDevelopers', type: 'OAuthException', code: 803 } } });
    const error = await facebook.collect(page, {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent: true, retryAfterMs: undefined, message: 'HTTP 404: (#803) Some of the aliases you requested do not exist: FacebookforDevelopers' });
  });

  it.each([
    ['permission error (#100)', 400, fixtureJson('facebook', 'error_100_permission.json'), true, undefined],
    ['bad token', 401, { error: { message: 'Invalid OAuth access token.', code: 190 } }, true, undefined],
    ['throttled (code 32) in a 403', 403, { error: { message: 'Page request limit reached', code: 32 } }, false, 3600_000],
    ['server error', 502, 'Bad Gateway', false, undefined],
  ])('%s', async (_name, status, body, permanent, retryAfterMs) => {
    api.respond = () => ({ status, body });
    const error = await facebook.collect(page, {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('reports malformed JSON and a missing token', async () => {
    api.respond = () => ({ body: '<html>' });
    await expect(facebook.collect(page, {}, ctx())).rejects.toThrow(/^malformed JSON/);
    await expect(facebook.collect(page, {}, ctx({}))).rejects.toMatchObject({ permanent: true, message: 'facebook is not configured: set FACEBOOK_ACCESS_TOKEN' });
  });
});

describe('facebook lookup (docs/services.md#re-verification)', () => {
  const lookup = facebook.lookup!;
  const posts: Array<Record<string, unknown> & { id: string }> = fixtureJson('facebook', 'page_feed_fields_p1.json').data;
  /** A post as the multiple-id read answers it: only the counters asked for. */
  const counters = (post: Record<string, unknown> & { id: string }) => ({ id: post.id, shares: post.shares, reactions: post.reactions, comments: post.comments });
  const byId = (...list: Array<Record<string, unknown> & { id: string }>) => Object.fromEntries(list.map((post) => [post.id, counters(post)]));

  it('reads up to 50 posts in one multiple-id read of their counters, and maps them as collect does', async () => {
    const [first, second, third] = posts;
    api.respond = () => ({ body: byId(first!, second!, third!) });
    const asked = [`facebook_${first!.id}`, `facebook_${second!.id}`, 'facebook_10158407654328553_1x', 'twitter_1001'];
    const { items, nextAt } = await lookup.lookup(page, asked, ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(50);
    expect(api.requests).toHaveLength(1);
    const [req] = api.requests;
    expect(req!.path).toBe('/v25.0/');
    expect(req!.query.get('ids')).toBe(`${first!.id},${second!.id}`);
    // A poll's fields: the lookup reads the whole post (docs/services.md#re-verification).
    expect(req!.query.get('fields')).toMatch(/^id,message,created_time,permalink_url,.*,shares,reactions\.summary\(total_count\)\.limit\(0\),comments\.summary/);
    expect(req!.headers.authorization).toBe('Bearer page-token');
    // A post the lookup did not ask for is not taken.
    expect(Object.fromEntries(kudos)).toEqual({
      [`facebook_${first!.id}`]: { score: 158, facebook_likes: 125, facebook_shares: 10, facebook_comments: 13 },
      [`facebook_${second!.id}`]: postToItem(second!, NOW).kudos,
    });
    expect(nextAt).toBeUndefined();
  });

  it('asks nothing for ids that are not page posts', async () => {
    expect((await lookup.lookup(page, ['facebook_42', 'facebook_', 'vk_1_2'], ctx())).items.size).toBe(0);
    expect(api.requests).toHaveLength(0);
  });

  it('holds further lookups for an hour when X-App-Usage is near 100 %', async () => {
    api.respond = () => ({ body: byId(posts[0]!), headers: { 'x-app-usage': '{"call_count":95,"total_cputime":10,"total_time":12}' } });
    const { items, nextAt } = await lookup.lookup(page, [`facebook_${posts[0]!.id}`], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(kudos.size).toBe(1);
    expect(nextAt).toBe(NOW + 3600_000);
  });

  it.each([
    ['throttled (code 32) in a 403', 403, { error: { message: 'Page request limit reached', code: 32 } }, false, 3600_000],
    ['application limit (code 4) in a 400', 400, { error: { message: 'Application request limit reached', code: 4 } }, false, 3600_000],
    ['permission error (#100)', 400, fixtureJson('facebook', 'error_100_permission.json'), true, undefined],
    ['bad token', 401, { error: { message: 'Invalid OAuth access token.', code: 190 } }, true, undefined],
    ['server error', 502, 'Bad Gateway', false, undefined],
  ])('%s', async (_name, status, body, permanent, retryAfterMs) => {
    api.respond = () => ({ status, body });
    const error = await lookup.lookup(page, [`facebook_${posts[0]!.id}`], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  describe('a post that no longer exists, which fails the whole read', () => {
    const [first, second, third] = posts;
    const asked = [first!, second!, third!].map((post) => `facebook_${post.id}`);
    const missing = (code: number, message: string) => ({ status: code === 803 ? 404 : 400, body: { error: { message, type: 'OAuthException', code, fbtrace_id: 'AbC' } } });
    /** Answers the error while any of `deleted` is asked, else the counters of the posts asked. */
    const graph = (deleted: string[], error: (ids: string[]) => ReturnType<typeof missing>) => (req: FakeRequest) => {
      const ids = req.query.get('ids')!.split(',');
      const gone = ids.filter((id) => deleted.includes(id));
      return gone.length ? error(gone) : { body: byId(...posts.filter((post) => ids.includes(post.id))) };
    };

    it.each([
      ['#803 naming one post', [second!.id], (ids: string[]) => missing(803, `(#803) Some of the aliases you requested do not exist: ${ids.join(',')}`)],
      ['#803 naming two posts', [first!.id, third!.id], (ids: string[]) => missing(803, `(#803) Some of the aliases you requested do not exist: ${ids.join(',')}`)],
      ['#100 "Object with ID … does not exist"', [third!.id], (ids: string[]) =>
        missing(100, `Unsupported get request. Object with ID '${ids[0]}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`)],
    ])('%s: asks once more without them, and reads the rest', async (_name, deleted, error) => {
      api.respond = graph(deleted, error);
      const { items, gone } = await lookup.lookup(page, asked, ctx());
      // #803 says the posts do not exist: deleted; #100 may be a missing permission: not gone.
      expect([...gone.keys()].sort()).toEqual(_name.startsWith('#803') ? deleted.map((id) => `facebook_${id}`).sort() : []);
      const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
      expect(api.requests.map((req) => req.query.get('ids'))).toEqual([
        [first, second, third].map((post) => post!.id).join(','),
        [first, second, third].map((post) => post!.id).filter((id) => !deleted.includes(id)).join(','),
      ]);
      expect([...kudos.keys()].sort()).toEqual(asked.filter((id) => !deleted.some((gone) => id === `facebook_${gone}`)).sort());
      for (const [id, value] of kudos) expect(value).toEqual(postToItem(posts.find((post) => `facebook_${post.id}` === id)!, NOW).kudos);
    });

    it('asks nothing more when every post asked is gone', async () => {
      api.respond = () => missing(803, `(#803) Some of the aliases you requested do not exist: ${first!.id}`);
      expect((await lookup.lookup(page, [asked[0]!], ctx())).items.size).toBe(0);
      expect(api.requests).toHaveLength(1);
    });

    it('fails the batch, after one more read only, when the second read names another post', async () => {
      // Meta named only the first missing post; the second read fails on the next one.
      api.respond = (req) => missing(100, `Object with ID '${req.query.get('ids')!.split(',')[0]}' does not exist`);
      const error = await lookup.lookup(page, asked, ctx()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect(error).toMatchObject({ permanent: true, message: `HTTP 400: Object with ID '${second!.id}' does not exist` });
      expect(api.requests.map((req) => req.query.get('ids'))).toEqual([`${first!.id},${second!.id},${third!.id}`, `${second!.id},${third!.id}`]);
    });

    it.each([
      ['names no id', 803, '(#803) Some of the aliases you requested do not exist'],
      ['names ids not asked', 803, '(#803) Some of the aliases you requested do not exist: FacebookforDevelopers,1_2'],
      ['is a permission error that quotes a permission, not an id', 100, String(fixtureJson('facebook', 'error_100_permission.json').error.message)],
      ['names an id with another code', 190, `Object with ID '${first!.id}' does not exist`],
    ])('an error that %s fails the batch with one request, never one per post', async (_name, code, message) => {
      api.respond = () => missing(code, message);
      const error = await lookup.lookup(page, asked, ctx()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect(error).toMatchObject({ permanent: true, message: `HTTP ${code === 803 ? 404 : 400}: ${message}` });
      expect(api.requests).toHaveLength(1);
    });
  });

  it('needs the token, and an answer keyed by id', async () => {
    await expect(lookup.lookup(page, [`facebook_${posts[0]!.id}`], ctx({}))).rejects.toMatchObject({ permanent: true, message: 'facebook is not configured: set FACEBOOK_ACCESS_TOKEN' });
    api.respond = () => ({ body: [] });
    await expect(lookup.lookup(page, [`facebook_${posts[0]!.id}`], ctx())).rejects.toMatchObject({ permanent: false, message: 'facebook answered without posts by id' });
  });
});
