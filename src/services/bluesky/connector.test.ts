import { describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { bluesky, blueskyItem, blueskyPostUri, facetsToHtml, jetstreamDeletedId, jetstreamItem } from './connector.ts';

// The postView is real (getPostThread_postView_recordWithMedia.json: `thread.post`); the
// getAuthorFeed ({cursor, feed:[{post, reason?}]}) and searchPosts ({cursor, hitsTotal, posts})
// envelopes around it are built from the documented shapes (docs/services.md#bluesky), as no recorded
// envelope was saved.
const thread = fixtureJson('bluesky/getPostThread_postView_recordWithMedia.json') as { thread: { post: Record<string, unknown> } };
const post = thread.thread.post;
const NOW = Date.parse('2030-01-01T00:00:00Z');
const newer = { ...post, uri: 'at://did:plc:kvwvcn5iqfooopmyzvb4qzba/app.bsky.feed.post/3kzzzzzzzzz22',
  record: { ...(post.record as object), createdAt: '2023-10-01T08:00:00.123456+00:00', text: 'new #post' }, indexedAt: '2023-10-01T08:00:01.000Z',
  likeCount: 4, repostCount: 1, replyCount: 2, quoteCount: 1 };

const server = useSourceServer();
const fetcher = server.fetcher;
const ctx = (extra: Record<string, string> = {}) => ({
  fetch: fetcher,
  services: loadConfig({ BLUESKY_API_URL: `${server.base}/appview`, BLUESKY_PDS_URL: `${server.base}/pds`, ...extra }).services,
  now: NOW,
});
const creds = { BLUESKY_IDENTIFIER: 'me.bsky.social', BLUESKY_APP_PASSWORD: 'app-pass' };
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'bluesky', type, input: value });


describe('bluesky', () => {
  it('maps the recorded postView field by field', () => {
    expect(blueskyItem(post)).toEqual({
      id: 'bluesky_did:plc:kvwvcn5iqfooopmyzvb4qzba_3kaheyt6vpc22',
      service: 'bluesky',
      type: 'image', // recordWithMedia: typed by its media
      text: '',
      tags: [],
      url: 'https://bsky.app/profile/test.marshal.dev/post/3kaheyt6vpc22',
      date: '2023-09-28T12:49:36.735Z',
      author: { name: 'Python SDK', username: 'test.marshal.dev', userid: 'did:plc:kvwvcn5iqfooopmyzvb4qzba', url: 'https://bsky.app/profile/test.marshal.dev' },
      media: [{ type: 'image', url: 'https://cdn.bsky.app/img/feed_fullsize/plain/did:plc:kvwvcn5iqfooopmyzvb4qzba/bafkreic3cp5ky525vsukjvrzxsc2h3jka2gud74l2hgeatw2rhj2qycnmq@jpeg' }],
      kudos: { score: 0, bluesky_likes: 0, bluesky_reposts: 0, bluesky_replies: 0 },
      language: 'en',
    });
  });

  it('turns facets (UTF-8 byte ranges) into escaped links', () => {
    const text = 'héllo <b> @al.bsky.social see https://x.org #tag';
    const at = (s: string) => Buffer.byteLength(text.slice(0, text.indexOf(s)));
    const facet = (s: string, feature: object) => ({ index: { byteStart: at(s), byteEnd: at(s) + Buffer.byteLength(s) }, features: [feature] });
    expect(facetsToHtml(text, [
      facet('@al.bsky.social', { $type: 'app.bsky.richtext.facet#mention', did: 'did:plc:al' }),
      facet('https://x.org', { $type: 'app.bsky.richtext.facet#link', uri: 'https://x.org/"q' }),
      facet('#tag', { $type: 'app.bsky.richtext.facet#tag', tag: 'tag' }),
    ])).toBe('héllo &lt;b&gt; <a href="https://bsky.app/profile/did%3Aplc%3Aal" rel="nofollow noopener">@al.bsky.social</a> see '
      + '<a href="https://x.org/%22q" rel="nofollow noopener">https://x.org</a> <a href="https://bsky.app/hashtag/tag" rel="nofollow noopener">#tag</a>');
  });

  it('reads an author feed without auth, skips reposts, and reads only newer posts next time', async () => {
    const repost = { post: { ...post, uri: 'at://did:plc:other/app.bsky.feed.post/3krepost' }, reason: { $type: 'app.bsky.feed.defs#reasonRepost' } };
    server.handle(() => ({ body: { cursor: 'c1', feed: [repost, { post }] } }));
    const first = await bluesky.collect(input('user', '@test.marshal.dev'), {}, ctx());
    const req = server.requests[0]!;
    expect(req.parsed.pathname).toBe('/appview/xrpc/app.bsky.feed.getAuthorFeed');
    expect(Object.fromEntries(req.parsed.searchParams)).toEqual({ actor: 'test.marshal.dev', filter: 'posts_no_replies', limit: '50' });
    expect(req.headers.authorization).toBeUndefined();
    expect(first.items.map((i) => i.id)).toEqual(['bluesky_did:plc:kvwvcn5iqfooopmyzvb4qzba_3kaheyt6vpc22']);
    expect(server.requests).toHaveLength(1); // one page on the first poll

    server.handle((r) => ({ body: r.parsed.searchParams.get('cursor') ? { feed: [{ post }] } : { cursor: 'c2', feed: [{ post: newer }] } }));
    const second = await bluesky.collect(input('user', 'test.marshal.dev'), first.state, ctx());
    expect(server.requests.slice(1).map((r) => r.parsed.searchParams.get('cursor'))).toEqual([null, 'c2']);
    expect(second.items).toEqual([expect.objectContaining({
      id: 'bluesky_did:plc:kvwvcn5iqfooopmyzvb4qzba_3kzzzzzzzzz22', type: 'image', date: '2023-10-01T08:00:00.123Z',
      text: 'new <a href="https://bsky.app/hashtag/post" rel="nofollow noopener">#post</a>',
      kudos: { score: 4 + 2 + 2, bluesky_likes: 4, bluesky_reposts: 1, bluesky_replies: 2, bluesky_quotes: 1 } })]);
    expect(second.state).toEqual({ latest: '2023-10-01T08:00:00.123Z', ids: [newer.uri] });
  });

  it('searches keywords through the PDS with an app-password session, kept in memory', async () => {
    server.handle((r) => (r.parsed.pathname.endsWith('createSession')
      ? { body: { accessJwt: 'jwt-1', refreshJwt: 'r', did: 'did:plc:me', handle: 'me.bsky.social' } }
      : { body: { hitsTotal: 1, posts: [post] } }));
    const { items, state } = await bluesky.collect(input('keyword', 'python sdk'), {}, ctx(creds));
    const [login, search] = server.requests;
    expect(login).toMatchObject({ method: 'POST', url: '/pds/xrpc/com.atproto.server.createSession' });
    expect(JSON.parse(login!.body)).toEqual({ identifier: 'me.bsky.social', password: 'app-pass' });
    expect(search!.parsed.pathname).toBe('/pds/xrpc/app.bsky.feed.searchPosts');
    expect(Object.fromEntries(search!.parsed.searchParams)).toEqual({ q: 'python sdk', sort: 'latest', limit: '50' });
    expect(search!.headers.authorization).toBe('Bearer jwt-1');
    expect(items).toHaveLength(1);
    expect(JSON.stringify(state)).not.toContain('jwt');

    server.requests.length = 0;
    server.handle(() => ({ body: { posts: [] } }));
    await bluesky.collect(input('keyword', 'python sdk'), state, ctx(creds));
    expect(server.requests.map((r) => r.parsed.pathname)).toEqual(['/pds/xrpc/app.bsky.feed.searchPosts']);
    expect(server.requests[0]!.parsed.searchParams.get('since')).toBe('2023-09-28T12:49:36.735Z');
  });

  it('logs in again when the session expired', async () => {
    let logins = 0;
    server.handle((r) => {
      if (r.parsed.pathname.endsWith('createSession')) return { body: { accessJwt: `jwt-${++logins + 10}` } };
      return r.headers.authorization === 'Bearer jwt-12' ? { body: { posts: [] } } : { status: 400, body: { error: 'ExpiredToken', message: 'Token has expired' } };
    });
    await bluesky.collect(input('keyword', 'fresh'), {}, ctx({ ...creds, BLUESKY_IDENTIFIER: 'other.bsky.social' }));
    expect(logins).toBe(2);
  });

  it('reports a refused login for good', async () => {
    server.handle(() => ({ status: 401, body: { error: 'AuthenticationRequired', message: 'Invalid identifier or password' } }));
    await expect(bluesky.collect(input('keyword', 'x'), {}, ctx({ ...creds, BLUESKY_IDENTIFIER: 'bad.bsky.social' }))).rejects.toMatchObject({
      permanent: true, message: 'bluesky login failed: HTTP 401: Invalid identifier or password' });
  });

  it('names the missing variables for keyword search and calls nothing', async () => {
    await expect(bluesky.collect(input('keyword', 'x'), {}, ctx())).rejects.toMatchObject({
      permanent: true, message: 'bluesky keyword search is not configured: set BLUESKY_IDENTIFIER and BLUESKY_APP_PASSWORD' });
    expect(server.requests).toHaveLength(0);
  });

  it('collects nothing, without failing, for a keyword input Jetstream serves and no credential (docs/services.md#bluesky-jetstream)', async () => {
    const state = { latest: '2026-01-01T00:00:00.000Z' };
    expect(await bluesky.collect({ ...input('keyword', 'x'), feedMode: 'stream' }, state, ctx())).toEqual({ items: [], state });
    expect(server.requests).toHaveLength(0);
    // Not streamed (the stream is off or lost): the missing credential is said.
    await expect(bluesky.collect({ ...input('keyword', 'x'), feedMode: 'poll' }, {}, ctx())).rejects.toMatchObject({ permanent: true });
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await bluesky.collect(input('user', 'test.marshal.dev'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});

describe('bluesky lookup (docs/services.md#re-verification)', () => {
  const lookup = bluesky.lookup!;
  const id = (p: Record<string, unknown>) => blueskyItem(p)!.id;

  it.each([
    ['bluesky_did:plc:kvwvcn5iqfooopmyzvb4qzba_3kaheyt6vpc22', 'at://did:plc:kvwvcn5iqfooopmyzvb4qzba/app.bsky.feed.post/3kaheyt6vpc22'],
    ['bluesky_did:web:example.com_3kxyz', 'at://did:web:example.com/app.bsky.feed.post/3kxyz'],
    ['bluesky_did:plc:abc', null], // no record key
    ['bluesky_3kxyz', null],
    ['bluesky_did:plc:abc_3k/../x', null],
    ['twitter_1001', null],
    ['', null],
  ])('reads the post URI of %j', (itemId, uri) => {
    expect(blueskyPostUri(itemId)).toBe(uri);
  });

  it('reads up to 25 posts with getPosts on the public AppView, without auth, and maps them as collect does', async () => {
    const bumped = { ...post, likeCount: 7, repostCount: 3, replyCount: 1, quoteCount: 2 };
    const stranger = { ...post, uri: 'at://did:plc:other/app.bsky.feed.post/3kstranger', likeCount: 99 };
    server.handle(() => ({ body: { posts: [bumped, newer, stranger] } }));
    const asked = [id(post), id(newer), 'twitter_1001', 'bluesky_did:plc:gone_3kgone'];
    const { items, gone, nextAt } = await lookup.lookup(input('keyword', 'python sdk'), asked, ctx(creds));
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(lookup.batch).toBe(25);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.parsed.pathname).toBe('/appview/xrpc/app.bsky.feed.getPosts');
    expect(req!.parsed.searchParams.getAll('uris')).toEqual([post.uri, newer.uri, 'at://did:plc:gone/app.bsky.feed.post/3kgone']);
    expect(req!.headers.authorization).toBeUndefined();
    // The post the lookup did not ask for is not taken; the one the AppView no longer has is absent.
    expect(Object.fromEntries(kudos)).toEqual({
      [id(post)]: { score: 7 + 2 * 3 + 1, bluesky_likes: 7, bluesky_reposts: 3, bluesky_replies: 1, bluesky_quotes: 2 },
      [id(newer)]: blueskyItem(newer)!.kudos,
    });
    // getPosts leaves out posts that no longer exist (https://docs.bsky.app/docs/api/app-bsky-feed-get-posts): gone.
    expect(Object.fromEntries(gone)).toEqual({ 'bluesky_did:plc:gone_3kgone': 'gone' });
    expect(nextAt).toBeUndefined();
  });

  it('asks nothing for ids that are not Bluesky posts', async () => {
    expect((await lookup.lookup(input('user', 'x'), ['twitter_1', 'bluesky_nope'], ctx())).items.size).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('holds further lookups until ratelimit-reset when ratelimit-remaining is 0', async () => {
    server.handle(() => ({ headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': String(NOW / 1000 + 300) }, body: { posts: [post] } }));
    const { items, nextAt } = await lookup.lookup(input('user', 'x'), [id(post)], ctx());
    const kudos = new Map([...items].map(([id, item]) => [id, item.kudos]));
    expect(kudos.size).toBe(1);
    expect(nextAt).toBe(NOW + 300_000);
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await lookup.lookup(input('user', 'x'), [id(post)], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('fails, transiently, on an answer without a list of posts', async () => {
    server.handle(() => ({ body: { feed: [] } }));
    await expect(lookup.lookup(input('user', 'x'), [id(post)], ctx())).rejects.toMatchObject({ permanent: false, message: 'bluesky answered without a list of posts' });
  });
});

describe('jetstreamItem', () => {
  const event = (record: Record<string, unknown>, operation = 'create') => ({
    did: 'did:plc:abc', time_us: 1_767_225_600_000_000, kind: 'commit',
    commit: { operation, collection: 'app.bsky.feed.post', rkey: '3kxyz', cid: 'bafyx', record: { text: 'hi #news', createdAt: '2026-01-01T00:00:00.000Z', langs: ['de'], ...record } },
  });
  it('reads a streamed post as blueskyItem reads a fetched one, images as CDN URLs', () => {
    const item = jetstreamItem(event({
      facets: [{ index: { byteStart: 3, byteEnd: 8 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'news' }] }],
      embed: { $type: 'app.bsky.embed.images', images: [{ image: { $type: 'blob', ref: { $link: 'bafyimg' }, mimeType: 'image/jpeg' }, alt: '', aspectRatio: { width: 4, height: 3 } }] },
    }), { handle: 'abc.test', displayName: 'Abc' });
    expect(item).toMatchObject({
      id: 'bluesky_did:plc:abc_3kxyz', type: 'image', tags: ['news'], url: 'https://bsky.app/profile/abc.test/post/3kxyz',
      date: '2026-01-01T00:00:00.000Z', author: { name: 'Abc', username: 'abc.test', userid: 'did:plc:abc' }, language: 'de',
      media: [{ url: 'https://cdn.bsky.app/img/feed_fullsize/plain/did%3Aplc%3Aabc/bafyimg@jpeg' }],
    });
  });
  it('stands the DID in for an unknown author, and reads nothing but post creations and updates', () => {
    expect(jetstreamItem(event({}), undefined)).toMatchObject({ url: 'https://bsky.app/profile/did%3Aplc%3Aabc/post/3kxyz', author: { userid: 'did:plc:abc' } });
    expect(jetstreamItem(event({}, 'delete'), undefined)).toBeNull();
    expect(jetstreamItem({ ...event({}), commit: { ...event({}).commit, collection: 'app.bsky.feed.like' } }, undefined)).toBeNull();
  });
});

describe('jetstreamDeletedId', () => {
  const commit = (commitPart: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
    did: 'did:plc:abc', time_us: 1_767_225_600_000_000, kind: 'commit',
    commit: { rev: 'r1', operation: 'delete', collection: 'app.bsky.feed.post', rkey: '3kxyz', ...commitPart }, ...top,
  });
  it.each([
    ['a post deleted: the id it was stored under', commit({}), 'bluesky_did:plc:abc_3kxyz'],
    ['a did:web author', commit({}, { did: 'did:web:example.com' }), 'bluesky_did:web:example.com_3kxyz'],
    ['a post created: not a deletion', commit({ operation: 'create', record: { text: 'x' } }), null],
    ['a post updated: not a deletion', commit({ operation: 'update', record: { text: 'x' } }), null],
    ['a like deleted: not a post', commit({ collection: 'app.bsky.feed.like' }), null],
    ['a repost deleted: not a post', commit({ collection: 'app.bsky.feed.repost' }), null],
    ['an identity event', { did: 'did:plc:abc', kind: 'identity', identity: { did: 'did:plc:abc' } }, null],
    ['no rkey', commit({ rkey: undefined }), null],
    ['an rkey with a slash', commit({ rkey: '../x' }), null],
    ['no did', commit({}, { did: undefined }), null],
  ])('%s', (_name, event, id) => expect(jetstreamDeletedId(event)).toBe(id));

  it('names exactly the id jetstreamItem gave the created post', () => {
    const created = commit({ operation: 'create', cid: 'bafyx', record: { text: 'hi', createdAt: '2026-01-01T00:00:00.000Z' } });
    expect(jetstreamDeletedId(commit({}))).toBe(jetstreamItem(created, undefined)!.id);
  });
});
