/**
 * Customizations (docs/api.md#customizations) and collections (docs/api.md#collections):
 * CRUD, the version rule, slugs, filterId references, deleting a collection with inputs (409)
 * and with items (they go with it, past one batch: docs/api.md#deleting); deleting an input
 * leaves its items.
 */
import { describe, expect, it } from 'vitest';
import { DRAIN_BATCH } from '../../src/store/collections.ts';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

describe('customizations', () => {
  it('create (version "1"), get, list, update increments the version unless sent, delete', async () => {
    const { call, bodies, tenant } = await setupRecords();
    const res = await call('POST', '/publication/customizations', bodies.customization());
    expect(res.statusCode, res.body).toBe(201);
    const c = res.json();
    expect(c).toMatchObject({ version: '1', type: 'css', data: 'body{color:#000}', active: true });
    expect(c).not.toHaveProperty('description');
    expect((await call('GET', `/publication/customizations/${c._id}`)).json()).toEqual(c);
    expect((await call('GET', `/publication/customizations?contract_id=${tenant.contract.id}`)).json()).toEqual([c]);
    expect((await call('PATCH', `/publication/customizations/${c._id}`, { data: 'a{}' })).json()).toMatchObject({ version: '2', data: 'a{}' });
    expect((await call('PATCH', `/publication/customizations/${c._id}`, { version: '1.9', description: 'dark' })).json()).toMatchObject({ version: '1.9', description: 'dark' });
    expect((await call('PATCH', `/publication/customizations/${c._id}`, { active: false })).json()).toMatchObject({ version: '1.10', active: false });
    expect((await call('PATCH', `/publication/customizations/${c._id}`, { version: 'beta' })).json().version).toBe('beta');
    expect((await call('PATCH', `/publication/customizations/${c._id}`, {})).json().version).toBe('beta.1');
    expect((await call('DELETE', `/publication/customizations/${c._id}`)).statusCode).toBe(204);
    expect((await call('GET', `/publication/customizations?contract_id=${tenant.contract.id}`)).json()).toEqual([]);
  });

  it('validates type, required fields, the 256 KiB data limit and the unchangeable type; names unique', async () => {
    const { call, bodies } = await setupRecords();
    expectError(await call('POST', '/publication/customizations', bodies.customization({ type: 'html' })), 400, v(1004, 'type'));
    expectError(await call('POST', '/publication/customizations', { contractId: bodies.customization().contractId }), 400, v(1001, 'name'), v(1001, 'type'), v(1001, 'data'));
    expectError(await call('POST', '/publication/customizations', bodies.customization({ data: 'é'.repeat(140 * 1024) })), 400, v(1003, 'data'));
    const c = (await call('POST', '/publication/customizations', bodies.customization())).json();
    expectError(await call('PATCH', `/publication/customizations/${c._id}`, { type: 'js' }), 400, v(1005, 'type'));
    expectError(await call('POST', '/publication/customizations', bodies.customization()), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
  });
});

describe('collections', () => {
  it('create derives a unique slug; get, list, update keeps the slug; delete', async () => {
    const { call, bodies, tenant } = await setupRecords();
    const res = await call('POST', '/collection/collections', bodies.collection({ name: 'World  News!' }));
    expect(res.statusCode, res.body).toBe(201);
    const c = res.json();
    // buildTenant's collection "World News" already has the slug world-news.
    expect(c).toMatchObject({ name: 'World  News!', slug: 'world-news-2', type: 'realtime', active: true, contractId: tenant.contract.id });
    expect(c).not.toHaveProperty('filterId');
    expect((await call('GET', `/collection/collections/${c._id}`)).json()).toEqual(c);
    expect((await call('GET', `/collection/collections?contract_id=${tenant.contract.id}`)).json().map((x: { _id: string }) => x._id)).toEqual([tenant.collection.id, c._id]);
    const patched = (await call('PATCH', `/collection/collections/${c._id}`, { name: 'Planet', type: 'ranked', active: false })).json();
    expect(patched).toMatchObject({ name: 'Planet', slug: 'world-news-2', type: 'ranked', active: false });
    expectError(await call('POST', '/collection/collections', bodies.collection({ name: 'Planet' })), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
    expectError(await call('POST', '/collection/collections', bodies.collection({ type: 'weekly' })), 400, v(1004, 'type'));
    expect((await call('DELETE', `/collection/collections/${c._id}`)).statusCode).toBe(204);
    expectError(await call('GET', `/collection/collections/${c._id}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
  });

  it('filterId names a set or chain of the contract: 404 unknown, 403 foreign; null clears it', async () => {
    const { call, bodies, create, other } = await setupRecords();
    const set = await create('/collection/sets', bodies.set());
    const theirs = await create('/collection/chains', bodies.chain({ contractId: other.contract.id }), other.token);
    const c = await create('/collection/collections', bodies.collection({ filterId: set._id }));
    expect(c.filterId).toBe(set._id);
    expectError(await call('POST', '/collection/collections', bodies.collection({ name: 'B', filterId: theirs._id })), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    expectError(await call('PATCH', `/collection/collections/${c._id}`, { filterId: 'd'.repeat(24) }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'filterId' });
    expect((await call('PATCH', `/collection/collections/${c._id}`, { filterId: null })).json()).not.toHaveProperty('filterId');
  });

  it('a collection with inputs cannot be deleted (409 naming the input); its items go with it', async () => {
    const { call, create, bodies, tenant, db } = await setupRecords();
    const input = await create('/collection/inputs', { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: tenant.collection.id });
    await seedItems(db, tenant, [buildItem({ id: 'rss_1' }), buildItem({ id: 'rss_2' })]);
    const body = expectError(await call('DELETE', `/collection/collections/${tenant.collection.id}`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(body.errors[0]!.reason).toBe(`used by input ${input._id}`);

    // Deleting the input removes the input only: the items stay in the queue.
    expect((await call('DELETE', `/collection/inputs/${input._id}`)).statusCode).toBe(204);
    expectError(await call('GET', `/collection/inputs/${input._id}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    const queue = await call('GET', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}`);
    expect(queue.json()).toHaveLength(2);

    const spare = await create('/collection/collections', bodies.collection());
    expect((await call('DELETE', '/collection/collections', { ids: [spare._id, tenant.collection.id] })).statusCode).toBe(204);
    expect(await db.selectFrom('items').selectAll().execute()).toEqual([]);
    expect((await call('GET', `/collection/collections?contract_id=${tenant.contract.id}`)).json()).toEqual([]);
  });
});

describe('deleting a large collection', () => {
  it('deletes its items, duplicates and keys past one batch; a refused deletion deletes nothing; other collections keep theirs', async () => {
    const { call, create, bodies, tenant, other, db } = await setupRecords();
    // De-duplication on (url+text, the API's default): keys and duplicates are stored with the items.
    const big = await create('/collection/collections', bodies.collection({ name: 'Archive' }));
    const count = DRAIN_BATCH * 2 + 34;
    const items = Array.from({ length: count }, (_, i) => buildItem({ id: `rss_a${i}`, url: `https://archive.example/${i % (count - 10)}`, text: `Story ${i} of the archive, told at length.`, language: 'en' }));
    await seedItems(db, { contract: tenant.contract, collection: { id: big._id } }, items);
    await seedItems(db, other, [buildItem({ id: 'rss_o1' }), buildItem({ id: 'rss_o2' })]);
    const rows = async (table: 'items' | 'itemUrls' | 'itemPrints' | 'itemDuplicates', collectionId: string) =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('collectionId', '=', collectionId).executeTakeFirstOrThrow()).n);
    // Repeated URLs (and near-same texts) are merged into cards as duplicates.
    const stored = await rows('items', big._id);
    expect(stored).toBeGreaterThan(DRAIN_BATCH);
    expect(await rows('itemDuplicates', big._id)).toBe(count - stored);
    expect(await rows('itemUrls', big._id)).toBeGreaterThan(DRAIN_BATCH);

    // An input still uses it: 409, and not one item is gone.
    const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: 'https://archive.example/feed', contractId: tenant.contract.id, collectionId: big._id });
    expectError(await call('DELETE', `/collection/collections/${big._id}`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(await rows('items', big._id)).toBe(stored);
    // Another contract's collection is not this tenant's to delete (403), whatever it holds.
    expectError(await call('DELETE', `/collection/collections/${other.collection.id}`), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });

    expect((await call('DELETE', `/collection/inputs/${input._id}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/collection/collections/${big._id}`)).statusCode).toBe(204);
    for (const table of ['items', 'itemUrls', 'itemPrints', 'itemDuplicates'] as const) expect(await rows(table, big._id), table).toBe(0);
    expectError(await call('GET', `/collection/collections/${big._id}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expect(await rows('items', other.collection.id)).toBe(2);
    expect(await rows('items', tenant.collection.id)).toBe(0);
  });
});

describe('inputs: filterId and delete', () => {
  it('filterId must be a set or chain of the same contract; bulk delete is all or nothing', async () => {
    const { call, create, bodies, tenant, other } = await setupRecords();
    const base = { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: tenant.collection.id };
    const theirs = await create('/collection/sets', bodies.set({ contractId: other.contract.id }), other.token);
    expectError(await call('POST', '/collection/inputs', { ...base, filterId: theirs._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    expectError(await call('POST', '/collection/inputs', [base, { ...base, filterId: 'e'.repeat(24) }]), 404, { name: 'NotFoundError', code: 4001, propertyName: '[1].filterId' });
    const a = await create('/collection/inputs', base);
    expectError(await call('PUT', `/collection/inputs/${a._id}`, { ...base, filterId: theirs._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    const foreign = await create('/collection/inputs', { ...base, contractId: other.contract.id, collectionId: other.collection.id }, other.token);
    expectError(await call('DELETE', '/collection/inputs', { ids: [a._id, foreign._id] }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'ids[1]' });
    expect((await call('GET', `/collection/inputs/${a._id}`)).statusCode).toBe(200);
    expect((await call('DELETE', '/collection/inputs', { ids: [a._id] })).statusCode).toBe(204);
    expect((await call('GET', `/collection/inputs/${foreign._id}`, undefined, other.token)).statusCode).toBe(200);
  });
});
