/**
 * One story, one card, end to end (docs/api.md#duplicates): the same article reaches a collection
 * through two rss feeds with tracking parameters, an X post linking it (the twitter connector
 * against a local fake API answering with a copy of a recorded payload, edited in memory) and a
 * Mastodon post quoting its title (a copy of the documented status entity); then the first feed
 * edits its title. All collected with `refreshInput` over real HTTP on 127.0.0.1, read through
 * the queue API: one card with three duplicates, a split, and `dedupe: off` keeping them apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { loadConfig } from '../../src/config.ts';
import type { ContentItem } from '../../src/item.ts';
import { build, buildTenant, inputRow } from '../helper.ts';
import { fixtureJson, type SourceServer, startSourceServer } from '../source-server.ts';

const TITLE = 'Scientists find a new species of deep sea octopus off the coast of Chile';
const EDITED = 'Scientists find a new species of ghostly deep sea octopus off the coast of Chile';
const ARTICLE = 'https://www.example-news.com/science/2026/nov/octopus';

/** An RSS 2.0 feed with the story, its link carrying a feed's tracking parameters. */
const feed = (title: string, guid: string, query: string) => `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Example News</title><link>https://www.example-news.com/</link><description>News</description>
<item><title>${title}</title><link>${ARTICLE}?${query}</link><guid isPermaLink="false">${guid}</guid>
<description>&lt;p&gt;The animal was filmed at a depth of 4000 metres by a remotely operated vehicle.&lt;/p&gt;</description>
<pubDate>${new Date(Date.now() - 3 * 3600_000).toUTCString()}</pubDate></item>
</channel></rss>`;

/** A copy of the recorded search payload: its first tweet, now linking the article (t.co expanded with fbclid). */
function tweets(): unknown {
  const recorded = structuredClone(fixtureJson('twitter/search_recent_with_includes_docs_sample.json')) as any;
  const tweet = recorded.data[0];
  tweet.text = 'Look at this one https://t.co/Oct0pus123';
  tweet.created_at = new Date(Date.now() - 2 * 3600_000).toISOString();
  tweet.entities = { urls: [{ start: 17, end: 40, url: 'https://t.co/Oct0pus123', expanded_url: `${ARTICLE}/?fbclid=IwAR0xyz`, display_url: 'example-news.com/science/2…' }] };
  delete tweet.attachments;
  return { ...recorded, data: [tweet], meta: { ...recorded.meta, result_count: 1, next_token: undefined } };
}

/** A copy of the documented status entity, quoting the headline (no link: it meets the article by its text). */
function statuses(): unknown {
  const status = structuredClone(fixtureJson('mastodon/status_entity_docs_example.json')) as any;
  status.content = `<p>${TITLE.toUpperCase()}!! <a href="https://mastodon.social/tags/science" class="mention hashtag" rel="tag">#<span>science</span></a></p>`;
  status.created_at = new Date(Date.now() - 3600_000).toISOString();
  status.card = null;
  status.media_attachments = [];
  return [status];
}

let server: SourceServer;
const replies: Record<string, () => { status: number; headers?: Record<string, string>; body: unknown }> = {};
const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 2000 });

beforeAll(async () => {
  server = await startSourceServer((req) => replies[req.url.split('?')[0]!]?.() ?? { status: 404 });
});
afterAll(async () => {
  await fetcher.close();
  await server.close();
});

async function collection(dedupe: string) {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const res = await ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${tenant.token}`, ...(payload ? { payload: payload as object } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  const made = await call('POST', '/collection/collections', { name: `Ocean ${dedupe}`, contractId: tenant.contract.id, ...(dedupe === 'default' ? {} : { dedupe }) });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const col = made.body as { _id: string; slug: string; dedupe: string };
  const input = async (service: string, type: string, value: string) => {
    // The API takes only https instances; the connector also reads a loopback http one (this test's server).
    const loopback = service === 'mastodon' && value.startsWith('http:');
    const res = await call('POST', '/collection/inputs', { service, type, input: loopback ? 'octopus@mastodon.social' : value, contractId: tenant.contract.id, collectionId: col._id });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    if (loopback) await ctx.db.updateTable('inputs').set({ input: value }).where('id', '=', res.body._id).execute();
    return res.body._id as string;
  };
  const services = loadConfig({ TWITTER_API_URL: `${server.base}/twitter`, TWITTER_BEARER_TOKEN: 'test-token' }).services;
  const poll = async (id: string) => refreshInput(ctx.db, (await inputRow(ctx.db, id))!, { fetch: fetcher, services, pollInterval: 300 });
  const queue = async () => (await call('GET', `/v1/queue/${tenant.contract.slug}?q=${col.slug}&since=0`)).body as ContentItem[];
  return { ...ctx, tenant, col, call, input, poll, queue };
}

describe('one story through rss, X and Mastodon', () => {
  it('becomes one card with three duplicates, takes the title edit, and splits', async () => {
    replies['/feed-a'] = () => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed(TITLE, 'story-1', 'utm_source=rss&utm_medium=feed') });
    replies['/feed-b'] = () => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed(TITLE, 'syndicated-77', 'utm_campaign=partner&mc_cid=abc') });
    replies['/twitter/2/tweets/search/recent'] = () => ({ status: 200, body: tweets() });
    replies['/api/v1/timelines/tag/octopus'] = () => ({ status: 200, body: statuses() });

    const c = await collection('default');
    expect(c.col.dedupe).toBe('url+text');
    const feedA = await c.input('rss', 'feed', `${server.base}/feed-a`);
    const feedB = await c.input('rss', 'feed', `${server.base}/feed-b`);
    const x = await c.input('twitter', 'tag', 'octopus');
    const toot = await c.input('mastodon', 'tag', `${server.base}/tags/octopus`);
    for (const id of [feedA, feedB, x, toot]) expect(await c.poll(id)).toBe(1);
    for (const id of [feedA, feedB, x, toot]) expect((await inputRow(c.db, id))!.lastError).toBeNull();

    let queued = await c.queue();
    expect(queued).toHaveLength(1);
    const card = queued[0]!;
    expect(card.service).toBe('rss');
    expect(card.title).toBe(TITLE);
    expect(card.duplicates!.map((d) => d.service)).toEqual(['rss', 'twitter', 'mastodon']);
    expect(card.duplicates![1]!.url).toBe('https://x.com/happycamper/status/1276035977375477760');
    expect(card.kudos.duplicates).toBe(3);

    // The first feed edits the headline: the card takes it, no new card.
    replies['/feed-a'] = () => ({ status: 200, headers: { 'content-type': 'application/rss+xml' }, body: feed(EDITED, 'story-1', 'utm_source=rss&utm_medium=feed') });
    expect(await c.poll(feedA)).toBe(0);
    queued = await c.queue();
    expect(queued.map((i) => [i.id, i.title])).toEqual([[card.id, EDITED]]);
    expect(queued[0]!.duplicates).toHaveLength(3);
    // Polled again, nothing is added or merged twice.
    for (const id of [feedB, x, toot]) expect(await c.poll(id)).toBe(0);
    expect((await c.queue())[0]!.duplicates).toHaveLength(3);

    // A moderator splits the X post out: it becomes its own card.
    const tweetId = card.duplicates![1]!.id;
    const split = await c.call('POST', `/v1/queue/${c.tenant.contract.slug}/split?q=${c.col.slug}&id=${encodeURIComponent(card.id)}`, { duplicateId: tweetId });
    expect(split.status, JSON.stringify(split.body)).toBe(200);
    queued = await c.queue();
    expect(queued.map((i) => i.id).sort()).toEqual([card.id, tweetId].sort());
    expect(queued.find((i) => i.id === card.id)!.duplicates!.map((d) => d.service)).toEqual(['rss', 'mastodon']);
  });

  it('stays four items with dedupe off', async () => {
    const c = await collection('off');
    for (const [service, type, value] of [
      ['rss', 'feed', `${server.base}/feed-a`],
      ['rss', 'feed', `${server.base}/feed-b`],
      ['twitter', 'tag', 'octopus'],
      ['mastodon', 'tag', `${server.base}/tags/octopus`],
    ] as const) expect(await c.poll(await c.input(service, type, value))).toBe(1);
    const queued = await c.queue();
    expect(queued.map((i) => i.service).sort()).toEqual(['mastodon', 'rss', 'rss', 'twitter']);
    expect(queued.every((i) => i.duplicates === undefined)).toBe(true);
  });
});
