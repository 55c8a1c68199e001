/**
 * Kudos that keep counting (docs/services.md#kudos-refresh), through HTTP on a real database with
 * local fake X, YouTube, Bluesky and Facebook APIs whose counters change between two lookups: the
 * refresh reads the items of ranked collections in batches (`GET /2/tweets?ids=`, `videos.list`,
 * `app.bsky.feed.getPosts` 25 at a time, the Graph API's `?ids=`), updates their kudos and
 * `kudos.updated` and leaves their state alone; a spent rate limit (X's reset header, a 429 from
 * Bluesky, Meta's usage headers and throttling errors) holds further lookups until its reset; a
 * deleted Facebook post, for which Meta fails the whole read (#803), is left out of a second read;
 * a Bluesky rate limit holds the lookups of every credential (the AppView's limit is per IP); an
 * input whose credential cannot be used fails its batch only; realtime collections and items
 * older than the window are not read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type KudosRefresher, startKudosRefresh } from '../../src/collect/kudos.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { createCollection } from '../../src/store/collections.ts';
import { type FakeApi, type FakeRequest, fakeApi, fixtureJson } from '../fake-api.ts';
import { build, buildTenant, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;
const MINUTE = 60_000;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length) await stops.pop()!();
});

/** A tweet of the fake X API, `minutes` old, with `likes` likes. */
const tweet = (id: string, minutes: number, likes: number) => ({
  id, text: `post ${id} about the match`, author_id: '2244994945', created_at: new Date(Date.now() - minutes * MINUTE).toISOString(),
  public_metrics: { like_count: likes, retweet_count: 1, reply_count: 0, quote_count: 0, impression_count: 100 * likes },
});

async function setUp(api: FakeApi, env: Record<string, string> = {}) {
  const ctx = await build({
    ALLOW_PRIVATE_FETCH: 'true', TWITTER_API_URL: api.base, TWITTER_BEARER_TOKEN: 'AAAA-test', YOUTUBE_API_URL: api.base, YOUTUBE_API_KEY: 'AIza-test', KUDOS_REFRESH: '1', ...env,
  });
  const tenant = await buildTenant(ctx.db);
  const ranked = await createCollection(ctx.db, tenant.contract.id, { name: 'Trending', type: 'ranked', dedupe: 'off' }, 'test'); // kudos of near-identical posts, not their de-duplication
  return { ctx, tenant, ranked };
}

async function addInput(ctx: TestContext, tenant: Tenant, collectionId: string, body: Record<string, unknown>) {
  const res = await ctx.app.inject({ method: 'POST', url: '/collection/inputs', headers: { authorization: `Bearer ${tenant.token}` }, payload: { contractId: tenant.contract.id, collectionId, ...body } });
  expect(res.statusCode, res.body).toBe(201);
}

/** Polls every due input once, then stops the collector. */
async function collect(ctx: TestContext) {
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  await collector.tick();
  await collector.idle();
  await collector.stop();
}

/** A kudos refresher beating only when told. */
function refresher(ctx: TestContext) {
  const refresh = startKudosRefresh({ db: ctx.db, config: ctx.config }, 3_600_000);
  stops.push(() => refresh.stop());
  return refresh;
}

/** The queue of `collection` (every state), by item id. */
async function queue(ctx: TestContext, tenant: Tenant, slug: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${slug}&access_token=${tenant.token}&count=100` });
  expect(res.statusCode, res.body).toBe(200);
  return new Map((res.json() as { id: string; state: string; kudos: Record<string, number | string> }[]).map((item) => [item.id, item]));
}

/**
 * Waits past KUDOS_REFRESH (1 s in these tests) since the items were stored or last read, so
 * they are due, then runs one beat of `refresh` (of a new refresher when none is given).
 */
async function beatWhenDue(ctx: TestContext, refresh: KudosRefresher = refresher(ctx)): Promise<KudosRefresher> {
  await sleep(1100);
  await refresh.tick();
  return refresh;
}

const lookups = (api: FakeApi, path: string) => api.requests.filter((req) => req.path === path);

describe('kudos refresh: X', () => {
  it('updates the kudos of a ranked collection in one batched lookup, leaves state and realtime collections alone', async () => {
    let likes = 5;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('1001', 30, likes), tweet('1002', 60, 2 * likes)], meta: { newest_id: '1002', result_count: 2 } } };
      if (req.path === '/2/tweets') return { body: { data: req.query.get('ids')!.split(',').filter((id) => id !== '1002').map((id) => tweet(id, 30, likes)) } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match', display: false });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await collect(ctx);
    const before = await queue(ctx, tenant, ranked.slug);
    expect(before.get('twitter_1001')!.kudos).toMatchObject({ twitter_likes: 5, score: 7 });
    expect(before.get('twitter_1001')!.kudos.updated).toBeUndefined();

    likes = 50;
    const refresh = await beatWhenDue(ctx); // past KUDOS_REFRESH (1 s) since the items were stored
    const batches = lookups(api, '/2/tweets');
    expect(batches).toHaveLength(1);
    expect(batches[0]!.query.get('ids')!.split(',').sort()).toEqual(['1001', '1002']);
    expect(batches[0]!.query.get('tweet.fields')).toContain('public_metrics'); // with a poll's fields: the lookup reads whole posts

    const after = await queue(ctx, tenant, ranked.slug);
    const refreshed = after.get('twitter_1001')!;
    expect(refreshed.kudos).toMatchObject({ twitter_likes: 50, twitter_views: 5000, score: 52 });
    expect(Date.parse(refreshed.kudos.updated as string)).toBeGreaterThan(Date.now() - MINUTE);
    expect(refreshed.state).toBe('unpublished');
    // A tweet the lookup no longer returns (deleted, protected) keeps what it had.
    expect(after.get('twitter_1002')!.kudos).toMatchObject({ twitter_likes: 10 });
    expect(after.get('twitter_1002')!.kudos.updated).toBeUndefined();
    // The realtime collection's copy was not read.
    const realtime = await queue(ctx, tenant, tenant.collection.slug);
    expect(realtime.get('twitter_1001')!.kudos).toMatchObject({ twitter_likes: 5 });
    expect(realtime.get('twitter_1001')!.state).toBe('published');

    // Not due again before the interval has passed.
    await refresh.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
  });

  it('a spent rate limit holds further lookups until x-rate-limit-reset', async () => {
    const reset = Math.ceil(Date.now() / 1000) + 900;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('2001', 10, 1)], meta: { newest_id: '2001', result_count: 1 } } };
      if (req.path === '/2/tweets') return { headers: { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) }, body: { data: [tweet('2001', 10, 3)] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match' });
    await collect(ctx);
    const refresh = await beatWhenDue(ctx);
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    expect((await queue(ctx, tenant, ranked.slug)).get('twitter_2001')!.kudos).toMatchObject({ twitter_likes: 3 });
    await beatWhenDue(ctx, refresh); // due again, but the limit is spent until its reset
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
  });

  it('a 429 with Retry-After holds lookups too, and the items keep their kudos', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('3001', 10, 4)], meta: { newest_id: '3001', result_count: 1 } } };
      if (req.path === '/2/tweets') return { status: 429, headers: { 'retry-after': '600' }, body: { title: 'Too Many Requests' } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match' });
    await collect(ctx);
    const refresh = await beatWhenDue(ctx);
    await beatWhenDue(ctx, refresh);
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    expect((await queue(ctx, tenant, ranked.slug)).get('twitter_3001')!.kudos).toMatchObject({ twitter_likes: 4 });
  });

  it("an input whose credential cannot be used fails its batch only: the beat's other batches are read", async () => {
    let likes = 1;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') {
        const data = req.query.get('query')!.startsWith('match') ? [tweet('6001', 20, likes)] : [tweet('6002', 20, likes)];
        return { body: { data, meta: { newest_id: data[0]!.id, result_count: 1 } } };
      }
      if (req.path === '/2/tweets') return { body: { data: req.query.get('ids')!.split(',').map((id) => tweet(id, 20, likes)) } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    const call = (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) =>
      ctx.app.inject({ method, url, headers: { authorization: `Bearer ${tenant.token}` }, payload });
    const credential = await call('POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'X app', service: 'twitter', bearerToken: 'AAAA-contract-token-1234' });
    expect(credential.statusCode, credential.body).toBe(201);
    // The input naming the credential is collected (and so claimed) first, its batch read first.
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match', credentialId: credential.json()._id });
    await collect(ctx);
    await sleep(20);
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'goal' });
    await collect(ctx);
    expect((await call('PATCH', `/collection/credentials/${credential.json()._id}`, { active: false })).statusCode).toBe(200);

    likes = 9;
    await beatWhenDue(ctx);
    expect(lookups(api, '/2/tweets').map((req) => req.query.get('ids'))).toEqual(['6002']);
    const after = await queue(ctx, tenant, ranked.slug);
    expect(after.get('twitter_6002')!.kudos).toMatchObject({ twitter_likes: 9, updated: expect.any(String) });
    expect(after.get('twitter_6001')!.kudos).toMatchObject({ twitter_likes: 1 });
    expect(after.get('twitter_6001')!.kudos.updated).toBeUndefined();
  });

  it('items older than KUDOS_WINDOW are not read', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('4001', 180, 4)], meta: { newest_id: '4001', result_count: 1 } } };
      if (req.path === '/2/tweets') return { body: { data: [tweet('4001', 180, 40)] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, { KUDOS_WINDOW: '3600' });
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match' });
    await collect(ctx);
    await beatWhenDue(ctx);
    expect(lookups(api, '/2/tweets')).toHaveLength(0);
  });
});

describe('trending order (docs/api.md#trending)', () => {
  it("is a ranked collection's default on content and the wall, follows a refresh, and is asked for with sort=trending anywhere", async () => {
    const likes: Record<string, number> = { '5001': 3, '5002': 3, '5003': 3 };
    const age: Record<string, number> = { '5001': 120, '5002': 60, '5003': 5 };
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: Object.keys(likes).map((id) => tweet(id, age[id]!, likes[id]!)), meta: { newest_id: '5003', result_count: 3 } } };
      if (req.path === '/2/tweets') return { body: { data: req.query.get('ids')!.split(',').map((id) => tweet(id, age[id]!, likes[id]!)) } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    await addInput(ctx, tenant, ranked.id, { service: 'twitter', type: 'keyword', input: 'match' });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match' });
    await collect(ctx);
    const content = async (slug: string, params = '') => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${slug}&since=0${params}` });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { id: string }[]).map((item) => item.id);
    };
    const wall = async () => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/publication/${tenant.contract.slug}?q=${ranked.slug}` });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('data-sort="trending"');
      return [...res.body.matchAll(/data-id="([^"]+)"/g)].map((m) => m[1]);
    };
    // Equal engagement: newer first.
    expect(await content(ranked.slug)).toEqual(['twitter_5003', 'twitter_5002', 'twitter_5001']);
    expect(await content(ranked.slug, '&sort=time')).toEqual(['twitter_5003', 'twitter_5002', 'twitter_5001']);
    // The oldest post takes off: 3 → 3 000 likes.
    likes['5001'] = 3000;
    await beatWhenDue(ctx);
    expect(await content(ranked.slug)).toEqual(['twitter_5001', 'twitter_5003', 'twitter_5002']);
    expect(await wall()).toEqual(['twitter_5001', 'twitter_5003', 'twitter_5002']);
    // Asked for explicitly, time order and ascending trending still work.
    expect(await content(ranked.slug, '&sort=time')).toEqual(['twitter_5003', 'twitter_5002', 'twitter_5001']);
    expect(await content(ranked.slug, '&sort=trending&order=asc')).toEqual(['twitter_5002', 'twitter_5003', 'twitter_5001']);
    // A realtime collection: time by default, trending when asked (its kudos as collected), on the queue too.
    expect(await content(tenant.collection.slug)).toEqual(['twitter_5003', 'twitter_5002', 'twitter_5001']);
    expect(await content(tenant.collection.slug, '&sort=trending')).toEqual(['twitter_5003', 'twitter_5002', 'twitter_5001']);
    const q = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${ranked.slug}&since=0&sort=trending&access_token=${tenant.token}` });
    expect((q.json() as { id: string }[]).map((item) => item.id)).toEqual(['twitter_5001', 'twitter_5003', 'twitter_5002']);
  });
});

describe('kudos refresh: YouTube', () => {
  it('reads videos.list (the parts of a poll) and updates views, likes, comments', async () => {
    const video = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items[0];
    video.snippet.publishedAt = new Date(Date.now() - 20 * MINUTE).toISOString();
    let views = '7920';
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/search') return { body: { items: [{ id: { kind: 'youtube#video', videoId: video.id } }] } };
      if (req.path === '/videos') return { body: { items: [{ ...video, statistics: { ...video.statistics, viewCount: views, likeCount: '400' } }] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api);
    await addInput(ctx, tenant, ranked.id, { service: 'youtube', type: 'keyword', input: 'lisbon' });
    await collect(ctx);
    const id = `youtube_${video.id as string}`;
    const content = async () => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${ranked.slug}&since=0` });
      return (res.json() as { id: string; kudos: Record<string, number | string> }[]).find((item) => item.id === id)!.kudos;
    };
    expect((await queue(ctx, tenant, ranked.slug)).get(id)!.kudos).toMatchObject({ youtube_views: 7920 });
    expect(await content()).toMatchObject({ youtube_views: 7920 });
    views = '12000';
    const refresh = await beatWhenDue(ctx);
    const lookup = lookups(api, '/videos').at(-1)!;
    expect(lookup.query.get('part')).toBe('snippet,contentDetails,statistics,recordingDetails'); // 1 unit whatever the parts: the lookup reads whole videos
    expect(lookup.query.get('id')).toBe(video.id);
    // Only counters moved (the score did not, and never does for YouTube): readers that keep items serialized see it too.
    const refreshed = (await queue(ctx, tenant, ranked.slug)).get(id)!.kudos;
    // YouTube API Services Developer Policies III.E.4.h: statistics shown as read, never a score.
    expect(refreshed).toMatchObject({ youtube_views: 12000, youtube_likes: 400, youtube_comments: 32, score: 0, updated: expect.any(String) });
    expect(await content()).toEqual(refreshed);
    // Read again and found as they were: the item is left as it is.
    const reads = lookups(api, '/videos').length;
    await beatWhenDue(ctx, refresh);
    expect(lookups(api, '/videos').length).toBe(reads + 1);
    expect((await queue(ctx, tenant, ranked.slug)).get(id)!.kudos).toEqual(refreshed);
  });
});

describe('kudos refresh: Bluesky', () => {
  const DID = 'did:plc:kvwvcn5iqfooopmyzvb4qzba';
  const recorded = fixtureJson('bluesky', 'getPostThread_postView_recordWithMedia.json').thread.post;
  /** The recorded postView as post `rkey` of the same author, made `minutes` ago, with `likes` likes. */
  const post = (rkey: string, minutes: number, likes: number) => {
    const at = new Date(Date.now() - minutes * MINUTE).toISOString();
    return { ...recorded, uri: `at://${DID}/app.bsky.feed.post/${rkey}`, record: { ...recorded.record, createdAt: at }, indexedAt: at, likeCount: likes, repostCount: 1, replyCount: 0, quoteCount: 0 };
  };
  /** 30 posts: more than one getPosts request (25) reads. */
  const rkeys = Array.from({ length: 30 }, (_, i) => `3kpost${String(i).padStart(2, '0')}`);
  const minutes = new Map(rkeys.map((rkey, i) => [rkey, 5 + i]));
  const getPosts = '/xrpc/app.bsky.feed.getPosts';

  it('reads 25 posts a request from the public AppView, even for a contract without an account, and updates their kudos', async () => {
    let likes = 2;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/xrpc/app.bsky.feed.getAuthorFeed') return { body: { feed: rkeys.map((rkey) => ({ post: post(rkey, minutes.get(rkey)!, likes) })) } };
      // The first post was deleted since: getPosts leaves it out.
      if (req.path === getPosts) return { body: { posts: req.query.getAll('uris').map((uri) => uri.split('/').pop()!).filter((rkey) => rkey !== rkeys[0]).map((rkey) => post(rkey, minutes.get(rkey)!, likes)) } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    // No installation-wide account: getPosts, like getAuthorFeed, needs none.
    const { ctx, tenant, ranked } = await setUp(api, { BLUESKY_API_URL: api.base, SHARED_CREDENTIALS: 'false' });
    await addInput(ctx, tenant, ranked.id, { service: 'bluesky', type: 'user', input: DID });
    await collect(ctx);
    const before = await queue(ctx, tenant, ranked.slug);
    expect(before.size).toBe(30);
    // The account's own title (docs/api.md#inputs): the display name its posts carry.
    const inputs = await ctx.app.inject({ method: 'GET', url: `/collection/inputs?contract_id=${tenant.contract.id}`, headers: { authorization: `Bearer ${tenant.token}` } });
    expect((inputs.json() as { input: string; title?: string }[]).find((row) => row.input === DID)?.title).toBe(recorded.author.displayName);
    const id = (rkey: string) => `bluesky_${DID}_${rkey}`;
    expect(before.get(id(rkeys[1]!))!.kudos).toMatchObject({ bluesky_likes: 2, score: 4 });

    likes = 20;
    await beatWhenDue(ctx);
    const batches = lookups(api, getPosts);
    expect(batches.map((req) => req.query.getAll('uris').length).sort((a, b) => a - b)).toEqual([5, 25]);
    expect(batches.flatMap((req) => req.query.getAll('uris')).sort()).toEqual(rkeys.map((rkey) => `at://${DID}/app.bsky.feed.post/${rkey}`));
    expect(batches.every((req) => req.headers.authorization === undefined)).toBe(true);

    const after = await queue(ctx, tenant, ranked.slug);
    for (const rkey of rkeys.slice(1)) {
      expect(after.get(id(rkey))!.kudos).toMatchObject({ bluesky_likes: 20, bluesky_reposts: 1, score: 22 });
      expect(after.get(id(rkey))!.kudos.updated).toEqual(expect.any(String));
      expect(after.get(id(rkey))!.state).toBe(before.get(id(rkey))!.state);
    }
    expect(after.get(id(rkeys[0]!))!.kudos).toEqual(before.get(id(rkeys[0]!))!.kudos);
  });

  it('a 429 holds every further lookup of the service, the second batch of the same beat too', async () => {
    const reset = Math.ceil(Date.now() / 1000) + 600;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/xrpc/app.bsky.feed.getAuthorFeed') return { body: { feed: rkeys.map((rkey) => ({ post: post(rkey, minutes.get(rkey)!, 3) })) } };
      if (req.path === getPosts) return { status: 429, headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': String(reset) }, body: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, { BLUESKY_API_URL: api.base });
    await addInput(ctx, tenant, ranked.id, { service: 'bluesky', type: 'user', input: DID });
    await collect(ctx);
    const refresh = await beatWhenDue(ctx);
    expect(lookups(api, getPosts)).toHaveLength(1);
    await beatWhenDue(ctx, refresh); // due again, but held until the reset
    expect(lookups(api, getPosts)).toHaveLength(1);
    const kudos = [...(await queue(ctx, tenant, ranked.slug)).values()].map((item) => item.kudos);
    expect(kudos).toHaveLength(30);
    expect(kudos.every((k) => k.bluesky_likes === 3 && k.updated === undefined)).toBe(true);
  });
});

describe('kudos refresh: Bluesky, inputs with different credentials', () => {
  it('a 429 of the public AppView holds the lookups of every credential: the lookup sends none, the limit is per IP', async () => {
    const recorded = fixtureJson('bluesky', 'getPostThread_postView_recordWithMedia.json').thread.post;
    const DIDS = ['did:plc:aaaaaaaaaaaaaaaaaaaaaaaa', 'did:plc:bbbbbbbbbbbbbbbbbbbbbbbb'];
    const at = new Date(Date.now() - 10 * MINUTE).toISOString();
    const post = (did: string) => ({ ...recorded, uri: `at://${did}/app.bsky.feed.post/3kpost00`, author: { ...recorded.author, did }, record: { ...recorded.record, createdAt: at }, indexedAt: at });
    const getPosts = '/xrpc/app.bsky.feed.getPosts';
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/xrpc/app.bsky.feed.getAuthorFeed') return { body: { feed: [{ post: post(req.query.get('actor')!) }] } };
      if (req.path === getPosts) return { status: 429, headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 600) }, body: { error: 'RateLimitExceeded' } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, { BLUESKY_API_URL: api.base });
    for (const [i, did] of DIDS.entries()) {
      const credential = await ctx.app.inject({ method: 'POST', url: '/collection/credentials', headers: { authorization: `Bearer ${tenant.token}` },
        payload: { contractId: tenant.contract.id, name: `Account ${i}`, service: 'bluesky', identifier: `account${i}.bsky.social`, appPassword: 'abcd-efgh-ijkl-mnop' } });
      expect(credential.statusCode, credential.body).toBe(201);
      await addInput(ctx, tenant, ranked.id, { service: 'bluesky', type: 'user', input: did, credentialId: credential.json()._id });
    }
    await collect(ctx);
    expect((await queue(ctx, tenant, ranked.slug)).size).toBe(2);
    await beatWhenDue(ctx);
    expect(lookups(api, getPosts)).toHaveLength(1);
  });
});

describe('kudos refresh: Facebook (Graph API)', () => {
  const recorded: Array<Record<string, any> & { id: string }> = fixtureJson('facebook', 'page_feed_fields_p1.json').data;
  /** The recorded page posts, made in the last hour. */
  const posts = recorded.map((p, i) => ({ ...p, created_time: new Date(Date.now() - (10 + i) * MINUTE).toISOString() }));
  /** A post as the multiple-id read answers it, with `reactions` reactions. */
  const counters = (p: Record<string, any> & { id: string }, reactions: number) =>
    ({ id: p.id, shares: p.shares, reactions: { data: [], summary: { total_count: reactions } }, comments: { data: [], summary: { total_count: p.comments.summary.total_count } } });
  const env = (api: FakeApi) => ({ FACEBOOK_API_URL: `${api.base}/v25.0`, FACEBOOK_ACCESS_TOKEN: 'page-token' });

  it('reads reactions, shares and comments with one multiple-id read; usage near the limit holds further lookups', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/v25.0/FacebookforDevelopers/posts') return { body: { data: posts } };
      if (req.path === '/v25.0/') {
        return { headers: { 'x-app-usage': '{"call_count":95,"total_cputime":5,"total_time":5}' },
          body: Object.fromEntries(req.query.get('ids')!.split(',').map((id) => [id, counters(posts.find((p) => p.id === id)!, 1000)])) };
      }
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, env(api));
    await addInput(ctx, tenant, ranked.id, { service: 'facebook', type: 'page', input: 'FacebookforDevelopers' });
    await collect(ctx);
    const first = `facebook_${posts[0]!.id}`;
    const before = await queue(ctx, tenant, ranked.slug);
    expect(before.get(first)!.kudos).toMatchObject({ facebook_likes: 125, facebook_shares: 10, facebook_comments: 13, score: 158 });

    const refresh = await beatWhenDue(ctx);
    const [read, ...more] = lookups(api, '/v25.0/');
    expect(more).toEqual([]);
    expect(read!.query.get('ids')!.split(',').sort()).toEqual(posts.map((p) => p.id).sort());
    expect(read!.query.get('fields')).toMatch(/^id,message,.*shares,reactions\.summary/); // a poll's fields: the lookup reads whole posts
    expect(read!.headers.authorization).toBe('Bearer page-token');
    const after = await queue(ctx, tenant, ranked.slug);
    expect(after.get(first)!.kudos).toMatchObject({ facebook_likes: 1000, facebook_shares: 10, facebook_comments: 13, score: 1033 });
    expect(after.get(first)!.kudos.updated).toEqual(expect.any(String));
    expect(after.get(first)!.state).toBe(before.get(first)!.state);

    await beatWhenDue(ctx, refresh); // due again, but the app's usage was at 95 %: held for an hour
    expect(lookups(api, '/v25.0/')).toHaveLength(1);
  });

  it('a deleted post, which fails the whole read (#803), is left out of a second read; the others are updated', async () => {
    const deleted = posts[1]!.id;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/v25.0/FacebookforDevelopers/posts') return { body: { data: posts } };
      if (req.path === '/v25.0/') {
        const ids = req.query.get('ids')!.split(',');
        if (ids.includes(deleted)) return { status: 404, body: { error: { message: `(#803) Some of the aliases you requested do not exist: ${deleted}`, type: 'OAuthException', code: 803, fbtrace_id: 'AbC' } } };
        return { body: Object.fromEntries(ids.map((id) => [id, counters(posts.find((p) => p.id === id)!, 500)])) };
      }
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, env(api));
    await addInput(ctx, tenant, ranked.id, { service: 'facebook', type: 'page', input: 'FacebookforDevelopers' });
    await collect(ctx);
    const before = await queue(ctx, tenant, ranked.slug);
    await beatWhenDue(ctx);
    const reads = lookups(api, '/v25.0/').map((req) => req.query.get('ids')!.split(',').sort());
    expect(reads).toEqual([posts.map((p) => p.id).sort(), posts.map((p) => p.id).filter((id) => id !== deleted).sort()]);
    const after = await queue(ctx, tenant, ranked.slug);
    for (const p of posts.filter((p) => p.id !== deleted)) {
      expect(after.get(`facebook_${p.id}`)!.kudos).toMatchObject({ facebook_likes: 500, updated: expect.any(String) });
    }
    // The deleted post keeps what it had (docs/services.md#kudos-refresh).
    expect(after.get(`facebook_${deleted}`)!.kudos).toEqual(before.get(`facebook_${deleted}`)!.kudos);
    expect(after.get(`facebook_${deleted}`)!.kudos.updated).toBeUndefined();
    // The same answer re-verifies (docs/services.md#re-verification): Meta says it does not exist, so it is removed.
    expect(after.get(`facebook_${deleted}`)!.state).toBe('removed');
  });

  it('a throttling error (code 32) holds further lookups, and the posts keep their kudos', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/v25.0/FacebookforDevelopers/posts') return { body: { data: posts } };
      if (req.path === '/v25.0/') return { status: 403, body: { error: { message: 'Page request limit reached', type: 'OAuthException', code: 32 } } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant, ranked } = await setUp(api, env(api));
    await addInput(ctx, tenant, ranked.id, { service: 'facebook', type: 'page', input: 'FacebookforDevelopers' });
    await collect(ctx);
    const refresh = await beatWhenDue(ctx);
    await beatWhenDue(ctx, refresh);
    expect(lookups(api, '/v25.0/')).toHaveLength(1);
    const item = (await queue(ctx, tenant, ranked.slug)).get(`facebook_${posts[0]!.id}`)!;
    expect(item.kudos).toMatchObject({ facebook_likes: 125 });
    expect(item.kudos.updated).toBeUndefined();
  });
});
