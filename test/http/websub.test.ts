/**
 * WebSub (docs/services.md#websub) against a fake hub (test/websub-hub.ts) and a feed server,
 * both real HTTP servers on 127.0.0.1, with the app listening on a real port so the hub can call
 * back: a poll finds the hub → the subscriber subscribes → the hub verifies intent → signed
 * notifications are stored through the poll's path, unsigned and wrongly signed ones are not →
 * the lease is renewed → deactivating or deleting the input unsubscribes. Hostile cases beside:
 * verification of unknown ids and topics, a hub on a private address, huge bodies, another
 * contract's input. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { startWebsub, type WebsubSubscriber } from '../../src/collect/websub/subscriber.ts';
import { youtubeTopic } from '../../src/services/kit/websub-hub.ts';
import { openDb } from '../../src/store/db.ts';
import { listSubscriptions } from '../../src/store/websub.ts';
import { build, buildTenant, type TestContext, testPostgresUrl, inputRow, changeInput } from '../helper.ts';
import { type FakeHub, hubSignature, startFakeHub } from '../websub-hub.ts';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => {});
});

/** An Atom feed naming `hub` and `self`, with entries `ids`. */
function atom(self: string, hub: string | null, ids: string[]): string {
  const entries = ids.map((id) => `<entry><id>urn:x:${id}</id><title>Entry ${id}</title><link href="https://example.org/${id}"/><updated>2026-11-23T10:00:00Z</updated><content type="html">Text of ${id}</content></entry>`).join('');
  return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>urn:feed</id>${hub ? `<link rel="hub" href="${hub}"/>` : ''}<link rel="self" href="${self}"/><updated>2026-11-23T10:00:00Z</updated>${entries}</feed>`;
}

/** A feed server answering `body()` at /feed.xml. */
async function feedServer(body: (base: string) => string): Promise<{ url: string }> {
  let base = '';
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/atom+xml' }).end(body(base)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  }));
  return { url: `${base}/feed.xml` };
}

/** The app on a real port, API_URL pointing at it (the hub calls back there). */
async function listening(env: Record<string, string> = {}): Promise<TestContext> {
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', ...env });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  ctx.config.apiUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  return ctx;
}

async function hub(lease = 3600): Promise<FakeHub> {
  const started = await startFakeHub(lease);
  closers.push(() => started.close());
  return started;
}

/** The subscriber of the test, looking only when told (`tick`). */
function subscriber(ctx: TestContext, allowPrivate = true): WebsubSubscriber {
  const fetch = createFetcher({ allowPrivate });
  const started = startWebsub({ db: ctx.db, config: ctx.config, fetch }, 3_600_000);
  closers.push(async () => {
    await started.stop();
    await fetch.close();
  });
  return started;
}

async function createInput(ctx: TestContext, tenant: Awaited<ReturnType<typeof buildTenant>>, body: Record<string, unknown>): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: `/collection/inputs?access_token=${tenant.token}`, payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, ...body } });
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
}

const itemIds = async (ctx: TestContext, collectionId: string) =>
  (await ctx.db.selectFrom('items').select('id').where('collectionId', '=', collectionId).execute()).map((r) => r.id).sort();

const feedOf = async (ctx: TestContext, tenant: { token: string }, id: string) =>
  (await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}?access_token=${tenant.token}` })).json().status.feed as { mode: string; since: string; lastEvent: string | null };

describe('WebSub', () => {
  it('subscribes to the hub a feed names, stores signed notifications only, renews the lease and unsubscribes on deactivation', async () => {
    const ctx = await listening();
    const fake = await hub(2);
    const feed = await feedServer((base) => atom(`${base}/feed.xml`, fake.url, ['a']));
    const tenant = await buildTenant(ctx.db);
    const other = await buildTenant(ctx.db, 'Other Corp');
    const id = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: feed.url });
    await poll(ctx, id);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(1);
    expect(JSON.parse((await inputRow(ctx.db, id))!.sourceState).websub).toEqual({ hub: fake.url, topic: feed.url });

    const websub = subscriber(ctx);
    await websub.tick();
    await fake.verified(1);
    expect(fake.requests).toEqual([expect.objectContaining({ mode: 'subscribe', topic: feed.url, leaseSeconds: String(ctx.config.websub.leaseSeconds) })]);
    const [request] = fake.requests;
    const [sub] = await listSubscriptions(ctx.db);
    expect(request!.callback).toBe(`${ctx.config.apiUrl}/websub/${sub!.id}`);
    expect(sub!.id).toMatch(/^[0-9a-f]{32}$/);
    expect(request!.secret!.length).toBeGreaterThanOrEqual(32);
    // The secret is stored sealed, never in clear.
    expect(sub!.secret).not.toContain(request!.secret);
    expect(fake.verifications).toEqual([expect.objectContaining({ mode: 'subscribe', confirmed: true })]);
    expect(sub!.state).toBe('active');
    expect((await feedOf(ctx, tenant, id)).mode).toBe('push');

    // Unsigned and wrongly signed: acknowledged (W3C WebSub §8), nothing stored.
    expect(await fake.publish(feed.url, atom(feed.url, fake.url, ['unsigned']), { sign: 'none' })).toEqual([204]);
    expect(await fake.publish(feed.url, atom(feed.url, fake.url, ['wrong']), { sign: 'wrong' })).toEqual([204]);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(1);
    expect((await feedOf(ctx, tenant, id)).lastEvent).toBeNull();

    // Signed (sha256, and sha1 as the spec allows): stored through the poll's path.
    expect(await fake.publish(feed.url, atom(feed.url, fake.url, ['b']))).toEqual([204]);
    expect(await fake.publish(feed.url, atom(feed.url, fake.url, ['c']), { sign: 'sha1' })).toEqual([204]);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(3);
    expect((await feedOf(ctx, tenant, id)).lastEvent).not.toBeNull();
    // Two identical notifications at once (two API processes, a hub retry): stored once.
    expect(await Promise.all([fake.publish(feed.url, atom(feed.url, fake.url, ['d'])), fake.publish(feed.url, atom(feed.url, fake.url, ['d']))])).toEqual([[204], [204]]);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(4);
    expect(await itemIds(ctx, other.collection.id)).toEqual([]);

    // The lease (2 s granted) is renewed at 80 %.
    await new Promise((resolve) => setTimeout(resolve, 1700));
    await websub.tick();
    await fake.verified(2);
    expect(fake.requests.map((r) => r.mode)).toEqual(['subscribe', 'subscribe']);
    expect(fake.verifications[1]).toEqual(expect.objectContaining({ mode: 'subscribe', confirmed: true }));

    // Deactivated: unsubscribed, polled again.
    const put = await ctx.app.inject({ method: 'PUT', url: `/collection/inputs/${id}?access_token=${tenant.token}`, payload: { service: 'rss', type: 'feed', input: feed.url, active: false } });
    expect(put.statusCode, put.body).toBe(200);
    await websub.tick();
    await fake.verified(3);
    expect(fake.requests.at(-1)).toEqual(expect.objectContaining({ mode: 'unsubscribe', topic: feed.url }));
    expect(fake.verifications.at(-1)).toEqual(expect.objectContaining({ mode: 'unsubscribe', confirmed: true }));
    expect(await listSubscriptions(ctx.db)).toEqual([]);
    expect((await feedOf(ctx, tenant, id)).mode).toBe('poll');
    // Nothing is stored through the old callback any more.
    const gone = await ctx.app.inject({ method: 'POST', url: `/websub/${sub!.id}`, headers: { 'content-type': 'application/atom+xml', 'x-hub-signature': hubSignature('sha256', request!.secret!, 'x') }, payload: 'x' });
    expect(gone.statusCode).toBe(404);
  });

  it('unsubscribes when the input is deleted, and subscribes YouTube channels through the configured hub', async () => {
    const fake = await hub();
    const ctx = await listening({ WEBSUB_YOUTUBE_HUB: fake.url });
    const tenant = await buildTenant(ctx.db);
    const channel = 'UCxxxxxxxxxxxxxxxxxxxxxx';
    const id = await createInput(ctx, tenant, { service: 'youtube', type: 'channel', input: channel });
    const websub = subscriber(ctx);
    await websub.tick();
    await fake.verified(1);
    const topic = youtubeTopic(channel);
    expect(fake.requests[0]).toEqual(expect.objectContaining({ mode: 'subscribe', topic }));
    expect((await feedOf(ctx, tenant, id)).mode).toBe('push');

    // YouTube's notification: an Atom entry with yt:videoId, read by the youtube connector.
    const notification = `<?xml version='1.0' encoding='UTF-8'?><feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="https://pubsubhubbub.appspot.com"/><link rel="self" href="${topic}"/><title>YouTube video feed</title><updated>2026-11-23T10:00:00Z</updated><entry><id>yt:video:VIDEO000001</id><yt:videoId>VIDEO000001</yt:videoId><yt:channelId>${channel}</yt:channelId><title>Pushed video</title><link rel="alternate" href="https://www.youtube.com/watch?v=VIDEO000001"/><author><name>Channel</name><uri>https://www.youtube.com/channel/${channel}</uri></author><published>2026-11-23T09:59:00+00:00</published><updated>2026-11-23T10:00:00+00:00</updated></entry></feed>`;
    expect(await fake.publish(topic, notification)).toEqual([204]);
    const items = await ctx.db.selectFrom('items').selectAll().where('collectionId', '=', tenant.collection.id).execute();
    expect(items.map((i) => i.id)).toEqual(['youtube_VIDEO000001']);

    const del = await ctx.app.inject({ method: 'DELETE', url: `/collection/inputs/${id}?access_token=${tenant.token}` });
    expect(del.statusCode).toBe(204);
    await websub.tick();
    await fake.verified(2);
    expect(fake.requests.at(-1)).toEqual(expect.objectContaining({ mode: 'unsubscribe', topic }));
    expect(await listSubscriptions(ctx.db)).toEqual([]);
  });

  it('refuses verifications of unknown ids, other topics and modes not asked for; ignores what another contract cannot touch', async () => {
    const ctx = await listening();
    const fake = await hub();
    const tenant = await buildTenant(ctx.db);
    const other = await buildTenant(ctx.db, 'Other Corp');
    const mine = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/a.xml' });
    const theirs = await createInput(ctx, other, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/b.xml' });
    await changeInput(ctx.db, mine, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/a.xml' } }) });
    await changeInput(ctx.db, theirs, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/b.xml' } }) });
    const websub = subscriber(ctx);
    await websub.tick();
    await fake.verified(2);
    const subs = await listSubscriptions(ctx.db);
    const a = subs.find((s) => s.inputId === mine)!;
    const b = subs.find((s) => s.inputId === theirs)!;

    const verify = (id: string, query: Record<string, string>) => ctx.app.inject({ method: 'GET', url: `/websub/${id}?${new URLSearchParams(query)}` });
    expect((await verify('0'.repeat(32), { 'hub.mode': 'subscribe', 'hub.topic': a.topic, 'hub.challenge': 'x', 'hub.lease_seconds': '60' })).statusCode).toBe(404);
    expect((await verify(a.id, { 'hub.mode': 'subscribe', 'hub.topic': b.topic, 'hub.challenge': 'x', 'hub.lease_seconds': '60' })).statusCode).toBe(404);
    // Verified already: nothing pending, so no challenge is echoed (a replayed verification).
    expect((await verify(a.id, { 'hub.mode': 'subscribe', 'hub.topic': a.topic, 'hub.challenge': 'x', 'hub.lease_seconds': '60' })).statusCode).toBe(404);
    expect((await verify(a.id, { 'hub.mode': 'unsubscribe', 'hub.topic': a.topic, 'hub.challenge': 'x' })).statusCode).toBe(404);
    expect(await listSubscriptions(ctx.db)).toHaveLength(2);

    // A notification signed with the other contract's secret, sent to this callback: ignored.
    const body = atom('https://example.org/a.xml', null, ['x']);
    const theirSecret = fake.requests.find((r) => r.topic === b.topic)!.secret!;
    const res = await ctx.app.inject({ method: 'POST', url: `/websub/${a.id}`, headers: { 'content-type': 'application/atom+xml', 'x-hub-signature': hubSignature('sha256', theirSecret, body) }, payload: body });
    expect(res.statusCode).toBe(204);
    expect(await itemIds(ctx, tenant.collection.id)).toEqual([]);
    expect(await itemIds(ctx, other.collection.id)).toEqual([]);
    // Signed right, it lands in this contract's collection only.
    expect(await fake.publish('https://example.org/a.xml', body)).toEqual([204]);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(1);
    expect(await itemIds(ctx, other.collection.id)).toEqual([]);
    // Unknown callback id: 404.
    expect((await ctx.app.inject({ method: 'POST', url: `/websub/${'f'.repeat(32)}`, headers: { 'content-type': 'application/atom+xml' }, payload: body })).statusCode).toBe(404);
  });

  it('bounds notification bodies and answers a signed non-feed with 400 naming body', async () => {
    const ctx = await listening();
    const fake = await hub();
    const tenant = await buildTenant(ctx.db);
    const id = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/a.xml' });
    await changeInput(ctx.db, id, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/a.xml' } }) });
    await subscriber(ctx).tick();
    await fake.verified(1);
    const huge = atom('https://example.org/a.xml', null, Array.from({ length: 12_000 }, (_, i) => `huge-${i}`));
    expect(huge.length).toBeGreaterThan(1024 * 1024);
    expect(await fake.publish('https://example.org/a.xml', huge)).toEqual([413]);
    expect(await fake.publish('https://example.org/a.xml', 'not a feed', { contentType: 'text/plain' })).toEqual([400]);
    expect(await itemIds(ctx, tenant.collection.id)).toEqual([]);
  });

  it('polls again when the hub denies the subscription, and ends every subscription with WEBSUB=false', async () => {
    const ctx = await listening();
    const fake = await hub();
    const tenant = await buildTenant(ctx.db);
    const ids = [await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/a.xml' }), await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/b.xml' })];
    for (const [i, id] of ids.entries()) await changeInput(ctx.db, id, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: `https://example.org/${i}.xml` } }) });
    const websub = subscriber(ctx);
    await websub.tick();
    await fake.verified(2);
    expect((await feedOf(ctx, tenant, ids[0]!)).mode).toBe('push');
    const denied = (await listSubscriptions(ctx.db)).find((s) => s.inputId === ids[0])!;
    const res = await ctx.app.inject({ method: 'GET', url: `/websub/${denied.id}?${new URLSearchParams({ 'hub.mode': 'denied', 'hub.topic': denied.topic, 'hub.reason': 'not allowed here' })}` });
    expect(res.statusCode).toBe(200);
    expect((await feedOf(ctx, tenant, ids[0]!)).mode).toBe('poll');
    expect((await listSubscriptions(ctx.db)).find((s) => s.id === denied.id)).toEqual(expect.objectContaining({ state: 'subscribing', lastError: 'the hub denied the subscription: not allowed here' }));

    ctx.config.websub.enabled = false;
    await websub.tick();
    await fake.verified(3);
    expect(fake.requests.filter((r) => r.mode === 'unsubscribe').map((r) => r.topic)).toEqual(['https://example.org/1.xml']);
    // The denied one holds nothing at the hub: dropped without a request; the other unsubscribed and verified.
    expect((await feedOf(ctx, tenant, ids[1]!)).mode).toBe('poll');
    expect(await listSubscriptions(ctx.db)).toEqual([]);
  });

  it('two API processes receiving the same notification store it once; two collector processes send one subscription', async () => {
    const ctx = await listening();
    const fake = await hub();
    const tenant = await buildTenant(ctx.db);
    const id = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/a.xml' });
    await changeInput(ctx.db, id, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/a.xml' } }) });
    // Two subscribers (two collector processes): one holds the websub lease and acts.
    const first = subscriber(ctx);
    const second = subscriber(ctx);
    await Promise.all([first.tick(), second.tick()]);
    await fake.verified(1);
    expect(fake.requests).toHaveLength(1);

    // A second API process: its own app and database connections, the same database (PostgreSQL;
    // SQLite serves one process: there, the same notification arrives twice at once at the one).
    const db2 = testPostgresUrl ? openDb(ctx.config.databaseUrl) : ctx.db;
    const app2 = testPostgresUrl ? await buildApp(ctx.config, { db: db2 }) : ctx.app;
    if (testPostgresUrl) {
      closers.push(async () => {
        await app2.close();
        await db2.destroy();
      });
    }
    const [sub] = await listSubscriptions(ctx.db);
    const body = atom('https://example.org/a.xml', null, ['once', 'twice']);
    const headers = { 'content-type': 'application/atom+xml', 'x-hub-signature': hubSignature('sha256', fake.requests[0]!.secret!, body) };
    const sent = await Promise.all([ctx.app, app2, ctx.app, app2].map((app) => app.inject({ method: 'POST', url: `/websub/${sub!.id}`, headers, payload: body })));
    expect(sent.map((r) => r.statusCode)).toEqual([204, 204, 204, 204]);
    expect(await itemIds(ctx, tenant.collection.id)).toHaveLength(2);
    expect((await inputRow(ctx.db, id))!.collected).toBe(2);
  });

  it('puts the input back to polling when its lease runs out unrenewed, and retries the hub later', async () => {
    const ctx = await listening();
    const fake = await hub(1);
    const tenant = await buildTenant(ctx.db);
    const id = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/a.xml' });
    await changeInput(ctx.db, id, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/a.xml' } }) });
    const websub = subscriber(ctx);
    await websub.tick();
    await fake.verified(1);
    expect((await feedOf(ctx, tenant, id)).mode).toBe('push');
    fake.down = true;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const before = Date.now();
    await websub.tick();
    expect((await feedOf(ctx, tenant, id)).mode).toBe('poll');
    const [sub] = await listSubscriptions(ctx.db);
    expect(sub).toEqual(expect.objectContaining({ state: 'subscribing', pending: null, attempts: 1, lastError: 'the hub answered HTTP 503: down' }));
    // Backoff: not before a minute.
    expect(sub!.nextActionAt).toBeGreaterThanOrEqual(before + 60_000);
    // Notifications are not taken while not subscribed.
    const body = atom('https://example.org/a.xml', null, ['late']);
    const late = await ctx.app.inject({ method: 'POST', url: `/websub/${sub!.id}`, headers: { 'content-type': 'application/atom+xml', 'x-hub-signature': hubSignature('sha256', fake.requests[0]!.secret!, body) }, payload: body });
    expect(late.statusCode).toBe(404);
  });

  it('refuses a hub on a private address without ALLOW_PRIVATE_FETCH', async () => {
    const ctx = await listening({ ALLOW_PRIVATE_FETCH: 'false' });
    const fake = await hub();
    const tenant = await buildTenant(ctx.db);
    const id = await createInput(ctx, tenant, { service: 'rss', type: 'feed', input: 'https://example.org/a.xml' });
    await changeInput(ctx.db, id, { sourceState: JSON.stringify({ websub: { hub: fake.url, topic: 'https://example.org/a.xml' } }) });
    await subscriber(ctx, false).tick();
    expect(fake.requests).toEqual([]);
    const [sub] = await listSubscriptions(ctx.db);
    expect(sub).toEqual(expect.objectContaining({ state: 'subscribing', pending: null, attempts: 1 }));
    expect(sub!.lastError).toMatch(/not a public address/);
    expect((await feedOf(ctx, tenant, id)).mode).toBe('poll');
  });
});
