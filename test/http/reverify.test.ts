/**
 * Re-verification of polled services (docs/services.md#re-verification), through HTTP on a real
 * database with local fake X and YouTube APIs: items collected by a poll are looked up again once
 * their cadence has passed (the job's clock is moved forward, nothing else is faked); what the
 * source says is gone is removed (state `removed`, out of the content read and the count, in every
 * collection), what changed is updated; a rate-limited lookup waits for its reset while the other
 * batches go on; a failed lookup removes nothing and is tried again; the quota a poll would use is
 * respected; items past the service's window, and services turned off, are not looked up.
 *
 * Payloads: X answers are hand-made in the shape of X's documentation (`data` plus per-id
 * `errors`, https://docs.x.com/x-api/fundamentals/response-codes-and-errors#partial-errors); the
 * YouTube video is the recorded `youtube/videos_list_statistics_contentDetails.json` fixture.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ReverifyCounts, RETRY_MS, startReverify } from '../../src/collect/reverify.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { createCollection } from '../../src/store/collections.ts';
import { type FakeApi, type FakeRequest, fakeApi, fixtureJson } from '../fake-api.ts';
import { build, buildTenant, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length) await stops.pop()!();
});

/** A tweet of the fake X API, `minutes` old. */
const tweet = (id: string, minutes: number, text = `post ${id} about the match`) => ({
  id, text, author_id: '2244994945', created_at: new Date(Date.now() - minutes * MINUTE).toISOString(),
  public_metrics: { like_count: 1, retweet_count: 0, reply_count: 0, quote_count: 0, impression_count: 10 },
});
/** An entry of X's `errors` for a post `id` (title and problem type as X documents them). */
const xError = (id: string, title: 'Not Found Error' | 'Authorization Error') => ({
  value: id, detail: `${title}: ${id}`, title, resource_type: 'tweet', parameter: 'ids', resource_id: id,
  type: `https://api.twitter.com/2/problems/${title === 'Not Found Error' ? 'resource-not-found' : 'not-authorized-for-resource'}`,
});

async function setUp(api: FakeApi, env: Record<string, string> = {}) {
  const ctx = await build({
    ALLOW_PRIVATE_FETCH: 'true', TWITTER_API_URL: api.base, TWITTER_BEARER_TOKEN: 'AAAA-test', YOUTUBE_API_URL: api.base, YOUTUBE_API_KEY: 'AIza-test', ...env,
  });
  const tenant = await buildTenant(ctx.db);
  return { ctx, tenant };
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

/** A re-verifier beating only when told, its clock `ahead` ms ahead of now (a mutable box), counting its lookups. */
function reverifier(ctx: TestContext, ahead: { ms: number }) {
  const counts: ReverifyCounts = { requests: {}, checked: {}, removed: 0, updated: 0 };
  const job = startReverify({ db: ctx.db, config: ctx.config, clock: () => Date.now() + ahead.ms, counts }, 3_600_000);
  stops.push(() => job.stop());
  return Object.assign(job, { counts });
}

/** The queue of `collection` (every state), by item id. */
async function queue(ctx: TestContext, tenant: Tenant, slug: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${slug}&access_token=${tenant.token}&count=100&since=0` });
  expect(res.statusCode, res.body).toBe(200);
  return new Map((res.json() as { id: string; state: string; text: string; title?: string; removedReason?: string }[]).map((item) => [item.id, item]));
}

/** Why the source removed item `id` of the collection (`items.removed`, store/removals.ts), or null when it was not. */
async function removedReason(ctx: TestContext, collectionId: string, id: string): Promise<string | null> {
  const row = await ctx.db.selectFrom('items').select('removed').where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirstOrThrow();
  return row.removed === null ? null : (JSON.parse(row.removed) as { reason: string }).reason;
}

/** The ids the public content read serves, and the public count. */
async function content(ctx: TestContext, tenant: Tenant, slug: string) {
  const read = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${slug}&since=0` });
  const count = await ctx.app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=${slug}&since=0` });
  expect(read.statusCode, read.body).toBe(200);
  return { ids: (read.json() as { id: string; text: string }[]).map((item) => item.id).sort(), items: read.json() as { id: string; text: string; title?: string }[], count: Number(count.json().count) };
}

const lookups = (api: FakeApi, path: string) => api.requests.filter((req) => req.path === path);

describe('re-verification: X', () => {
  it('removes what X says is deleted or protected, in every collection, updates what changed, and leaves the rest; one lookup for both copies', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: ['1001', '1002', '1003', '1004'].map((id) => tweet(id, 30)), meta: { newest_id: '1004', result_count: 4 } } };
      if (req.path === '/2/tweets') {
        return { body: {
          data: [tweet('1001', 30), tweet('1003', 30, 'post 1003 about the match, corrected')],
          errors: [xError('1002', 'Not Found Error'), xError('1004', 'Authorization Error')],
        } };
      }
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    const other = await createCollection(ctx.db, tenant.contract.id, { name: 'Second wall', type: 'realtime', dedupe: 'off' }, 'test');
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await addInput(ctx, tenant, other.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await collect(ctx);
    expect(await content(ctx, tenant, tenant.collection.slug)).toMatchObject({ ids: ['twitter_1001', 'twitter_1002', 'twitter_1003', 'twitter_1004'], count: 4 });

    const ahead = { ms: 0 };
    const job = reverifier(ctx, ahead);
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(0); // not due before REVERIFY_TWITTER_HOURS (24)

    ahead.ms = 24 * HOUR + MINUTE;
    await job.tick();
    const batches = lookups(api, '/2/tweets');
    expect(batches).toHaveLength(1); // both collections' copies in one request
    expect(batches[0]!.query.get('ids')!.split(',').sort()).toEqual(['1001', '1002', '1003', '1004']);

    for (const slug of [tenant.collection.slug, other.slug]) {
      const read = await content(ctx, tenant, slug);
      expect(read.ids).toEqual(['twitter_1001', 'twitter_1003']);
      expect(read.count).toBe(2);
      expect(read.items.find((item) => item.id === 'twitter_1003')!.text).toContain('corrected');
      const all = await queue(ctx, tenant, slug);
      expect(all.get('twitter_1002')!.state).toBe('removed');
      expect(all.get('twitter_1004')!.state).toBe('removed');
      expect(all.get('twitter_1001')!.state).toBe('published');
    }
    expect(await removedReason(ctx, other.id, 'twitter_1002')).toBe('deleted');
    expect(await removedReason(ctx, other.id, 'twitter_1004')).toBe('protected');
    expect(job.counts).toMatchObject({ removed: 2, updated: 1 });

    // Checked: not due again before the next interval.
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
  });

  it('a 429 with Retry-After removes nothing and holds X until its reset while the YouTube batch goes on; after the reset X is asked again', async () => {
    const video = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items[0];
    let limited = true;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('3001', 10)], meta: { newest_id: '3001', result_count: 1 } } };
      if (req.path === '/2/tweets') return limited ? { status: 429, headers: { 'retry-after': '600' }, body: { title: 'Too Many Requests' } } : { body: { errors: [xError('3001', 'Not Found Error')] } };
      if (req.path === '/search') return { body: { items: [{ id: { kind: 'youtube#video', videoId: video.id } }] } };
      if (req.path === '/videos') return { body: { items: [{ ...video, snippet: { ...video.snippet, title: 'Renamed by its channel' } }] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'youtube', type: 'keyword', input: 'lisbon', display: true });
    await collect(ctx);
    const videosBefore = lookups(api, '/videos').length;

    const ahead = { ms: 24 * HOUR + MINUTE };
    const job = reverifier(ctx, ahead);
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    expect(lookups(api, '/videos')).toHaveLength(videosBefore + 1); // the other service's batch went on
    const youtubeId = `youtube_${video.id as string}`;
    expect((await queue(ctx, tenant, tenant.collection.slug)).get(youtubeId)!.title).toBe('Renamed by its channel');
    expect((await queue(ctx, tenant, tenant.collection.slug)).get('twitter_3001')!.state).toBe('published');

    // Before the reset: X is not asked again.
    ahead.ms += 5 * MINUTE;
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    // After it: the item is due again at once (not after another 24 hours), and X's answer applies.
    limited = false;
    ahead.ms += 6 * MINUTE;
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(2);
    expect((await queue(ctx, tenant, tenant.collection.slug)).get('twitter_3001')!.state).toBe('removed');
    expect(await removedReason(ctx, tenant.collection.id, 'twitter_3001')).toBe('deleted');
  });

  it('a failed lookup (500) removes nothing; its items are asked again after RETRY_MS', async () => {
    let failing = true;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('4001', 10)], meta: { newest_id: '4001', result_count: 1 } } };
      if (req.path === '/2/tweets') return failing ? { status: 500, body: { title: 'Internal Error' } } : { body: { data: [tweet('4001', 10)] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await collect(ctx);
    const ahead = { ms: 24 * HOUR + MINUTE };
    const job = reverifier(ctx, ahead);
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    expect(await content(ctx, tenant, tenant.collection.slug)).toMatchObject({ ids: ['twitter_4001'], count: 1 });
    failing = false;
    ahead.ms += RETRY_MS + MINUTE;
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(2);
    expect(await content(ctx, tenant, tenant.collection.slug)).toMatchObject({ ids: ['twitter_4001'], count: 1 });
  });

  it('items older than REVERIFY_TWITTER_DAYS are not looked up; REVERIFY_TWITTER_HOURS=0 turns X off', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('5001', 3 * 24 * 60)], meta: { newest_id: '5001', result_count: 1 } } };
      if (req.path === '/2/tweets') return { body: { errors: [xError('5001', 'Not Found Error')] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    for (const env of [{ REVERIFY_TWITTER_DAYS: '2' }, { REVERIFY_TWITTER_HOURS: '0' }] as Record<string, string>[]) {
      const { ctx, tenant } = await setUp(api, env);
      await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
      await collect(ctx);
      const job = reverifier(ctx, { ms: 24 * HOUR + MINUTE });
      await job.tick();
      expect(lookups(api, '/2/tweets')).toHaveLength(0);
      expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual(['twitter_5001']);
    }
  });
});

describe('re-verification: YouTube', () => {
  it('removes a video videos.list no longer lists, updates one whose title changed, whatever their age (III.E.4)', async () => {
    const [video] = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items;
    const kept = { ...video, id: 'keptVideo01' };
    const gone = { ...video, id: 'goneVideo01' };
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/search') return { body: { items: [kept, gone].map((v) => ({ id: { kind: 'youtube#video', videoId: v.id } })) } };
      if (req.path === '/videos') {
        // The poll reads both; the lookup is answered without the deleted one and with a new description.
        if (lookups(api, '/videos').length === 1) return { body: { items: [kept, gone] } };
        return { body: { items: [{ ...kept, snippet: { ...kept.snippet, description: 'Description rewritten by the channel' } }] } };
      }
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    await addInput(ctx, tenant, tenant.collection.id, { service: 'youtube', type: 'keyword', input: 'lisbon', display: true });
    await collect(ctx);
    expect(await content(ctx, tenant, tenant.collection.slug)).toMatchObject({ ids: ['youtube_goneVideo01', 'youtube_keptVideo01'], count: 2 });

    const job = reverifier(ctx, { ms: 24 * HOUR + MINUTE }); // the fixture's videos are years old: still checked (REVERIFY_YOUTUBE_DAYS 0)
    await job.tick();
    const lookup = lookups(api, '/videos').at(-1)!;
    expect(lookup.query.get('id')!.split(',').sort()).toEqual(['goneVideo01', 'keptVideo01']);
    const read = await content(ctx, tenant, tenant.collection.slug);
    expect(read).toMatchObject({ ids: ['youtube_keptVideo01'], count: 1 });
    expect(read.items[0]!.text).toContain('Description rewritten by the channel');
    expect((await queue(ctx, tenant, tenant.collection.slug)).get('youtube_goneVideo01')!.state).toBe('removed');
    expect(await removedReason(ctx, tenant.collection.id, 'youtube_goneVideo01')).toBe('gone');
  });

  it('respects the credential quota: with the day spent, nothing is looked up and nothing removed', async () => {
    const [video] = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/search') return { body: { items: [{ id: { kind: 'youtube#video', videoId: video.id } }] } };
      if (req.path === '/videos') return { body: { items: lookups(api, '/videos').length === 1 ? [video] : [] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    // A keyword poll costs search (100) + videos.list (1): the day's 101 units are spent by it.
    const { ctx, tenant } = await setUp(api, { YOUTUBE_DAILY_QUOTA: '101', REVERIFY_YOUTUBE_HOURS: '1' });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'youtube', type: 'keyword', input: 'lisbon', display: true });
    await collect(ctx);
    expect(api.requests.map((req) => req.path)).toEqual(['/search', '/videos']);
    // Stored two hours ago (so due), checked now: the same quota day as the poll (the clock is not moved past its reset).
    await ctx.db.updateTable('items').set({ createdAt: Date.now() - 2 * HOUR }).execute();
    const job = reverifier(ctx, { ms: 0 });
    await job.tick();
    expect(lookups(api, '/videos')).toHaveLength(1);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual([`youtube_${video.id as string}`]);
  });
});

describe('re-verification: permanent failures', () => {
  it('a refused key (YouTube 403 keyInvalid) removes nothing and waits for the next interval, not RETRY_MS', async () => {
    const [video] = fixtureJson('youtube', 'videos_list_statistics_contentDetails.json').items;
    let refused = false;
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/search') return { body: { items: [{ id: { kind: 'youtube#video', videoId: video.id } }] } };
      if (req.path === '/videos') return refused ? { status: 403, body: { error: { code: 403, message: 'API key not valid.', errors: [{ reason: 'keyInvalid' }] } } } : { body: { items: [video] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    await addInput(ctx, tenant, tenant.collection.id, { service: 'youtube', type: 'keyword', input: 'lisbon', display: true });
    await collect(ctx);
    refused = true;
    const ahead = { ms: DAY + MINUTE };
    const job = reverifier(ctx, ahead);
    await job.tick();
    expect(lookups(api, '/videos')).toHaveLength(2);
    ahead.ms += RETRY_MS + MINUTE;
    await job.tick();
    expect(lookups(api, '/videos')).toHaveLength(2);
    ahead.ms += DAY;
    await job.tick();
    expect(lookups(api, '/videos')).toHaveLength(3);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual([`youtube_${video.id as string}`]);
  });
});

describe('re-verification cadence', () => {
  it('an item checked by the lookup is not due again for a day, even with the clock a few hours on', async () => {
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/2/tweets/search/recent') return { body: { data: [tweet('6001', 10)], meta: { newest_id: '6001', result_count: 1 } } };
      if (req.path === '/2/tweets') return { body: { data: [tweet('6001', 10)] } };
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api);
    await addInput(ctx, tenant, tenant.collection.id, { service: 'twitter', type: 'keyword', input: 'match', display: true });
    await collect(ctx);
    const ahead = { ms: DAY + MINUTE };
    const job = reverifier(ctx, ahead);
    await job.tick();
    ahead.ms += 20 * HOUR;
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(1);
    ahead.ms += 5 * HOUR;
    await job.tick();
    expect(lookups(api, '/2/tweets')).toHaveLength(2);
  });
});

// Tumblr and Flickr read one item a request (docs/services.md#re-verification). Payloads hand-made
// in the vendors' documented shapes: Tumblr's legacy posts in its `meta`/`response` envelope with a
// 404 "Not Found" (https://www.tumblr.com/docs/en/api/v2#response-format), Flickr's
// `{"stat":"fail","code":1}` of flickr.photos.getInfo
// (https://www.flickr.com/services/api/flickr.photos.getInfo.html).
describe('re-verification: one item a request (Tumblr, Flickr)', () => {
  const seconds = (minutes: number) => Math.floor((Date.now() - minutes * MINUTE) / 1000);

  it('Tumblr: the post its blog answers "Not Found" for is removed as deleted, the other stays; one request a post', async () => {
    const post = (id: string) => ({ id: Number(id), id_string: id, type: 'text', blog_name: 'sashalre', timestamp: seconds(30), body: `<p>post ${id}</p>`, note_count: 1, post_url: `https://sashalre.tumblr.com/post/${id}` });
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path !== '/v2/blog/sashalre.tumblr.com/posts') return { status: 404, body: {} };
      const id = req.query.get('id');
      if (!id) return { body: { meta: { status: 200, msg: 'OK' }, response: { posts: [post('5001'), post('5002')] } } };
      return id === '5002' ? { status: 404, body: { meta: { status: 404, msg: 'Not Found' }, response: [] } } : { body: { meta: { status: 200, msg: 'OK' }, response: { posts: [post(id)] } } };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api, { TUMBLR_API_URL: `${api.base}/v2`, TUMBLR_API_KEY: 'consumer-key' });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'tumblr', type: 'user', input: 'sashalre', display: true });
    await collect(ctx);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual(['tumblr_5001', 'tumblr_5002']);

    const job = reverifier(ctx, { ms: 24 * HOUR + MINUTE });
    await job.tick();
    const asked = api.requests.filter((req) => req.query.has('id')).map((req) => req.query.get('id')).sort();
    expect(asked).toEqual(['5001', '5002']);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual(['tumblr_5001']);
    const all = await queue(ctx, tenant, tenant.collection.slug);
    expect(all.get('tumblr_5002')!.state).toBe('removed');
    expect(all.get('tumblr_5001')!.state).toBe('published');
    expect(await removedReason(ctx, tenant.collection.id, 'tumblr_5002')).toBe('deleted');
    expect(job.counts.requests).toEqual({ tumblr: 2 });
  });

  it('Tumblr: a tag input\'s gone post is removed, asked of the blog its stored item names; one whose URL is of another host and names no blog is not asked', async () => {
    const post = (id: string, blog: string | undefined, url: string) => ({ id: Number(id), id_string: id, type: 'text', ...(blog && { blog_name: blog }), timestamp: seconds(30), body: `<p>post ${id}</p>`, note_count: 1, post_url: url });
    const tagged = [
      post('5101', 'sashalre', 'https://sashalre.tumblr.com/post/5101/gone'),
      post('5102', 'otherblog', 'https://www.tumblr.com/otherblog/5102'),
      post('5103', undefined, 'https://evil.example/post/5103'),
    ];
    const api = await fakeApi((req: FakeRequest) => {
      if (req.path === '/v2/tagged') return { body: { meta: { status: 200, msg: 'OK' }, response: tagged } };
      const id = req.query.get('id');
      if (req.path === '/v2/blog/sashalre.tumblr.com/posts' && id === '5101') return { status: 404, body: { meta: { status: 404, msg: 'Not Found' }, response: [] } };
      if (req.path === '/v2/blog/otherblog.tumblr.com/posts' && id === '5102') return { body: { meta: { status: 200, msg: 'OK' }, response: { posts: [tagged[1]] } } };
      return { status: 404, body: { meta: { status: 404, msg: 'Not Found' }, response: [] } };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api, { TUMBLR_API_URL: `${api.base}/v2`, TUMBLR_API_KEY: 'consumer-key' });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'tumblr', type: 'tag', input: 'cats', display: true });
    await collect(ctx);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids.sort()).toEqual(['tumblr_5101', 'tumblr_5102', 'tumblr_5103']);

    const job = reverifier(ctx, { ms: 24 * HOUR + MINUTE });
    await job.tick();
    const asked = api.requests.filter((req) => req.query.has('id')).map((req) => `${req.path} ${req.query.get('id')}`).sort();
    expect(asked).toEqual(['/v2/blog/otherblog.tumblr.com/posts 5102', '/v2/blog/sashalre.tumblr.com/posts 5101']);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids.sort()).toEqual(['tumblr_5102', 'tumblr_5103']);
    expect(await removedReason(ctx, tenant.collection.id, 'tumblr_5101')).toBe('deleted');
  });

  it('Flickr: the photo getInfo answers code 1 for is removed as deleted, the found one is kept as collected', async () => {
    const photo = (id: string) => ({ id, owner: '35034346050@N01', secret: 'abcd123456', server: '1576', title: `photo ${id}`, description: { _content: 'as collected' },
      dateupload: String(seconds(30)), ownername: 'Phil Gyford', pathalias: 'philgyford', media: 'photo', url_l: `https://live.staticflickr.com/1576/${id}_abcd123456_b.jpg`, width_l: 1024, height_l: 768 });
    const api = await fakeApi((req: FakeRequest) => {
      const method = req.query.get('method');
      if (method === 'flickr.people.getPhotos') return { body: { stat: 'ok', photos: { page: 1, pages: 1, perpage: 100, total: '2', photo: [photo('7001'), photo('7002')] } } };
      if (method === 'flickr.photos.getInfo') {
        return req.query.get('photo_id') === '7002'
          ? { body: { stat: 'fail', code: 1, message: 'Photo "7002" not found (invalid ID)' } }
          : { body: { stat: 'ok', photo: { id: req.query.get('photo_id'), title: { _content: 'renamed' }, description: { _content: 'changed' } } } };
      }
      return { status: 404, body: {} };
    });
    stops.push(() => api.close());
    const { ctx, tenant } = await setUp(api, { FLICKR_API_URL: `${api.base}/services/rest`, FLICKR_API_KEY: 'flickr-key' });
    await addInput(ctx, tenant, tenant.collection.id, { service: 'flickr', type: 'user', input: '35034346050@N01', display: true });
    await collect(ctx);
    expect((await content(ctx, tenant, tenant.collection.slug)).ids).toEqual(['flickr_7001', 'flickr_7002']);

    const job = reverifier(ctx, { ms: 24 * HOUR + MINUTE });
    await job.tick();
    expect(api.requests.filter((req) => req.query.get('method') === 'flickr.photos.getInfo').map((req) => req.query.get('photo_id')).sort()).toEqual(['7001', '7002']);
    const read = await content(ctx, tenant, tenant.collection.slug);
    expect(read.ids).toEqual(['flickr_7001']);
    // Gone only: the found photo keeps what the poll collected (getInfo has no sizes to update it with).
    expect(read.items[0]).toMatchObject({ title: 'photo 7001', text: 'as collected' });
    expect((await queue(ctx, tenant, tenant.collection.slug)).get('flickr_7002')!.state).toBe('removed');
    expect(await removedReason(ctx, tenant.collection.id, 'flickr_7002')).toBe('deleted');
    expect(job.counts).toMatchObject({ removed: 1, updated: 0 });
  });
});
