/**
 * The moderation desk's pins, spotlight and edits (issue 33 points 1–2; docs/api.md#pin-and-spotlight,
 * #edit-an-item) through HTTP on a real database: pinned items first in their order in the
 * content read (every sort, count unchanged, paging exact) and the queue read (`pinned` filter),
 * the 21st pin refused, pinning publishing nothing, events on both streams, webhook events, audit
 * and revert; an edit over the source's title, text and alt texts, restored with null, kept over a
 * later fetch, made inert like collected text; each beside its hostile case.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type DeliveryWorker, startDelivery } from '../../src/collect/deliver.ts';
import { findItems } from '../../src/store/items/find.ts';
import { rowToModeratorItem } from '../../src/store/items/rows.ts';
import { storeItems } from '../../src/store/items/write.ts';
import { build, buildClient, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';
import { connect } from './sse.ts';
import { ownsEntries } from '../../src/services/table.ts';

const MIN = 60_000;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function setup(env: Record<string, string> = {}) {
  const ctx = await build(env);
  const tenant = await buildTenant(ctx.db);
  const at = (ms: number) => new Date(Date.now() - ms).toISOString();
  // Newest first by date: a b c d e; by kudos: e d c b a.
  await seedItems(
    ctx.db,
    tenant,
    ['a', 'b', 'c', 'd', 'e'].map((name, i) => buildItem({ id: `rss_${name}`, date: at((i + 1) * MIN), kudos: { score: i * 10 } })),
  );
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_held', date: at(30 * MIN) })], 'unpublished');
  const slug = tenant.contract.slug;
  const q = `q=${tenant.collection.slug}`;
  const auth = (token: string) => `&access_token=${encodeURIComponent(token)}`;
  const queue = (query = '', token = tenant.token) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${slug}?${q}&${query}${auth(token)}` });
  const moderate = (id: string, body: unknown, token = tenant.token) =>
    ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${slug}?${q}&id=${encodeURIComponent(id)}${auth(token)}`, payload: body as object });
  const bulk = (body: unknown) => ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${slug}?${q}${auth(tenant.token)}`, payload: body as object });
  const content = (query = '') => ctx.app.inject({ method: 'GET', url: `/v1/content/${slug}?${q}&${query}` });
  const count = () => ctx.app.inject({ method: 'GET', url: `/v1/count/${slug}?${q}` });
  const api = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(tenant.token)}`, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { ...ctx, tenant, q, queue, moderate, bulk, content, count, api };
}

type Item = { id: string; pinned: boolean; position?: number; spotlight?: boolean; state: string; title?: string; text: string; edited?: boolean; original?: unknown; media: { alt?: string }[] | null };
const items = (res: { json: () => unknown }) => res.json() as Item[];
const ids = (res: { json: () => unknown }) => items(res).map((item) => item.id);

describe('pin and reorder', () => {
  it('puts pinned items first in their order in every sort of the content read, count unchanged, paging exact', async () => {
    const { moderate, content, count } = await setup();
    expect(ids(await content())).toEqual(['rss_a', 'rss_b', 'rss_c', 'rss_d', 'rss_e']);
    const pinned = await moderate('rss_d', { pinned: true });
    expect(pinned.statusCode, pinned.body).toBe(200);
    expect(pinned.json()).toMatchObject({ id: 'rss_d', pinned: true, position: 1, state: 'published' });
    expect((await moderate('rss_b', { pinned: true })).json()).toMatchObject({ pinned: true, position: 2 });
    expect(ids(await content())).toEqual(['rss_d', 'rss_b', 'rss_a', 'rss_c', 'rss_e']);
    // Reorder: b first.
    expect((await moderate('rss_b', { pinned: true, position: 1 })).json()).toMatchObject({ position: 1 });
    for (const sort of ['time', 'kudos', 'trending']) {
      for (const order of ['desc', 'asc']) {
        const all = ids(await content(`sort=${sort}&order=${order}`));
        expect(all.slice(0, 2), `${sort} ${order}`).toEqual(['rss_b', 'rss_d']);
        expect(all).toHaveLength(5);
        // Paging walks the same list: every item once.
        const paged = [0, 2, 4].flatMap((offset) => offset);
        const pages = await Promise.all(paged.map(async (offset) => ids(await content(`sort=${sort}&order=${order}&count=2&offset=${offset}`))));
        expect(pages.flat(), `${sort} ${order} paged`).toEqual(all);
      }
    }
    const page = items(await content());
    expect(page.map((item) => [item.pinned, item.position])).toEqual([[true, 1], [true, 2], [false, undefined], [false, undefined], [false, undefined]]);
    expect((await count()).json()).toEqual({ count: '5' });
    // Unpin: back in its place by date; the other pin moves up.
    expect((await moderate('rss_b', { pinned: false })).json()).toMatchObject({ pinned: false });
    expect(ids(await content())).toEqual(['rss_d', 'rss_a', 'rss_b', 'rss_c', 'rss_e']);
    expect(items(await content())[0]).toMatchObject({ id: 'rss_d', position: 1 });
  });

  it('shows a pin or unpin made by another process in the next uncached reads, within the version check (the read path keeps "no pins" per version)', async () => {
    const { db, config, tenant, content } = await setup();
    // Another process on the same database: its own read path and its own memory of the pins.
    const other = await buildApp(config, { db });
    closers.push(() => other.close());
    const slug = tenant.contract.slug;
    const q = `q=${tenant.collection.slug}`;
    let until = Math.floor(Date.now() / 1000);
    // Each read asks another `until` (a page never read before): the pinned items are looked up again or known.
    const fresh = async () => ids(await content(`until=${until++}`));
    expect(await fresh()).toEqual(['rss_a', 'rss_b', 'rss_c', 'rss_d', 'rss_e']);
    expect(await fresh()).toEqual(['rss_a', 'rss_b', 'rss_c', 'rss_d', 'rss_e']);
    const pin = await other.inject({ method: 'PATCH', url: `/v1/queue/${slug}?${q}&id=rss_d&access_token=${encodeURIComponent(tenant.token)}`, payload: { pinned: true } });
    expect(pin.statusCode, pin.body).toBe(200);
    const readUntil = async (expected: string[]) => {
      let seen: string[] = [];
      for (let i = 0; i < 50 && seen.join() !== expected.join(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        seen = await fresh();
      }
      return seen;
    };
    expect(await readUntil(['rss_d', 'rss_a', 'rss_b', 'rss_c', 'rss_e'])).toEqual(['rss_d', 'rss_a', 'rss_b', 'rss_c', 'rss_e']);
    const unpin = await other.inject({ method: 'PATCH', url: `/v1/queue/${slug}?${q}&id=rss_d&access_token=${encodeURIComponent(tenant.token)}`, payload: { pinned: false } });
    expect(unpin.statusCode, unpin.body).toBe(200);
    expect(await readUntil(['rss_a', 'rss_b', 'rss_c', 'rss_d', 'rss_e'])).toEqual(['rss_a', 'rss_b', 'rss_c', 'rss_d', 'rss_e']);
  });

  it('orders the queue read too, filters it by pinned, and pinning an unpublished item publishes nothing', async () => {
    const { moderate, queue, content } = await setup();
    expect((await moderate('rss_held', { pinned: true })).json()).toMatchObject({ id: 'rss_held', pinned: true, position: 1, state: 'unpublished' });
    await moderate('rss_e', { pinned: true, position: 1 });
    expect(ids(await queue('since=0'))).toEqual(['rss_e', 'rss_held', 'rss_a', 'rss_b', 'rss_c', 'rss_d']);
    expect(ids(await queue('since=0&pinned=true'))).toEqual(['rss_e', 'rss_held']);
    expect(ids(await queue('since=0&pinned=false'))).toEqual(['rss_a', 'rss_b', 'rss_c', 'rss_d']);
    expect(ids(await queue('since=0&pinned='))).toHaveLength(6);
    expect(ids(await queue('since=0&state=published'))).toEqual(['rss_e', 'rss_a', 'rss_b', 'rss_c', 'rss_d']);
    expect(ids(await queue('since=0&text=rss_held'))).toEqual(['rss_held']);
    expectError(await queue('pinned=yes'), 400, { name: 'ValidationError', code: 1004, propertyName: 'pinned' });
    // The unpublished pinned item stays out of the content read…
    expect(ids(await content())).toEqual(['rss_e', 'rss_a', 'rss_b', 'rss_c', 'rss_d']);
    // …until it is published: then it shows in its pinned place.
    await moderate('rss_held', { state: 'published' });
    expect(ids(await content('since=0'))).toEqual(['rss_e', 'rss_held', 'rss_a', 'rss_b', 'rss_c', 'rss_d']);
    // Every queue item says whether it is pinned.
    expect(items(await queue('since=0')).every((item) => typeof item.pinned === 'boolean')).toBe(true);
  });

  it('refuses a 21st pin with 409 naming pinned, changing nothing; bad forms → 400 naming the property', async () => {
    const { db, tenant, moderate, bulk, content } = await setup();
    await seedItems(db, tenant, Array.from({ length: 20 }, (_, i) => buildItem({ id: `rss_p${i}`, date: new Date(Date.now() - (40 + i) * MIN).toISOString() })));
    for (let i = 0; i < 20; i++) expect((await moderate(`rss_p${i}`, { pinned: true })).statusCode).toBe(200);
    const refused = expectError(await moderate('rss_a', { pinned: true }), 409, { name: 'ConflictError', code: 4091, propertyName: 'pinned' });
    expect(JSON.stringify(refused)).toContain('20');
    expect(ids(await content('count=21')).slice(0, 21)).toEqual([...Array.from({ length: 20 }, (_, i) => `rss_p${i}`), 'rss_a']);
    // Moving a pinned item is not a new pin.
    expect((await moderate('rss_p19', { pinned: true, position: 1 })).json()).toMatchObject({ position: 1 });
    expectError(await moderate('rss_a', { state: 'published', position: 2 }), 400, { name: 'ValidationError', code: 1005, propertyName: 'position' });
    expectError(await moderate('rss_a', { pinned: true, position: 0 }), 400, { name: 'ValidationError', code: 1003, propertyName: 'position' });
    expectError(await moderate('rss_a', { pinned: 'yes' }), 400, { name: 'ValidationError', code: 1002, propertyName: 'pinned' });
    expectError(await moderate('rss_a', {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'state' });
    expectError(await bulk({ ids: ['rss_a', 'rss_b'], pinned: true }), 400, { name: 'ValidationError', code: 1005, propertyName: 'pinned' });
    expectError(await moderate('rss_nope', { pinned: true }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
  });

  it('marks a spotlight item; another contract’s token is refused and changes nothing', async () => {
    const { db, moderate, content } = await setup();
    expect((await moderate('rss_c', { spotlight: true })).json()).toMatchObject({ id: 'rss_c', spotlight: true, pinned: false });
    expect(items(await content()).find((item) => item.id === 'rss_c')).toMatchObject({ spotlight: true });
    expect(items(await content()).find((item) => item.id === 'rss_a')!.spotlight).toBeUndefined();
    const stranger = await buildClient(db, 'stranger');
    expectError(await moderate('rss_a', { pinned: true }, stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expectError(await moderate('rss_a', { edit: { title: 'Mine now' } }, stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect(items(await content())[0]).toMatchObject({ id: 'rss_a', pinned: false, title: 'Title of rss_a' });
    expect((await moderate('rss_c', { spotlight: false })).json().spotlight).toBeUndefined();
  });

  it('records pins in the audit trail and the item history, and reverts them', async () => {
    const { tenant, moderate, content, api } = await setup();
    await moderate('rss_c', { pinned: true });
    await moderate('rss_e', { pinned: true, position: 1 });
    const audit = (await api('GET', `/collection/audit?contract_id=${tenant.contract.id}&resource=item`)).json() as Record<string, any>[];
    expect(audit.slice(0, 2).map((entry) => [entry.action, entry.resourceId, entry.before.pin, entry.after.pin])).toEqual([
      ['pin', 'rss_e', { pinned: false, spotlight: false }, { pinned: true, position: 1, spotlight: false }],
      ['pin', 'rss_c', { pinned: false, spotlight: false }, { pinned: true, position: 1, spotlight: false }],
    ]);
    const history = (await api('GET', `/v1/queue/${tenant.contract.slug}/history?q=${tenant.collection.slug}&id=rss_c`)).json() as { action: string }[];
    expect(history.map((step) => step.action)).toEqual(['pin']);
    // Revert the pin of rss_c: it is unpinned; rss_e stays first.
    const reverted = await api('POST', `/collection/audit/${audit[1]!._id}/revert`);
    expect(reverted.statusCode, reverted.body).toBe(201);
    expect(reverted.json()).toMatchObject({ action: 'revert', reverts: audit[1]!._id, after: { pin: { pinned: false } } });
    expect(items(await content()).filter((item) => item.pinned).map((item) => item.id)).toEqual(['rss_e']);
    expectError(await api('POST', `/collection/audit/${audit[1]!._id}/revert`), 409, { name: 'ConflictError', code: 4091 });
    // Changed since (unpinned by hand): the entry cannot be reverted.
    await moderate('rss_e', { pinned: false });
    expectError(await api('POST', `/collection/audit/${audit[0]!._id}/revert`), 409, { name: 'ConflictError', code: 4091 });
  });
});

describe('edit an item', () => {
  it('lays an edit over title, text and alt text; the queue shows the original; null restores it', async () => {
    const { db, tenant, moderate, queue, content } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_pic', title: 'Teh harbour', text: '<p>Boats</p>', media: [{ type: 'image', url: 'https://img.example/1.jpg' }, { type: 'image', url: 'https://img.example/2.jpg', alt: 'two' }] })]);
    const res = await moderate('rss_pic', { edit: { title: 'The harbour', text: '<p>Boats <b>and</b> music</p>', media: [{ alt: 'Boats at dusk' }] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ title: 'The harbour', edited: true, original: { title: 'Teh harbour', text: '<p>Boats</p>' } });
    const shown = items(await content()).find((item) => item.id === 'rss_pic')!;
    expect(shown).toMatchObject({ title: 'The harbour', text: '<p>Boats <b>and</b> music</p>' });
    expect(shown.media!.map((m) => m.alt)).toEqual(['Boats at dusk', 'two']);
    expect(shown.original).toBeUndefined();
    expect(shown.edited).toBeUndefined();
    expect(items(await queue()).find((item) => item.id === 'rss_pic')).toMatchObject({ edited: true, original: { title: 'Teh harbour' } });
    // An unedited item's queue JSON comes from the content read's cached serialization: the same as serving it afresh.
    const cachedA = items(await queue()).find((item) => item.id === 'rss_a');
    expect(cachedA).toMatchObject({ edited: false });
    expect(cachedA).toEqual(rowToModeratorItem((await findItems(db, tenant.contract.id, tenant.collection.id, ['rss_a']))[0]!));
    expect((await moderate('rss_pic', { edit: null })).json()).toMatchObject({ title: 'Teh harbour', edited: false });
    expect(items(await content()).find((item) => item.id === 'rss_pic')).toMatchObject({ title: 'Teh harbour', text: '<p>Boats</p>' });
    expectError(await moderate('rss_pic', { edit: { media: [{ alt: 'a' }, { alt: 'b' }, { alt: 'c' }] } }), 400, { name: 'ValidationError', code: 1003, propertyName: 'edit.media' });
    expectError(await moderate('rss_pic', { edit: {} }), 400, { name: 'ValidationError', code: 1001, propertyName: 'edit' });
    expectError(
      await moderate('rss_pic', { edit: { title: 'x'.repeat(1001) } }),
      400,
      { name: 'ValidationError', code: 1003, propertyName: 'edit.title' },
      { name: 'ValidationError', code: 1002, propertyName: 'edit' },
    );
  });

  it('serves an edit inert: a script in an edit never reaches the content read, the queue or the wall', async () => {
    const { moderate, content, queue, app, tenant } = await setup();
    const hostile = { title: 'Hi <script>alert(1)</script>', text: '<p onclick="alert(2)">x</p><script>alert(3)</script><a href="javascript:alert(4)">y</a>', media: [] };
    expect((await moderate('rss_a', { edit: hostile })).statusCode).toBe(200);
    const served = [JSON.stringify(items(await content())[0]), JSON.stringify(items(await queue())[0])];
    const wall = await app.inject({ method: 'GET', url: `/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}` });
    const card = /<li class="card[^"]*" data-id="rss_a"[\s\S]*?<\/li>/.exec(wall.body)![0];
    expect(card).toContain('Hi alert(1)');
    for (const text of [...served, card]) {
      expect(text).not.toMatch(/<script|onclick|javascript:|alert\(3\)/);
    }
  });

  it('keeps the edit over a later fetch of the same item, whose new text becomes the original', async () => {
    const { db, tenant, moderate, content, queue } = await setup();
    await moderate('rss_b', { edit: { title: 'Corrected' } });
    const later = buildItem({ id: 'rss_b', title: 'Changed at the source', text: 'New text', date: new Date(Date.now() - 2 * MIN).toISOString() });
    await db.transaction().execute((trx) => storeItems(trx, { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' }, [], ownsEntries, Date.now(), undefined, [later]));
    expect(items(await content()).find((item) => item.id === 'rss_b')).toMatchObject({ title: 'Corrected', text: 'New text' });
    expect(items(await queue()).find((item) => item.id === 'rss_b')).toMatchObject({ title: 'Corrected', original: { title: 'Changed at the source' } });
  });

  it('records edits and reverts them', async () => {
    const { tenant, moderate, content, api } = await setup();
    await moderate('rss_a', { edit: { title: 'First' } });
    await moderate('rss_a', { edit: { title: 'Second' } });
    const audit = (await api('GET', `/collection/audit?contract_id=${tenant.contract.id}&action=edit`)).json() as Record<string, any>[];
    expect(audit.map((entry) => [entry.before.edit, entry.after.edit])).toEqual([
      [{ title: 'First' }, { title: 'Second' }],
      [null, { title: 'First' }],
    ]);
    // The older edit changed since: refused.
    expectError(await api('POST', `/collection/audit/${audit[1]!._id}/revert`), 409, { name: 'ConflictError', code: 4091 });
    expect((await api('POST', `/collection/audit/${audit[0]!._id}/revert`)).statusCode).toBe(201);
    expect(items(await content())[0]).toMatchObject({ id: 'rss_a', title: 'First' });
  });
});

describe('streams and webhooks', () => {
  it('sends a pin to both streams with pinned and position', { timeout: 20_000 }, async () => {
    const ctx = await setup();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as { port: number };
    const base = `http://127.0.0.1:${port}`;
    const publicStream = await connect(`${base}/v1/content/${ctx.tenant.contract.slug}/stream?${ctx.q}`);
    const moderatorStream = await connect(`${base}/v1/queue/${ctx.tenant.contract.slug}/stream?${ctx.q}&access_token=${encodeURIComponent(ctx.tenant.token)}`);
    closers.push(publicStream.close, moderatorStream.close);
    await ctx.moderate('rss_c', { pinned: true, spotlight: true });
    for (const stream of [publicStream, moderatorStream]) {
      const [event] = await stream.until(1);
      expect(event!.event).toBe('item');
      expect(JSON.parse(event!.data)).toMatchObject({ id: 'rss_c', pinned: true, position: 1, spotlight: true });
    }
    // A new first pin moves the other: both are sent again with their new positions.
    await ctx.moderate('rss_a', { pinned: true, position: 1 });
    const [, a, c] = await publicStream.until(3);
    expect([a, c].map((e) => JSON.parse(e!.data)).map((item) => [item.id, item.position]).sort()).toEqual([['rss_a', 1], ['rss_c', 2]]);
  });

  it('emits item.pinned and item.unpinned to a subscribed webhook', { timeout: 20_000 }, async () => {
    const ctx = await setup({ ALLOW_PRIVATE_FETCH: 'true' });
    const to: Receiver = await startReceiver();
    closers.push(() => to.close());
    const created = await ctx.api('POST', '/collection/webhooks', { name: 'Pins', contractId: ctx.tenant.contract.id, url: `${to.url}/pins`, events: ['item.pinned', 'item.unpinned'] });
    expect(created.statusCode, created.body).toBe(201);
    to.secrets.set('/pins', created.json().secret);
    await ctx.moderate('rss_c', { pinned: true });
    await ctx.moderate('rss_c', { pinned: true, position: 1 }); // unchanged: no event
    await ctx.moderate('rss_c', { spotlight: true }); // not a pin change: no event
    await ctx.moderate('rss_c', { pinned: false });
    const delivery: DeliveryWorker = startDelivery({ db: ctx.db, config: ctx.config }, 3_600_000);
    closers.push(() => delivery.stop());
    for (let round = 0; round < 300 && to.delivered('/pins').length < 2; round++) {
      await delivery.tick();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const events = to.received.filter((r) => r.path === '/pins').map((r) => r.event!);
    expect(events.map((e) => [e.type, e.data.itemId, e.data.position])).toEqual([
      ['item.pinned', 'rss_c', 1],
      ['item.unpinned', 'rss_c', undefined],
    ]);
    expect(events[0]!.data).toMatchObject({ contractId: ctx.tenant.contract.id, collectionId: ctx.tenant.collection.id, pinned: true });
  });
});
