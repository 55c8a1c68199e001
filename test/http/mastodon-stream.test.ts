/**
 * Mastodon streaming through HTTP against a real database (docs/services.md#mastodon-streaming):
 * inputs created through the API on a fake instance (test/fake-mastodon.ts, a real server on
 * 127.0.0.1), statuses streamed to it visible in the content API, gaps after a disconnect filled
 * with `min_id` and nothing stored twice, edits (`status.update`) applied under a moderator's
 * edit, deletions removing the status everywhere (docs/api.md#removed-at-the-source: content,
 * count, streams, webhook, the queue, a later poll), one listener per stream among two holders, the private
 * address guard, deactivated inputs, other contracts' inputs, and the `http://host:port` form.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startMastodonStreams, type MastodonStreams } from '../../src/services/mastodon/stream/streaming.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { holdStream, saveStreamCursor } from '../../src/store/streams.ts';
import type { ContentItem } from '../../src/item.ts';
import { type DeliveryWorker, startDelivery } from '../../src/collect/deliver.ts';
import { build, buildTenant, expectError, type TestContext } from '../helper.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';
import { connect } from './sse.ts';
import { startFakeMastodon, type FakeMastodon } from '../fake-mastodon.ts';
import { until } from '../processes.ts';

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  while (running.length) await running.pop()!.stop();
});

/** A listener with test-sized times; stopped after the test. */
function listen(ctx: TestContext, holder: string, overrides: Partial<TestContext['config']> = {}): MastodonStreams {
  const streams = startMastodonStreams({ db: ctx.db, config: { ...ctx.config, ...overrides } }, { holder, leaseMs: 1500, tickMs: 100, graceMs: 300, reconnect: { minMs: 50, maxMs: 200 } });
  running.push(streams);
  return streams;
}

async function setup(env: Record<string, string> = { ALLOW_PRIVATE_FETCH: 'true' }) {
  const ctx = await build(env);
  const fake = await startFakeMastodon();
  running.push({ stop: () => fake.close() });
  const tenant = await buildTenant(ctx.db);
  const call = (method: 'POST' | 'PUT' | 'GET', url: string, payload?: unknown, token = tenant.token) =>
    ctx.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload: payload as object } : {}) });
  /** `force`: a second input of a source the collection has (docs/api.md#duplicates-of-a-source). */
  const addInput = async (type: string, input: string, owner: { contract: { id: string }; collection: { id: string }; token: string } = tenant, force = false) => {
    const res = await call('POST', `/collection/inputs${force ? '?force=true' : ''}`, { service: 'mastodon', type, input, contractId: owner.contract.id, collectionId: owner.collection.id }, owner.token);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { _id: string; input: string; type: string };
  };
  const status = async (id: string, token = tenant.token) => (await call('GET', `/collection/inputs/${id}`, undefined, token)).json().status as { collected: number; feed: { mode: string; lastEvent: string | null } };
  const content = async (owner: { contract: { slug: string }; collection: { slug: string } } = tenant) => {
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${owner.contract.slug}?q=${owner.collection.slug}&limit=100` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as ContentItem[]).map((item) => item.id);
  };
  const streamed = (id: string, token = tenant.token) => until(`input ${id} streamed`, async () => ((await status(id, token)).feed.mode === 'stream' ? true : undefined), 10_000);
  return { ...ctx, ctx, fake, tenant, call, addInput, status, content, streamed, itemId: (statusId: string) => `mastodon_${fake.host}:${statusId}` };
}

describe('mastodon streaming', () => {
  it('stores streamed statuses, visible in the content API, and says the input is fed by a stream', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/Hoot`);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    expect(t.fake.requests).toContain('/api/v1/streaming/hashtag?tag=hoot');
    t.fake.publish(t.fake.status({ id: '1001', tags: ['hoot'] }));
    t.fake.publish(t.fake.status({ id: '1002', tags: ['other'] })); // another tag's stream: not ours
    await until('the status in the content API', async () => ((await t.content()).includes(t.itemId('1001')) ? true : undefined), 10_000);
    expect(await t.content()).toEqual([t.itemId('1001')]);
    const { feed, collected } = await t.status(input._id);
    expect(feed.lastEvent).not.toBeNull();
    expect(collected).toBe(1);
  });

  it('fills the gap after a disconnect from the REST timeline with min_id, and stores nothing twice', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    t.fake.publish(t.fake.status({ id: '2001', tags: ['hoot'] }));
    await until('the first status', async () => ((await t.content()).includes(t.itemId('2001')) ? true : undefined), 10_000);
    const opened = t.fake.opened;
    t.fake.disconnect();
    // Published while no stream is open: only the gap fill can bring it.
    t.fake.publish(t.fake.status({ id: '2002', tags: ['hoot'] }), { streamed: false });
    await until('a new connection', () => (t.fake.opened > opened ? true : undefined), 10_000);
    await until('the gap filled', async () => ((await t.content()).includes(t.itemId('2002')) ? true : undefined), 10_000);
    expect(t.fake.requests).toContain('/api/v1/timelines/tag/hoot?limit=40&min_id=2001');
    // Streamed after the reconnect, and answered again by a later gap fill: one card each.
    t.fake.publish(t.fake.status({ id: '2003', tags: ['hoot'] }));
    await until('the third status', async () => ((await t.content()).includes(t.itemId('2003')) ? true : undefined), 10_000);
    t.fake.disconnect();
    await until('another connection', () => (t.fake.open() > 0 ? true : undefined), 10_000);
    await until('the second gap fill', () => (t.fake.requests.includes('/api/v1/timelines/tag/hoot?limit=40&min_id=2003') ? true : undefined), 10_000);
    expect((await t.content()).sort()).toEqual([t.itemId('2001'), t.itemId('2002'), t.itemId('2003')]);
    expect((await t.status(input._id)).collected).toBe(3);
  });

  it('updates a stored card on status.update and brings in no old status by an edit', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    const first = t.fake.status({ id: '2501', tags: ['hoot'], text: 'first words' });
    t.fake.publish(first);
    await until('the status', async () => ((await t.content()).includes(t.itemId('2501')) ? true : undefined), 10_000);
    t.fake.send('status.update', t.fake.status({ id: '2501', tags: ['hoot'], text: 'edited words' }));
    t.fake.send('status.update', t.fake.status({ id: '2400', tags: ['hoot'], text: 'an old status, edited' }));
    t.fake.publish(t.fake.status({ id: '2502', tags: ['hoot'] })); // after the edits, on the same stream
    await until('the next status', async () => ((await t.content()).includes(t.itemId('2502')) ? true : undefined), 10_000);
    const res = await t.ctx.app.inject({ method: 'GET', url: `/v1/content/${t.tenant.contract.slug}?q=${t.tenant.collection.slug}` });
    const items = res.json() as ContentItem[];
    expect(items.map((item) => item.id).sort()).toEqual([t.itemId('2501'), t.itemId('2502')]);
    expect(items.find((item) => item.id === t.itemId('2501'))!.text).toBe('<p>edited words</p>');
  });

  it("keeps a moderator's edit over a status.update: the source's new text is the queue's original", async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    t.fake.publish(t.fake.status({ id: '2551', tags: ['hoot'], text: 'first words' }));
    await until('the status', async () => ((await t.content()).includes(t.itemId('2551')) ? true : undefined), 10_000);
    const queue = `/v1/queue/${t.tenant.contract.slug}?q=${t.tenant.collection.slug}`;
    const moderated = await t.ctx.app.inject({ method: 'PATCH', url: `${queue}&id=${encodeURIComponent(t.itemId('2551'))}`, headers: { authorization: `Bearer ${t.tenant.token}` }, payload: { edit: { text: 'Moderator wording' } } });
    expect(moderated.statusCode, moderated.body).toBe(200);
    t.fake.send('status.update', t.fake.status({ id: '2551', tags: ['hoot'], text: 'second words' }));
    const queued = async () => ((await t.call('GET', queue)).json() as ContentItem[]).find((item) => item.id === t.itemId('2551'))!;
    await until('the edit applied', async () => ((await queued()).original?.text === '<p>second words</p>' ? true : undefined), 10_000);
    expect((await queued()).text).toBe('Moderator wording');
  });

  it('removes a deleted status: gone from content, count and both streams, kept in the queue as removed, item.removed delivered, not brought back by a poll', { timeout: 60_000 }, async () => {
    const t = await setup();
    const other = await buildTenant(t.db, 'Other Paper');
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    await t.addInput('tag', `${t.fake.base}/tags/hoot`, other);
    const to: Receiver = await startReceiver();
    running.push({ stop: () => to.close() });
    const hook = await t.call('POST', '/collection/webhooks', { name: 'Removals', contractId: t.tenant.contract.id, url: `${to.url}/removed`, events: ['item.removed'] });
    expect(hook.statusCode, hook.body).toBe(201);
    to.secrets.set('/removed', hook.json().secret);
    await t.ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.ctx.app.server.address() as { port: number }).port}`;
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    const doomed = t.fake.status({ id: '2701', tags: ['hoot'] });
    t.fake.publish(doomed);
    t.fake.publish(t.fake.status({ id: '2702', tags: ['hoot'] }));
    const both = [t.itemId('2701'), t.itemId('2702')];
    for (const owner of [t.tenant, other]) await until('both statuses', async () => ((await t.content(owner)).length === 2 ? true : undefined), 10_000);
    const q = `q=${t.tenant.collection.slug}`;
    const publicStream = await connect(`${base}/v1/content/${t.tenant.contract.slug}/stream?${q}`);
    const moderatorStream = await connect(`${base}/v1/queue/${t.tenant.contract.slug}/stream?${q}&access_token=${encodeURIComponent(t.tenant.token)}`);
    running.push({ stop: publicStream.close }, { stop: moderatorStream.close });

    // Hostile first: an unknown id, junk, another instance's form of the id; then the real delete.
    t.fake.raw('event: delete\ndata: 999999\n\nevent: delete\ndata: {"id":"2702"}\n\nevent: delete\ndata: ../2702\n\n');
    t.fake.send('delete', doomed);
    for (const owner of [t.tenant, other]) await until('the status gone', async () => ((await t.content(owner)).length === 1 ? true : undefined), 10_000);
    expect(await t.content()).toEqual([t.itemId('2702')]);
    expect(await t.content(other)).toEqual([t.itemId('2702')]);
    for (const stream of [publicStream, moderatorStream]) {
      const [event] = await stream.until(1);
      expect(event).toMatchObject({ event: 'remove', data: JSON.stringify({ id: t.itemId('2701') }) });
    }
    const count = await t.ctx.app.inject({ method: 'GET', url: `/v1/count/${t.tenant.contract.slug}?${q}` });
    expect(count.json()).toEqual({ count: '1' });
    const queueCount = await t.call('GET', `/v1/queue/${t.tenant.contract.slug}/count?${q}`);
    expect(queueCount.json()).toEqual({ published: 1, unpublished: 0 });

    // The queue keeps it, removed, and filters on it.
    const queued = await t.call('GET', `/v1/queue/${t.tenant.contract.slug}?${q}&state=removed`);
    expect(queued.statusCode, queued.body).toBe(200);
    const [removed] = queued.json() as ContentItem[];
    expect(queued.json()).toHaveLength(1);
    expect(removed).toMatchObject({ id: t.itemId('2701'), state: 'removed', removedReason: 'deleted' });
    expect(Date.parse(removed!.removedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(((await t.call('GET', `/v1/queue/${t.tenant.contract.slug}?${q}`)).json() as ContentItem[]).map((item) => item.id).sort()).toEqual(both);

    // No moderator publishes it again, alone or in bulk; another contract's token does not see it.
    const patch = (query: string, payload: object, token = t.tenant.token) =>
      t.ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${t.tenant.contract.slug}?${q}${query}`, headers: { authorization: `Bearer ${token}` }, payload });
    expectError(await patch(`&id=${encodeURIComponent(t.itemId('2701'))}`, { state: 'published' }), 409, { name: 'ConflictError', code: 4091, propertyName: 'state' });
    expectError(await patch('', { state: 'published', ids: both }), 409, { name: 'ConflictError', code: 4091, propertyName: 'state' });
    expect((await t.content()).length).toBe(1);
    const foreign = await t.call('GET', `/v1/queue/${t.tenant.contract.slug}?${q}&state=removed`, undefined, other.token);
    expect(foreign.statusCode, foreign.body).toBe(403);

    // The webhook event, once, for this contract's collection.
    const delivery: DeliveryWorker = startDelivery({ db: t.db, config: t.config }, 3_600_000);
    running.push(delivery);
    await until('item.removed delivered', async () => {
      await delivery.tick();
      return to.delivered('/removed').length >= 1 ? true : undefined;
    }, 15_000);
    const [event] = to.delivered('/removed').map((r) => r.event!);
    expect(event).toMatchObject({ type: 'item.removed', data: { contractId: t.tenant.contract.id, collectionId: t.tenant.collection.id, itemId: t.itemId('2701'), state: 'removed', reason: 'deleted' } });

    // A poll of the timeline, which still lists it (a lagging instance), does not bring it back.
    const collector = startCollector({ db: t.db, config: t.config }, 3_600_000);
    running.push(collector);
    await t.db.updateTable('inputs').set({ pollNowAt: null }).where('id', '=', input._id).execute();
    const asked = t.fake.requests.length;
    const polled = await t.call('POST', `/collection/inputs/${input._id}/poll`);
    expect(polled.statusCode, polled.body).toBe(200);
    expect(polled.json().status, polled.body).toBe('ok');
    expect(t.fake.requests.slice(asked).some((path) => path.startsWith('/api/v1/timelines/tag/hoot'))).toBe(true);
    expect(await t.content()).toEqual([t.itemId('2702')]);
    const again = (await t.call('GET', `/v1/queue/${t.tenant.contract.slug}?${q}&state=removed`)).json() as ContentItem[];
    expect(again.map((item) => [item.id, item.state])).toEqual([[t.itemId('2701'), 'removed']]);
  });

  it('survives a hostile instance: events that are not JSON are skipped, an event over 1 MiB ends the connection', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    t.fake.raw('event: update\ndata: {not json\n\nbogus: field\n\nevent: update\ndata: []\n\n');
    t.fake.publish(t.fake.status({ id: '2601', tags: ['hoot'] }));
    await until('the status after the junk', async () => ((await t.content()).includes(t.itemId('2601')) ? true : undefined), 10_000);
    const opened = t.fake.opened;
    t.fake.raw(`event: update\ndata: ${'x'.repeat(1024 * 1024 + 10)}`); // never ends
    await until('a new connection', () => (t.fake.opened > opened && t.fake.open() === 1 ? true : undefined), 10_000);
    t.fake.publish(t.fake.status({ id: '2602', tags: ['hoot'] }));
    await until('the status after the reconnect', async () => ((await t.content()).includes(t.itemId('2602')) ? true : undefined), 10_000);
    expect((await t.content()).sort()).toEqual([t.itemId('2601'), t.itemId('2602')]);
  });

  it('streams a user input from the local public stream, its own statuses only, without replies to others', async () => {
    const t = await setup();
    // The account id comes from the input's first poll.
    t.fake.publish(t.fake.status({ id: '3000', accountId: '77', username: 'bob', text: 'before' }), { streamed: false });
    const input = await t.addInput('user', `${t.fake.base}/@bob`);
    const collector = startCollector({ db: t.db, config: t.config }, 3_600_000);
    running.push(collector);
    await collector.tick();
    await collector.idle();
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    t.fake.publish(t.fake.status({ id: '3001', accountId: '77', username: 'bob' }));
    t.fake.publish(t.fake.status({ id: '3002', accountId: '78', username: 'carol' }));
    t.fake.publish(t.fake.status({ id: '3003', accountId: '77', username: 'bob', inReplyTo: { id: '3002', accountId: '78' } }));
    t.fake.publish(t.fake.status({ id: '3004', accountId: '77', username: 'bob', inReplyTo: { id: '3001', accountId: '77' } }));
    await until('bob\'s thread', async () => ((await t.content()).includes(t.itemId('3004')) ? true : undefined), 10_000);
    expect((await t.content()).sort()).toEqual([t.itemId('3000'), t.itemId('3001'), t.itemId('3004')]);
  });

  it('keeps one listener per stream: a second holder waits, and takes over when the first stops', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    await t.addInput('tag', `${t.fake.base}/tags/HOOT`, t.tenant, true); // same stream, same connection
    const first = listen(t.ctx, 'first');
    await t.streamed(input._id);
    const second = listen(t.ctx, 'second');
    for (let i = 0; i < 10; i++) await second.tick(); // tries to take the stream, ten times
    expect(t.fake.open()).toBe(1);
    expect(t.fake.maxConcurrent).toBe(1);
    const opened = t.fake.opened;
    await first.stop();
    await until('the second holder connected', () => (t.fake.opened > opened && t.fake.open() === 1 ? true : undefined), 10_000);
    await t.streamed(input._id);
    t.fake.publish(t.fake.status({ id: '4001', tags: ['hoot'] }));
    await until('the status through the second holder', async () => ((await t.content()).includes(t.itemId('4001')) ? true : undefined), 10_000);
    expect(t.fake.maxConcurrent).toBe(1);
  });

  it('stops listening at once when its lease is no longer its own', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const streams = listen(t.ctx, 'one');
    await t.streamed(input._id);
    expect(t.fake.open()).toBe(1);
    // Another process holds the stream now (the lease ran out while this one was stalled).
    await t.db.updateTable('streams').set({ holder: 'other', expiresAt: Date.now() + 60_000 }).where('name', '=', `mastodon:${t.fake.host}:hashtag:hoot`).execute();
    await streams.tick();
    await until('the connection closed', () => (t.fake.open() === 0 ? true : undefined), 10_000);
    for (let i = 0; i < 5; i++) await streams.tick();
    expect(t.fake.open()).toBe(0);
  });

  it('takes a stream over once a dead holder\'s lease runs out, filling the gap from the cursor it saved', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const name = `mastodon:${t.fake.host}:hashtag:hoot`;
    // A holder that saw status 8000 and died without giving the stream up.
    const leaseEnds = Date.now() + 1500;
    expect((await holdStream(t.db, name, 'dead', 1500)).held).toBe(true);
    expect(await saveStreamCursor(t.db, name, 'dead', '8000')).toBe(true);
    t.fake.publish(t.fake.status({ id: '8000', tags: ['hoot'] }), { streamed: false });
    t.fake.publish(t.fake.status({ id: '8001', tags: ['hoot'] }), { streamed: false }); // while nobody listened
    const streams = listen(t.ctx, 'alive');
    await streams.tick();
    expect(t.fake.opened).toBe(0); // the lease still runs
    await until('the stream taken over', () => (t.fake.open() === 1 ? true : undefined), 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(leaseEnds);
    await until('the gap filled', async () => ((await t.content()).includes(t.itemId('8001')) ? true : undefined), 10_000);
    expect(t.fake.requests).toContain('/api/v1/timelines/tag/hoot?limit=40&min_id=8000');
    expect(await t.content()).toEqual([t.itemId('8001')]); // 8000 was the dead holder's
    await t.streamed(input._id);
  });

  it('refuses a private address without ALLOW_PRIVATE_FETCH: no connection, the input stays poll', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const streams = listen(t.ctx, 'guarded', { allowPrivateFetch: false });
    for (let i = 0; i < 5; i++) await streams.tick();
    await new Promise((r) => setTimeout(r, 500)); // time for connects and retries
    // It holds the stream and tries to connect; the guard refuses every try before connecting.
    const lease = await t.db.selectFrom('streams').selectAll().where('name', '=', `mastodon:${t.fake.host}:hashtag:hoot`).executeTakeFirst();
    expect(lease?.holder).toBe('guarded');
    expect(t.fake.connections).toBe(0);
    expect(t.fake.requests).toEqual([]);
    expect((await t.status(input._id)).feed.mode).toBe('poll');
  });

  it('stops storing for a deactivated input, which goes back to poll', async () => {
    const t = await setup();
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const kept = await t.addInput('tag', `${t.fake.base}/tags/hoot`, t.tenant, true);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    const res = await t.call('PUT', `/collection/inputs/${input._id}`, { service: 'mastodon', type: 'tag', input: input.input, active: false });
    expect(res.statusCode, res.body).toBe(200);
    await until('back to poll', async () => ((await t.status(input._id)).feed.mode === 'poll' ? true : undefined), 10_000);
    t.fake.publish(t.fake.status({ id: '5001', tags: ['hoot'] }));
    await until('the other input stored it', async () => ((await t.status(kept._id)).collected === 1 ? true : undefined), 10_000);
    expect((await t.status(input._id)).collected).toBe(0);
  });

  it('never gives another contract\'s inputs the items of this one', async () => {
    const t = await setup();
    const other = await buildTenant(t.db, 'Other Corp');
    const mine = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const theirs = await t.addInput('tag', `${t.fake.base}/tags/quiet`, other);
    const theirUser = await t.addInput('user', `${t.fake.base}/@zed`, other);
    listen(t.ctx, 'one');
    await t.streamed(mine._id);
    await t.streamed(theirs._id, other.token);
    t.fake.publish(t.fake.status({ id: '6001', tags: ['hoot'], accountId: '90', username: 'yan' }));
    await until('mine stored', async () => ((await t.content()).includes(t.itemId('6001')) ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await t.content(other)).toEqual([]);
    expect((await t.status(theirs._id, other.token)).collected).toBe(0);
    expect((await t.status(theirUser._id, other.token)).collected).toBe(0);
    // And another contract cannot read this one's input.
    expect((await t.call('GET', `/collection/inputs/${mine._id}`, undefined, other.token)).statusCode).toBe(403);
  });

  it('listens with the contract\'s token when the instance wants one, and keeps inputs without one polled', async () => {
    const t = await setup();
    t.fake.requireToken = 'sekret';
    const other = await buildTenant(t.db, 'Tokenless');
    const res = await t.call('POST', '/collection/credentials', { contractId: t.tenant.contract.id, service: 'mastodon', name: 'local', instance: t.fake.base, accessToken: 'sekret' });
    expect(res.statusCode, res.body).toBe(201);
    const input = await t.addInput('tag', `${t.fake.base}/tags/hoot`);
    const theirs = await t.addInput('tag', `${t.fake.base}/tags/hoot`, other);
    listen(t.ctx, 'one');
    await t.streamed(input._id);
    t.fake.publish(t.fake.status({ id: '7001', tags: ['hoot'] }));
    await until('stored with the token', async () => ((await t.content()).includes(t.itemId('7001')) ? true : undefined), 10_000);
    expect((await t.status(theirs._id, other.token)).feed.mode).toBe('poll');
    expect(await t.content(other)).toEqual([]);
  });
});

describe('mastodon inputs naming their instance by http://host:port', () => {
  it('are accepted while ALLOW_PRIVATE_FETCH is on', async () => {
    const t = await setup();
    const input = await t.addInput('user', 'http://mastodon.local:3000/@alice');
    const res = await t.call('PUT', `/collection/inputs/${input._id}`, { service: 'mastodon', type: 'tag', input: 'http://127.0.0.1:3000/tags/hoot' });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('are refused otherwise, naming input', async () => {
    const t = await setup({});
    for (const input of ['http://127.0.0.1:3000/tags/hoot', 'http://mastodon.local:3000/@alice']) {
      const res = await t.call('POST', '/collection/inputs', { service: 'mastodon', type: 'tag', input, contractId: t.tenant.contract.id, collectionId: t.tenant.collection.id });
      expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName: 'input' });
    }
    const ok = await t.call('POST', '/collection/inputs', { service: 'mastodon', type: 'tag', input: 'hoot@mastodon.social', contractId: t.tenant.contract.id, collectionId: t.tenant.collection.id });
    expect(ok.statusCode, ok.body).toBe(201);
    const res = await t.call('PUT', `/collection/inputs/${ok.json()._id}`, { service: 'mastodon', type: 'tag', input: 'http://127.0.0.1:3000/tags/hoot' });
    expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName: 'input' });
  });
});
