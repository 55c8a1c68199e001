/**
 * Erasure on request (issue 34 point 3, docs/api.md#erasure): `POST /collection/erasures` removes
 * every stored item of one author in the contract — gone from the content read, the count, the
 * queue, the wall, search and a later export — blocks the author so that a new poll of the real
 * local feed does not bring them back, and leaves another contract's items of the same author
 * name alone. Lifting the block lets new items in. Walls and consoles open at that moment are
 * told: the content stream and the queue stream send `remove` for the erased items (the public
 * one only for what was published), and `item.removed` (reason `erased`, ids only) is delivered;
 * another contract's streams get nothing. Refusals: another contract's token, a moderator, bad
 * bodies naming the property. Both databases (TEST_DATABASE_URL).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { grant } from '../../src/store/contracts.ts';
import { exportContract } from '../../src/store/contract-transfer.ts';
import type { LightMyRequestResponse } from 'fastify';
import { build, buildItem, buildTenant, buildUser, seedItems } from '../helper.ts';
import { startSourceServer } from '../source-server.ts';
import { type DeliveryWorker, startDelivery } from '../../src/collect/deliver.ts';
import { ERASED_KEEP_MS, pruneErasedItems } from '../../src/store/erasures.ts';
import { until } from '../processes.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';
import { collectionStreams, connect } from './sse.ts';

const closers: (() => Promise<void>)[] = [];

/**
 * Waits out the public read path's trust in a collection's version (queue/read-path.ts
 * VERSION_CHECK_MS, 1 s): changes made outside the queue routes are seen by public reads after
 * it, as docs/api.md#caching allows.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1100));
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** An Atom entry dated 10 s ago: the content read's default window ends at the current second. */
const entry = (id: string, author: string, words: string, at = Date.now() - 10_000) =>
  `<entry><id>urn:x:${id}</id><title>${words} title</title><link href="https://example.com/${id}"/><updated>${new Date(at).toISOString()}</updated><author><name>${author}</name></author><content type="html">${words} text</content></entry>`;
const atom = (entries: string[]) => `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Feed</title><id>urn:x:feed</id><updated>${new Date().toISOString()}</updated>${entries.join('')}</feed>`;

/** A 400 whose error object names `propertyName` (any property when omitted). */
function refused(res: LightMyRequestResponse, propertyName?: string) {
  expect(res.statusCode, res.body).toBe(400);
  const errors = res.json().errors as { name: string; propertyName?: string }[];
  expect(errors[0]!.name).toBe('ValidationError');
  if (propertyName) expect(errors.map((e) => e.propertyName), res.body).toContain(propertyName);
}

describe('POST /collection/erasures', () => {
  it("removes an author's items everywhere, blocks them from collection, and leaves another contract alone", async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const { app, db } = ctx;
    const tenant = await buildTenant(db, 'Harbour Gazette');
    const other = await buildTenant(db, 'Other Paper');
    const entries = [entry('m1', 'Mallory', 'Quokkasecret one'), entry('m2', 'Mallory', 'Quokkasecret two'), entry('a1', 'Alice', 'Harbour')];
    const source = await startSourceServer(() => ({ status: 200, headers: { 'content-type': 'application/atom+xml' }, body: atom(entries) }));
    closers.push(() => source.close());
    const created = await app.inject({ method: 'POST', url: '/collection/inputs', headers: { authorization: `Bearer ${tenant.token}` }, payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: `${source.base}/feed.xml` } });
    expect(created.statusCode, created.body).toBe(201);
    const inputId = created.json()._id as string;
    const collector = startCollector({ db, config: ctx.config }, 3_600_000);
    closers.push(() => collector.stop());
    await collector.tick();
    await collector.idle();
    // Poll now (docs/api.md#poll-now), its once-per-10-s limit cleared between the test's polls.
    const poll = async () => {
      await db.updateTable('inputs').set({ pollNowAt: null }).where('id', '=', inputId).execute();
      const res = await app.inject({ method: 'POST', url: `/collection/inputs/${inputId}/poll`, headers: { authorization: `Bearer ${tenant.token}` } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status, res.body).toBe('ok');
      await settle();
    };
    // The other contract holds an item of an author of the same name: not the same person's data here.
    await seedItems(db, other, [buildItem({ id: 'rss_other', title: 'Quokkasecret elsewhere', author: { name: 'Mallory', username: null, userid: null, url: null } })]);

    const q = `q=${tenant.collection.slug}`;
    const get = (url: string) => app.inject({ method: 'GET', url });
    const token = `access_token=${encodeURIComponent(tenant.token)}`;
    const content = async () => (await get(`/v1/content/${tenant.contract.slug}?${q}`)).json() as { title: string; author: { name: string } }[];
    expect((await content()).map((item) => item.author.name).sort()).toEqual(['Alice', 'Mallory', 'Mallory']);

    const erase = await app.inject({ method: 'POST', url: '/collection/erasures', headers: { authorization: `Bearer ${tenant.token}` }, payload: { contractId: tenant.contract.id, service: 'rss', author: { name: 'Mallory' } } });
    expect(erase.statusCode, erase.body).toBe(201);
    const { removed, erasureId, blockedAuthorId } = erase.json();
    expect(removed).toBe(2);
    await settle();

    // Gone from the content read, the count, the queue, the wall and search.
    expect((await content()).map((item) => item.author.name)).toEqual(['Alice']);
    expect((await get(`/v1/count/${tenant.contract.slug}?${q}`)).json()).toMatchObject({ count: '1' });
    const queue = await get(`/v1/queue/${tenant.contract.slug}?${q}&${token}`);
    expect(queue.statusCode).toBe(200);
    expect(queue.body).not.toContain('Quokkasecret');
    const wall = await get(`/v1/publication/${tenant.contract.slug}?${q}`);
    expect(wall.statusCode).toBe(200);
    expect(wall.body).toContain('Harbour');
    expect(wall.body).not.toContain('Quokkasecret');
    expect((await get(`/v1/content/${tenant.contract.slug}?${q}&search=quokkasecret`)).json()).toEqual([]);
    // An export taken afterwards holds none of it.
    const lines: string[] = [];
    await exportContract(db, tenant.contract.id, async (line) => void lines.push(line));
    expect(lines.join('\n')).toContain('Harbour');
    expect(lines.join('\n')).not.toContain('Quokkasecret');
    // The author's key is left only where the erasure is recorded: its audit entry and the block.
    expect(lines.filter((line) => line.includes('Mallory')).map((line) => JSON.parse(line).table)).toEqual(['auditEntries', 'blockedAuthors']);
    // The other contract's item stays.
    expect((await get(`/v1/content/${other.contract.slug}?q=${other.collection.slug}`)).json()).toHaveLength(1);

    // The audit entry holds the author key and counts, not the items' content.
    const audit = await get(`/collection/audit?contract_id=${tenant.contract.id}&resource=author&${token}`);
    expect(audit.statusCode, audit.body).toBe(200);
    const entryOf = (audit.json() as { _id: string; action: string; after: unknown }[]).find((e) => e._id === erasureId)!;
    expect(entryOf).toMatchObject({ action: 'erase', after: { service: 'rss', field: 'name', value: 'Mallory', removed: 2 } });
    expect(audit.body).not.toContain('Quokkasecret');

    // A new poll, with a new entry of theirs, brings nothing of theirs back.
    entries.push(entry('m3', 'Mallory', 'Quokkasecret three'), entry('a2', 'Alice', 'Lighthouse'));
    await poll();
    expect((await content()).map((item) => item.author.name)).toEqual(['Alice', 'Alice']);

    // Listed; lifting the block lets their new items in.
    const listed = await get(`/collection/blocked-authors?contract_id=${tenant.contract.id}&${token}`);
    expect(listed.json()).toEqual([expect.objectContaining({ id: blockedAuthorId, service: 'rss', field: 'name', value: 'Mallory', erasureId })]);
    expect((await get(`/collection/blocked-authors?contract_id=${other.contract.id}&${token}`)).statusCode).toBe(403);
    const lift = await app.inject({ method: 'DELETE', url: `/collection/blocked-authors/${blockedAuthorId}?${token}` });
    expect(lift.statusCode, lift.body).toBe(204);
    entries.push(entry('m4', 'Mallory', 'Pelican'));
    await poll();
    expect((await content()).map((item) => item.title)).toContain('Pelican title');
  }, 60_000);

  it("tells the open wall and console streams and the webhook, with ids only; another contract's streams get nothing", { timeout: 60_000 }, async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const { app, db } = ctx;
    const tenant = await buildTenant(db, 'Harbour Gazette');
    const other = await buildTenant(db, 'Other Paper');
    const mallory = { name: 'Mallory', username: null, userid: null, url: null };
    await seedItems(db, tenant, [buildItem({ id: 'rss_m1', title: 'Quokkasecret one', text: 'Quokkasecret body', author: mallory }), buildItem({ id: 'rss_a1', title: 'Harbour' })]);
    await seedItems(db, tenant, [buildItem({ id: 'rss_m2', title: 'Quokkasecret held', author: mallory })], 'unpublished');
    await seedItems(db, other, [buildItem({ id: 'rss_m1', title: 'Quokkasecret elsewhere', author: mallory })]);
    const to: Receiver = await startReceiver();
    closers.push(() => to.close());
    const hook = await app.inject({ method: 'POST', url: '/collection/webhooks', headers: { authorization: `Bearer ${tenant.token}` }, payload: { name: 'Removals', contractId: tenant.contract.id, url: `${to.url}/removed`, events: ['item.removed'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    to.secrets.set('/removed', hook.json().secret);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const { wall, queue } = await collectionStreams(base, tenant);
    const { wall: otherWall, queue: otherQueue } = await collectionStreams(base, other);
    for (const stream of [wall, queue, otherWall, otherQueue]) closers.push(stream.close);

    const erase = await app.inject({ method: 'POST', url: '/collection/erasures', headers: { authorization: `Bearer ${tenant.token}` }, payload: { contractId: tenant.contract.id, service: 'rss', author: { name: 'Mallory' } } });
    expect(erase.statusCode, erase.body).toBe(201);
    expect(erase.json().removed).toBe(2);

    // The console: both erased items, with when and why.
    const told = await queue.until(2);
    expect(told.map((e) => e.event)).toEqual(['remove', 'remove']);
    expect(told.map((e) => JSON.parse(e.data)).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'rss_m1', removedAt: expect.any(String), removedReason: 'erased' },
      { id: 'rss_m2', removedAt: expect.any(String), removedReason: 'erased' },
    ]);
    // The wall: the published one only (an unpublished item's id stays private). A later item marks the end of what the erasure sent.
    await seedItems(db, tenant, [buildItem({ id: 'rss_after' })]);
    const shown = await wall.until(2);
    expect(shown.map((e) => [e.event, JSON.parse(e.data).id])).toEqual([
      ['remove', 'rss_m1'],
      ['item', 'rss_after'],
    ]);
    expect(shown[0]!.data).toBe(JSON.stringify({ id: 'rss_m1' }));

    // Another contract's streams, open all along, get nothing of it (its own later item only).
    await seedItems(db, other, [buildItem({ id: 'rss_other_after' })]);
    expect((await otherWall.until(1)).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([['item', 'rss_other_after']]);
    expect((await otherQueue.until(1)).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([['item', 'rss_other_after']]);
    expect((await app.inject({ method: 'GET', url: `/v1/content/${other.contract.slug}?q=${other.collection.slug}` })).json().map((item: { id: string }) => item.id).sort()).toEqual(['rss_m1', 'rss_other_after']);

    // item.removed, reason erased, for each, with ids only.
    const delivery: DeliveryWorker = startDelivery({ db, config: ctx.config }, 3_600_000);
    closers.push(async () => delivery.stop());
    await until('item.removed delivered', async () => {
      await delivery.tick();
      return to.delivered('/removed').length >= 2 ? true : undefined;
    }, 15_000);
    const delivered = to.delivered('/removed');
    expect(delivered.map((r) => r.event!.data).sort((a, b) => a.itemId.localeCompare(b.itemId))).toEqual(
      ['rss_m1', 'rss_m2'].map((itemId) => ({ contractId: tenant.contract.id, collectionId: tenant.collection.id, itemId, state: 'removed', reason: 'erased', removedAt: expect.any(String) })),
    );
    expect(delivered.map((r) => r.body).join('')).not.toContain('Quokkasecret');

    // What is kept for the streams holds no text, and an export holds none of it.
    const kept = await db.selectFrom('erasedItems').selectAll().where('contractId', '=', tenant.contract.id).orderBy('itemId').execute();
    expect(kept.map((row) => [row.itemId, row.state])).toEqual([['rss_m1', 'published'], ['rss_m2', 'unpublished']]);
    expect(Object.keys(kept[0]!).sort()).toEqual(['collectionId', 'contractId', 'erasedAt', 'itemId', 'reason', 'seq', 'state']);
    expect(kept.map((row) => row.reason)).toEqual(['erased', 'erased']);
    expect(JSON.stringify(kept)).not.toMatch(/Quokkasecret|Mallory/);
    const lines: string[] = [];
    await exportContract(db, tenant.contract.id, async (line) => void lines.push(line));
    expect(lines.join('\n')).toContain('Harbour');
    expect(lines.join('\n')).not.toContain('Quokkasecret');
    expect(lines.join('\n')).not.toContain('rss_m1');

    // A wall reconnecting with the Last-Event-ID it had before the erasure is told too.
    const resumed = await connect(`${base}/v1/content/${tenant.contract.slug}/stream?q=${tenant.collection.slug}`, { 'last-event-id': String(Number(shown[0]!.id) - 1) });
    closers.push(resumed.close);
    expect((await resumed.until(2)).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([
      ['remove', 'rss_m1'],
      ['item', 'rss_after'],
    ]);

    // Pruned after the bound, not before.
    expect(await pruneErasedItems(db, Date.now() - ERASED_KEEP_MS)).toBe(0);
    expect(await pruneErasedItems(db, Date.now() + 1)).toBe(2);
    expect(await db.selectFrom('erasedItems').selectAll().execute()).toEqual([]);
  });

  it('refuses another contract, a moderator and bad bodies, erasing nothing', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db, 'Harbour Gazette');
    const other = await buildTenant(db, 'Other Paper');
    await seedItems(db, tenant, [buildItem({ id: 'rss_m', author: { name: 'Mallory', username: null, userid: null, url: null } })]);
    const moderator = await buildUser(db);
    await grant(db, moderator.consumer.id, tenant.contract.id, undefined, 'moderator');
    const post = (bearer: string, payload: unknown) => app.inject({ method: 'POST', url: '/collection/erasures', headers: { authorization: `Bearer ${bearer}` }, payload: payload as object });
    const good = { contractId: tenant.contract.id, service: 'rss', author: { name: 'Mallory' } };

    const foreign = await post(other.token, good);
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).not.toContain('Mallory');
    expect((await post(moderator.token, good)).statusCode).toBe(403);
    const foreignList = await app.inject({ method: 'GET', url: `/collection/blocked-authors?contract_id=${tenant.contract.id}&access_token=${encodeURIComponent(other.token)}` });
    expect(foreignList.statusCode).toBe(403);

    refused(await post(tenant.token, { ...good, author: {} }), 'author');
    refused(await post(tenant.token, { ...good, author: { name: 'Mallory', username: 'mallory' } }), 'author');
    refused(await post(tenant.token, { ...good, service: 'twitter' }), 'author.name');
    refused(await post(tenant.token, { ...good, service: 'myspace' }), 'service');
    refused(await post(tenant.token, { ...good, author: { email: 'm@example.com' } }));
    refused(await post(tenant.token, { service: 'rss', author: { name: 'Mallory' } }), 'contractId');

    expect((await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}` })).json()).toHaveLength(1);
    const foreignDelete = await app.inject({ method: 'DELETE', url: `/collection/blocked-authors/${'0'.repeat(24)}?access_token=${encodeURIComponent(tenant.token)}` });
    expect(foreignDelete.statusCode).toBe(404);
  });
});
