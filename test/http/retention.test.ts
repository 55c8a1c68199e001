/**
 * Retention (issue 19, docs/api.md#retention): a collection's `retention` set and shown through
 * the management API, validated (errors name the property), audited, refused to another
 * contract's token; and the retention job: expired items deleted in batches with their
 * de-duplication keys, recent items and items a moderator published in the last day kept, the
 * maximum count keeping the newest. Read back through the queue and content APIs. Open streams are
 * told (docs/api.md#retention): the public content stream sends `remove` for the expired items
 * that were published, the moderators' queue stream for every expired card
 * (`removedReason: "expired"`), from what another connection's run wrote; another contract's
 * streams get nothing, and no webhook event is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { isPostgres, openDb } from '../../src/store/db.ts';
import { DAY_MS, expireItems, expireItemsOnce } from '../../src/store/retention.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';
import { ownsEntries } from '../../src/services/table.ts';
import { collectionStreams, connect, type Event } from './sse.ts';
import { removeItems } from '../../src/store/removals.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

async function setup() {
  const ctx = await setupRecords();
  const slug = ctx.tenant.contract.slug;
  /** A collection of the tenant made through the API (de-duplication `url+text`: its items have keys). */
  const collection = async (retention?: Record<string, unknown>) => ctx.create('/collection/collections', ctx.bodies.collection({ name: `C ${Math.random()}`, ...(retention ? { retention } : {}) }));
  const target = (c: { _id: string }) => ({ contract: ctx.tenant.contract, collection: { id: c._id } });
  const queueIds = async (c: { slug: string }) => {
    const res = await ctx.call('GET', `/v1/queue/${slug}?q=${c.slug}&since=0&count=100`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string }[]).map((item) => item.id).sort();
  };
  const contentIds = async (c: { slug: string }) => {
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${slug}?q=${c.slug}&since=0&count=100` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string }[]).map((item) => item.id).sort();
  };
  /** Makes the items look as if they had arrived `ms` ago. */
  const arrivedAgo = (c: { _id: string }, ids: string[], ms: number) => ctx.db.updateTable('items').set({ createdAt: Date.now() - ms }).where('collectionId', '=', c._id).where('id', 'in', ids).execute();
  const keys = async (c: { _id: string }, table: 'itemUrls' | 'itemPrints') =>
    new Set((await ctx.db.selectFrom(table).select('itemId').where('collectionId', '=', c._id).execute()).map((row) => row.itemId));
  return { ...ctx, slug, collection, target, queueIds, contentIds, arrivedAgo, keys };
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
const WORDS = ['harbour', 'council', 'festival', 'budget', 'weather', 'railway', 'library', 'market', 'theatre', 'school', 'bridge', 'river', 'museum', 'garden', 'stadium', 'airport'];
/** A title of its own for each id (near-same titles would be merged as duplicates). */
const title = (id: string) => {
  const n = Number(id.slice(-2)) + id.length * 7;
  return [0, 3, 5, 9, 11].map((k) => WORDS[(n * (k + 1) + k) % WORDS.length]).join(' ') + ` ${id}`;
};

describe('collection retention', () => {
  it('is shown ({} keeps everything), set on create, replaced by an update, and audited', async () => {
    const s = await setup();
    const plain = await s.collection();
    expect(plain.retention).toEqual({});
    const kept = await s.collection({ days: 30 });
    expect(kept.retention).toEqual({ days: 30 });
    const both = (await s.call('PATCH', `/collection/collections/${kept._id}`, { retention: { days: 7, maxItems: 5000 } })).json();
    expect(both.retention).toEqual({ days: 7, maxItems: 5000 });
    expect((await s.call('GET', `/collection/collections/${kept._id}`)).json().retention).toEqual({ days: 7, maxItems: 5000 });
    // An update without retention leaves it; {} removes every limit.
    expect((await s.call('PATCH', `/collection/collections/${kept._id}`, { name: 'Renamed' })).json().retention).toEqual({ days: 7, maxItems: 5000 });
    expect((await s.call('PATCH', `/collection/collections/${kept._id}`, { retention: { maxItems: 10 } })).json().retention).toEqual({ maxItems: 10 });
    expect((await s.call('PATCH', `/collection/collections/${kept._id}`, { retention: {} })).json().retention).toEqual({});

    const audit = (await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&resource=collection&action=update`)).json() as { resourceId: string; before: any; after: any }[];
    const changes = audit.filter((entry) => entry.resourceId === kept._id).map((entry) => [entry.before.retention, entry.after.retention]).reverse();
    expect(changes).toEqual([
      [{ days: 30 }, { days: 7, maxItems: 5000 }],
      [{ days: 7, maxItems: 5000 }, { days: 7, maxItems: 5000 }],
      [{ days: 7, maxItems: 5000 }, { maxItems: 10 }],
      [{ maxItems: 10 }, {}],
    ]);
  });

  it('refuses absurd values naming the property, and another contract\'s token', async () => {
    const s = await setup();
    const c = await s.collection({ days: 30 });
    const patch = (retention: unknown, token = s.tenant.token) => s.call('PATCH', `/collection/collections/${c._id}`, { retention }, token);
    expectError(await patch({ days: 0 }), 400, v(1003, 'retention.days'));
    expectError(await patch({ days: 36_501 }), 400, v(1003, 'retention.days'));
    expectError(await patch({ days: 1.5 }), 400, v(1002, 'retention.days'));
    expectError(await patch({ days: '30' }), 400, v(1002, 'retention.days'));
    expectError(await patch({ maxItems: -1 }), 400, v(1003, 'retention.maxItems'));
    expectError(await patch({ maxItems: 1e12 }), 400, v(1003, 'retention.maxItems'));
    expectError(await patch(30), 400, v(1002, 'retention'));
    expectError(await s.call('POST', '/collection/collections', s.bodies.collection({ name: 'Bad', retention: { days: -3 } })), 400, v(1003, 'retention.days'));
    // Another contract's token can neither read nor set it.
    expectError(await patch({ days: 1 }, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expectError(await s.call('POST', '/collection/collections', { name: 'Theirs', contractId: s.tenant.contract.id, retention: { days: 1 } }, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
    expect((await s.call('GET', `/collection/collections/${c._id}`)).json().retention).toEqual({ days: 30 });
  });

  it('deletes expired items in bounded batches with their keys, keeping recent ones and those a moderator published in the last day', async () => {
    const s = await setup();
    const c = await s.collection({ days: 30 });
    const old = range('rss_old_', 25);
    const recent = range('rss_new_', 3);
    await seedItems(s.db, s.target(c), old.map((id, i) => buildItem({ id, title: title(id), text: `${title(id)} ${title(`x${id}`)}`, date: ago(40 * DAY_MS + i * 60_000) })), 'unpublished');
    await seedItems(s.db, s.target(c), recent.map((id) => buildItem({ id, title: title(id), text: `${title(id)} ${title(`x${id}`)}`, date: ago(DAY_MS) })));
    // Dated long ago but collected today: kept until it has been here 30 days too.
    await seedItems(s.db, s.target(c), [buildItem({ id: 'rss_late', title: 'An old entry collected only today', date: ago(90 * DAY_MS) })]);
    // A duplicate merged into an old card by its text: its URL points to the card, and goes with it.
    const copy = buildItem({ id: 'rss_copy_of_old_00', title: title('rss_old_00'), text: `${title('rss_old_00')} ${title('xrss_old_00')}`, url: 'https://copies.example.org/old-00', date: ago(40 * DAY_MS) });
    expect(await seedItems(s.db, s.target(c), [copy], 'unpublished')).toBe(1);
    expect((await s.db.selectFrom('itemDuplicates').select('cardId').where('collectionId', '=', c._id).execute()).map((row) => row.cardId)).toEqual(['rss_old_00']);
    await s.arrivedAgo(c, old, 40 * DAY_MS);
    // A moderator publishes two old items; one is published and unpublished again (not protected).
    const moderate = (body: unknown) => s.call('PATCH', `/v1/queue/${s.slug}?q=${c.slug}`, body);
    expect((await moderate({ state: 'published', ids: ['rss_old_03', 'rss_old_07', 'rss_old_09'] })).statusCode).toBe(200);
    expect((await moderate({ state: 'unpublished', ids: ['rss_old_09'] })).statusCode).toBe(200);
    expect(await s.queueIds(c)).toEqual([...old, ...recent, 'rss_late'].sort());
    expect((await s.keys(c, 'itemUrls')).has('rss_old_00')).toBe(true);
    expect((await s.keys(c, 'itemPrints')).has('rss_old_00')).toBe(true);

    // A run stops at its bound, in batches smaller than the expired items.
    const first = await expireItems(s.db, ownsEntries, Date.now(), { batchSize: 4, perRun: 10 });
    expect(first).toEqual({ deleted: 10, more: true });
    const second = await expireItems(s.db, ownsEntries, Date.now(), { batchSize: 4, perRun: 1000 });
    expect(second).toEqual({ deleted: 13, more: false });
    expect(await expireItems(s.db, ownsEntries, Date.now(), { batchSize: 4, perRun: 1000 })).toEqual({ deleted: 0, more: false });

    const kept = ['rss_late', 'rss_old_03', 'rss_old_07', ...recent].sort();
    expect(await s.queueIds(c)).toEqual(kept);
    expect(await s.contentIds(c)).toEqual(kept);
    const urls = await s.keys(c, 'itemUrls');
    const prints = await s.keys(c, 'itemPrints');
    for (const id of old.filter((id) => !kept.includes(id))) expect(urls.has(id) || prints.has(id), id).toBe(false);
    expect(await s.db.selectFrom('itemDuplicates').select('id').where('collectionId', '=', c._id).execute()).toEqual([]);
    expect(urls.has('rss_old_03') && prints.has('rss_old_03')).toBe(true);

    // A day later the moderator's publication no longer protects them.
    expect(await expireItems(s.db, ownsEntries, Date.now() + DAY_MS + 60_000)).toEqual({ deleted: 2, more: false });
    // (The queue: the content API may serve its cached page a moment longer, docs/api.md#caching.)
    expect(await s.queueIds(c)).toEqual(['rss_late', ...recent].sort());
  });

  it('keeps the newest items up to maxItems, and leaves collections without retention alone', async () => {
    const s = await setup();
    const capped = await s.collection({ maxItems: 5 });
    const open = await s.collection();
    const ids = range('rss_', 12);
    // rss_00 is the newest; rss_04 and rss_05 share a date (the greater id is the newer).
    const items = ids.map((id, i) => buildItem({ id, title: title(id), text: `${title(id)} ${title(`x${id}`)}`, date: ago((i === 5 ? 4 : i) * 3_600_000) }));
    await seedItems(s.db, s.target(capped), items);
    await seedItems(s.db, s.target(open), items);
    expect(await expireItems(s.db, ownsEntries, Date.now(), { batchSize: 3, perRun: 1000 })).toEqual({ deleted: 7, more: false });
    expect(await s.contentIds(capped)).toEqual(['rss_00', 'rss_01', 'rss_02', 'rss_03', 'rss_05']);
    expect(await s.contentIds(open)).toEqual(ids);
    expect(await expireItems(s.db, ownsEntries)).toEqual({ deleted: 0, more: false });
  });

  it('runs in one process at a time: a run finding another under way (its lock taken) skips', async () => {
    const s = await setup();
    const capped = await s.collection({ maxItems: 1 });
    await seedItems(s.db, s.target(capped), range('rss_', 3).map((id) => buildItem({ id, title: title(id), text: title(`x${id}`) })));
    if (isPostgres(s.db)) {
      await s.db.connection().execute(async (other) => {
        await sql`select pg_advisory_lock(hashtext('sluice-retention'))`.execute(other);
        expect(await expireItemsOnce(s.db, ownsEntries)).toBeUndefined();
        await sql`select pg_advisory_unlock(hashtext('sluice-retention'))`.execute(other);
      });
    }
    expect(await expireItemsOnce(s.db, ownsEntries)).toEqual({ deleted: 2, more: false });
    expect(await s.queueIds(capped)).toEqual(['rss_02']);
  });
});

/** The events of `stream` up to and including the first whose data names item `id` (the test's timeout bounds the wait). */
async function upTo(stream: Awaited<ReturnType<typeof connect>>, id: string): Promise<Event[]> {
  for (let n = 1; ; n++) {
    const events = await stream.until(n);
    if (JSON.parse(events[n - 1]!.data).id === id) return events;
  }
}

describe('retention and the open streams', () => {
  it("sends `remove` for exactly the expired items to the open wall and console, from another connection's run; another contract's streams get nothing", { timeout: 60_000 }, async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const { app, db } = ctx;
    const tenant = await buildTenant(db, 'Harbour Gazette');
    const other = await buildTenant(db, 'Other Paper');
    const call = (method: 'PATCH' | 'POST', url: string, payload: object, token = tenant.token) => app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload });
    const capped = await call('PATCH', `/collection/collections/${tenant.collection.id}`, { retention: { maxItems: 3 } });
    expect(capped.statusCode, capped.body).toBe(200);
    // The other contract keeps only 3 too, but holds 3: nothing of it expires.
    expect((await call('PATCH', `/collection/collections/${other.collection.id}`, { retention: { maxItems: 3 } }, other.token)).statusCode).toBe(200);
    const hours = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    // Newest first: p0, p1, u0 are the 3 kept; p2, u1, p3, p4, r0 expire (u1 unpublished, r0 removed at the source).
    await seedItems(db, tenant, [buildItem({ id: 'rss_p0', date: hours(1) }), buildItem({ id: 'rss_p1', date: hours(2) }), buildItem({ id: 'rss_p2', date: hours(4) }), buildItem({ id: 'rss_p3', date: hours(6) }), buildItem({ id: 'rss_p4', date: hours(7) })]);
    await seedItems(db, tenant, [buildItem({ id: 'rss_u0', date: hours(3) }), buildItem({ id: 'rss_u1', date: hours(5) })], 'unpublished');
    // Published, then removed at the source before the streams opened (they told of it then): it expires too.
    await seedItems(db, tenant, [buildItem({ id: 'rss_r0', date: hours(8) })]);
    expect(await removeItems(db, { service: 'rss', ids: ['rss_r0'] }, { reason: 'deleted' }, ownsEntries)).toHaveLength(1);
    // The same ids in the other contract, older still: its collection is under its bound.
    await seedItems(db, other, ['rss_p2', 'rss_p3', 'rss_p4'].map((id) => buildItem({ id, date: hours(30) })));
    const hook = await call('POST', '/collection/webhooks', { name: 'Removals', contractId: tenant.contract.id, url: 'http://127.0.0.1:9/removed', events: ['item.removed', 'item.unpublished'] });
    expect(hook.statusCode, hook.body).toBe(201);

    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const { wall, queue } = await collectionStreams(base, tenant);
    const { wall: otherWall, queue: otherQueue } = await collectionStreams(base, other);
    for (const stream of [wall, queue, otherWall, otherQueue]) closers.push(stream.close);

    // The job runs on another connection (as in another process): the streams learn it from the database alone. Two items per transaction.
    const elsewhere = openDb(ctx.config.databaseUrl);
    closers.push(() => elsewhere.destroy());
    expect(await expireItemsOnce(elsewhere, ownsEntries, Date.now(), { batchSize: 2, perRun: 1000 })).toEqual({ deleted: 5, more: false });
    // A later item in each collection marks the end of what the run sent.
    await seedItems(db, tenant, [buildItem({ id: 'rss_after' })]);
    await seedItems(db, other, [buildItem({ id: 'rss_other_after' })]);

    // The wall: the expired published items only, each once, then the marker.
    const shown = await upTo(wall, 'rss_after');
    expect(shown.slice(0, -1).map((e) => e.event)).toEqual(['remove', 'remove', 'remove']);
    expect(shown.slice(0, -1).map((e) => e.data).sort()).toEqual(['rss_p2', 'rss_p3', 'rss_p4'].map((id) => JSON.stringify({ id })));
    expect(shown.at(-1)!.event).toBe('item');
    // Each event's id is the version of its batch: a wall resuming from before the run gets them again.
    const ids = shown.slice(0, -1).map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(3);
    const resumed = await connect(`${base}/v1/content/${tenant.contract.slug}/stream?q=${tenant.collection.slug}`, { 'last-event-id': String(Math.min(...ids) - 1) });
    closers.push(resumed.close);
    expect((await upTo(resumed, 'rss_after')).map((e) => [e.event, e.data])).toEqual(shown.map((e) => [e.event, e.data]));

    // The console: every expired card, unpublished too, with when and why.
    const told = await upTo(queue, 'rss_after');
    const removes = told.filter((e) => e.event === 'remove').map((e) => JSON.parse(e.data)).sort((a, b) => a.id.localeCompare(b.id));
    expect(removes).toEqual(['rss_p2', 'rss_p3', 'rss_p4', 'rss_r0', 'rss_u1'].map((id) => ({ id, removedAt: expect.any(String), removedReason: 'expired' })));
    expect(told.map((e) => JSON.parse(e.data).id).filter((id) => ['rss_p0', 'rss_p1', 'rss_u0'].includes(id))).toEqual([]);

    // Another contract's streams, open all along, get nothing of it (its own later item only), and it keeps its copies.
    expect((await upTo(otherWall, 'rss_other_after')).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([['item', 'rss_other_after']]);
    expect((await upTo(otherQueue, 'rss_other_after')).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([['item', 'rss_other_after']]);
    const theirs = await db.selectFrom('items').select('id').where('collectionId', '=', other.collection.id).orderBy('id').execute();
    expect(theirs.map((row) => row.id)).toEqual(['rss_other_after', 'rss_p2', 'rss_p3', 'rss_p4']);

    // Kept for the streams without content; no webhook event (docs/api.md#retention).
    const kept = await db.selectFrom('erasedItems').select(['itemId', 'state', 'reason', 'contractId']).orderBy('itemId').execute();
    expect(kept).toEqual([
      { itemId: 'rss_p2', state: 'published', reason: 'expired', contractId: tenant.contract.id },
      { itemId: 'rss_p3', state: 'published', reason: 'expired', contractId: tenant.contract.id },
      { itemId: 'rss_p4', state: 'published', reason: 'expired', contractId: tenant.contract.id },
      { itemId: 'rss_r0', state: 'removed', reason: 'expired', contractId: tenant.contract.id },
      { itemId: 'rss_u1', state: 'unpublished', reason: 'expired', contractId: tenant.contract.id },
    ]);
    expect(await db.selectFrom('webhookOutbox').select('type').execute()).toEqual([]);
  });
});
