/**
 * Atom tombstones (RFC 6721; docs/services.md#rss, "Deletions") through the real paths: a feed
 * served by a local HTTP server and polled (`refreshInput`), and a signed WebSub notification
 * from the fake hub (test/websub-hub.ts) to the app listening on 127.0.0.1. The deleted entry is
 * gone from the content read and count, and stays in the queue as removed. Hostile beside: a
 * tombstone in one feed leaves the same guid collected from another feed alone, in another
 * contract or the same collection; an entry that merely leaves a feed stays. YouTube's hub
 * notifies a deleted video the same way (`yt:video:<id>`). SQLite, and
 * PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { startWebsub } from '../../src/collect/websub/subscriber.ts';
import { TOMBSTONES_NS } from '../../src/services/kit/feed.ts';
import { youtubeTopic } from '../../src/services/kit/websub-hub.ts';
import { build, buildTenant, inputRow, type TestContext } from '../helper.ts';
import { startFakeHub } from '../websub-hub.ts';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => {});
});

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

/** An Atom feed with entries `ids` (ids `urn:x:<id>`) and tombstones of `deleted`, naming `hub` when given. */
function atom(self: string, ids: string[], deleted: string[] = [], hub?: string): string {
  const entries = ids.map((id) => `<entry><id>urn:x:${id}</id><title>Entry ${id}</title><link href="https://example.org/${id}"/><updated>2026-11-23T10:00:00Z</updated><content type="html">Text of ${id}</content></entry>`).join('');
  const tombstones = deleted.map((id) => `<at:deleted-entry ref="urn:x:${id}" when="2026-11-24T10:00:00Z"/>`).join('');
  return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:at="${TOMBSTONES_NS}"><title>T</title><id>urn:feed</id>${hub ? `<link rel="hub" href="${hub}"/>` : ''}<link rel="self" href="${self}"/><updated>2026-11-24T10:00:00Z</updated>${tombstones}${entries}</feed>`;
}

/** A feed server answering what `body` holds now, at /<name>.xml. */
async function feedServer(): Promise<{ url: (name: string) => string; serve: (name: string, text: string) => void }> {
  const bodies = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/atom+xml' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  }));
  return { url: (name) => `${base}/${name}.xml`, serve: (name, text) => bodies.set(`/${name}.xml`, text) };
}

async function createInput(ctx: TestContext, tenant: Tenant, input: string): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: `/collection/inputs?access_token=${tenant.token}`, payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json()._id as string;
}

async function poll(ctx: TestContext, id: string): Promise<void> {
  const fetch = createFetcher({ allowPrivate: true });
  try {
    await refreshInput(ctx.db, (await inputRow(ctx.db, id))!, { fetch, services: ctx.config.services, pollInterval: 300 });
  } finally {
    await fetch.close();
  }
  expect((await inputRow(ctx.db, id))!.lastError).toBeNull();
}

/** The titles the public content read serves, sorted. */
async function content(ctx: TestContext, tenant: Tenant): Promise<string[]> {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0` });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { title: string }[]).map((i) => i.title).sort();
}

async function count(ctx: TestContext, tenant: Tenant): Promise<number> {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0` });
  expect(res.statusCode, res.body).toBe(200);
  return Number((res.json() as { count: string }).count);
}

/** Title → state of the collection's items as the queue read answers them. */
async function queue(ctx: TestContext, tenant: Tenant): Promise<Record<string, string>> {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${tenant.token}` });
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries((res.json() as { title: string; state: string }[]).map((i) => [i.title, i.state]));
}

describe('Atom tombstones', () => {
  it('a polled tombstone removes the entry from the content read and count, keeps it in the queue as removed; an entry that left the feed stays', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const feeds = await feedServer();
    const tenant = await buildTenant(ctx.db);
    feeds.serve('a', atom(feeds.url('a'), ['1', '2', '3']));
    const id = await createInput(ctx, tenant, feeds.url('a'));
    await poll(ctx, id);
    expect(await content(ctx, tenant)).toEqual(['Entry 1', 'Entry 2', 'Entry 3']);

    // Entry 2 deleted (a tombstone); entry 3 simply no longer listed.
    feeds.serve('a', atom(feeds.url('a'), ['1'], ['2']));
    await poll(ctx, id);
    expect(await content(ctx, tenant)).toEqual(['Entry 1', 'Entry 3']);
    expect(await count(ctx, tenant)).toBe(2);
    expect(await queue(ctx, tenant)).toMatchObject({ 'Entry 1': 'published', 'Entry 2': 'removed', 'Entry 3': 'published' });

    // Listed again later (a feed that keeps its tombstone, or not): never collected again.
    feeds.serve('a', atom(feeds.url('a'), ['1', '2']));
    await poll(ctx, id);
    expect(await content(ctx, tenant)).toEqual(['Entry 1', 'Entry 3']);
  });

  it('a tombstone removes only what inputs of that very feed collected: the same guid from another feed stays, in another contract or the same collection', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const feeds = await feedServer();
    const acme = await buildTenant(ctx.db, 'Acme');
    const follower = await buildTenant(ctx.db, 'Follower');
    const other = await buildTenant(ctx.db, 'Other');
    // Feed A and feed B both carry an entry with the id urn:x:shared (the same item id).
    feeds.serve('a', atom(feeds.url('a'), ['shared', 'a-only']));
    feeds.serve('b', atom(feeds.url('b'), ['shared']));
    const acmeA = await createInput(ctx, acme, feeds.url('a'));
    const followerA = await createInput(ctx, follower, feeds.url('a'));
    const otherB = await createInput(ctx, other, feeds.url('b'));
    // In one collection, feed B polled first: its row of `shared` is feed B's.
    const acmeB = await createInput(ctx, acme, feeds.url('b'));
    await poll(ctx, acmeB);
    for (const id of [acmeA, followerA, otherB]) await poll(ctx, id);
    expect(await content(ctx, acme)).toEqual(['Entry a-only', 'Entry shared']);
    expect(await content(ctx, other)).toEqual(['Entry shared']);

    // Feed A deletes `shared` and `a-only`.
    feeds.serve('a', atom(feeds.url('a'), [], ['shared', 'a-only']));
    await poll(ctx, acmeA);
    // Every input of feed A, whatever the contract: removed there.
    expect(await content(ctx, follower)).toEqual([]);
    // Feed B's `shared` is not feed A's to delete: another contract's, and the one in Acme's collection stored from feed B.
    expect(await content(ctx, other)).toEqual(['Entry shared']);
    expect(await content(ctx, acme)).toEqual(['Entry shared']);
    expect(await queue(ctx, other)).toEqual({ 'Entry shared': 'published' });
  });

  it('a signed WebSub notification carrying a tombstone removes the entry', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    ctx.config.apiUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const hub = await startFakeHub(3600);
    closers.push(() => hub.close());
    const feeds = await feedServer();
    const tenant = await buildTenant(ctx.db);
    const topic = feeds.url('a');
    feeds.serve('a', atom(topic, ['1', '2'], [], hub.url));
    const id = await createInput(ctx, tenant, topic);
    await poll(ctx, id);
    const fetch = createFetcher({ allowPrivate: true });
    const websub = startWebsub({ db: ctx.db, config: ctx.config, fetch }, 3_600_000);
    closers.push(async () => {
      await websub.stop();
      await fetch.close();
    });
    await websub.tick();
    await hub.verified(1);
    expect((await inputRow(ctx.db, id))!.feedMode).toBe('push');
    expect(await content(ctx, tenant)).toEqual(['Entry 1', 'Entry 2']);

    // The hub distributes the feed with a tombstone of entry 1 and a new entry 3.
    expect(await hub.publish(topic, atom(topic, ['3'], ['1'], hub.url))).toEqual([204]);
    expect(await content(ctx, tenant)).toEqual(['Entry 2', 'Entry 3']);
    expect(await count(ctx, tenant)).toBe(2);
    expect(await queue(ctx, tenant)).toMatchObject({ 'Entry 1': 'removed' });

    // Unsigned: ignored, as any unsigned notification (W3C WebSub §8): nothing removed.
    expect(await hub.publish(topic, atom(topic, [], ['2'], hub.url), { sign: 'none' })).toEqual([204]);
    expect(await content(ctx, tenant)).toEqual(['Entry 2', 'Entry 3']);
  });

  it("YouTube's hub notifying a deleted video (a tombstone of yt:video:<id>) removes the video", async () => {
    const hub = await startFakeHub(3600);
    closers.push(() => hub.close());
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBSUB_YOUTUBE_HUB: hub.url });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    ctx.config.apiUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const tenant = await buildTenant(ctx.db);
    const channel = 'UCxxxxxxxxxxxxxxxxxxxxxx';
    const res = await ctx.app.inject({ method: 'POST', url: `/collection/inputs?access_token=${tenant.token}`, payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'youtube', type: 'channel', input: channel } });
    expect(res.statusCode, res.body).toBe(201);
    const fetch = createFetcher({ allowPrivate: true });
    const websub = startWebsub({ db: ctx.db, config: ctx.config, fetch }, 3_600_000);
    closers.push(async () => {
      await websub.stop();
      await fetch.close();
    });
    await websub.tick();
    await hub.verified(1);
    const topic = youtubeTopic(channel);
    const feed = (body: string) => `<?xml version='1.0' encoding='UTF-8'?><feed xmlns:at="${TOMBSTONES_NS}" xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="https://pubsubhubbub.appspot.com"/><link rel="self" href="${topic}"/><title>YouTube video feed</title><updated>2026-11-23T10:00:00Z</updated>${body}</feed>`;
    const video = (id: string) => `<entry><id>yt:video:${id}</id><yt:videoId>${id}</yt:videoId><yt:channelId>${channel}</yt:channelId><title>Video ${id}</title><link rel="alternate" href="https://www.youtube.com/watch?v=${id}"/><author><name>Channel</name><uri>https://www.youtube.com/channel/${channel}</uri></author><published>2026-11-23T09:59:00+00:00</published><updated>2026-11-23T10:00:00+00:00</updated></entry>`;
    expect(await hub.publish(topic, feed(video('VIDEO000001')))).toEqual([204]);
    expect(await hub.publish(topic, feed(video('VIDEO000002')))).toEqual([204]);
    expect(await content(ctx, tenant)).toEqual(['Video VIDEO000001', 'Video VIDEO000002']);

    expect(await hub.publish(topic, feed(`<at:deleted-entry ref="yt:video:VIDEO000001" when="2026-11-24T10:00:00+00:00"/>`))).toEqual([204]);
    expect(await content(ctx, tenant)).toEqual(['Video VIDEO000002']);
    expect(await queue(ctx, tenant)).toMatchObject({ 'Video VIDEO000001': 'removed', 'Video VIDEO000002': 'published' });
  });
});
