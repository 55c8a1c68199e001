/**
 * Customizations per collection (issue 33 point 7, docs/api.md#customizations): an optional
 * `collectionId` narrows a customization to one collection's walls. Through the real routes on a
 * real database: create, read, list by `collection_id`, move to the whole contract and back,
 * versions keep it; the wall of collection A gets A's customization and never B's (the real wall
 * HTML), the contract-wide one reaches both, first; another contract's collection is refused
 * (403 naming `collectionId`, no data), an unknown one 404; a viewer cannot create one; a
 * collection that a customization names is not deleted.
 */
import { describe, expect, it } from 'vitest';
import { grant } from '../../src/store/contracts.ts';
import { buildUser, expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

const PATH = '/publication/customizations';

async function setup() {
  const s = await setupRecords();
  const a = await s.create('/collection/collections', s.bodies.collection({ name: 'Alpha wall' }));
  const b = await s.create('/collection/collections', s.bodies.collection({ name: 'Beta wall' }));
  const theirs = await s.create('/collection/collections', { name: 'Their wall', contractId: s.other.contract.id }, s.other.token);
  /** The wall's HTML of collection `slug` (the public publication page). */
  const wall = async (slug: string) => {
    const res = await s.app.inject({ method: 'GET', url: `/v1/publication/${s.tenant.contract.slug}?q=${encodeURIComponent(slug)}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };
  /** The names of the customizations the wall applies, in page order. */
  const applied = async (slug: string) => [...(await wall(slug)).matchAll(/data-customization="([^"]+)"/g)].map((m) => m[1]);
  return { ...s, a, b, theirs, wall, applied };
}

describe('customizations per collection', () => {
  it('creates, reads and lists a collection’s customization, moves it to the whole contract and back, and versions keep it', async () => {
    const { call, create, bodies, a, b, tenant } = await setup();
    const created = await create(PATH, bodies.customization({ name: 'Alpha red', collectionId: a._id, data: '.card{color:red}' }));
    expect(created).toMatchObject({ name: 'Alpha red', collectionId: a._id, contractId: tenant.contract.id });
    const wide = await create(PATH, bodies.customization({ name: 'Everywhere' }));
    expect(wide).not.toHaveProperty('collectionId');
    const id = created._id as string;
    expect((await call('GET', `${PATH}/${id}`)).json()).toMatchObject({ collectionId: a._id });

    const names = async (query: string) => ((await call('GET', `${PATH}?contract_id=${tenant.contract.id}${query}`)).json() as { name: string }[]).map((c) => c.name);
    expect(await names('')).toEqual(['Alpha red', 'Everywhere']);
    expect(await names(`&collection_id=${a._id}`)).toEqual(['Alpha red']);
    expect(await names(`&collection_id=${b._id}`)).toEqual([]);

    // To the whole contract (null), then back to collection A: each update keeps a version.
    const moved = (await call('PATCH', `${PATH}/${id}`, { collectionId: null })).json();
    expect(moved).not.toHaveProperty('collectionId');
    expect(moved.version).toBe('2');
    expect(await names(`&collection_id=${a._id}`)).toEqual([]);
    const back = await call('PATCH', `${PATH}/${id}`, { collectionId: a._id });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ collectionId: a._id, version: '3' });
    // An update that does not send it keeps it.
    expect((await call('PATCH', `${PATH}/${id}`, { data: '.card{color:maroon}' })).json()).toMatchObject({ collectionId: a._id });

    const versions = (await call('GET', `${PATH}/${id}/versions`)).json() as { version: string; collectionId?: string }[];
    expect(versions.map((v) => [v.version, v.collectionId ?? 'contract'])).toEqual([
      ['3', a._id],
      ['2', 'contract'],
      ['1', a._id],
    ]);
  });

  it('the wall of collection A applies the contract-wide customizations, then A’s; B’s wall never gets A’s', async () => {
    const { create, call, bodies, a, b, wall, applied } = await setup();
    // Created in this order on purpose: the collection's come after the contract's whatever their age.
    await create(PATH, bodies.customization({ name: 'alpha-css', collectionId: a._id, data: '.card{outline:3px solid #a1fa00}' }));
    await create(PATH, bodies.customization({ name: 'alpha-js', type: 'js', collectionId: a._id, data: 'window.alphaOnly = 1' }));
    await create(PATH, bodies.customization({ name: 'wide-css', data: '.card{outline:1px solid #00d1de}' }));
    await create(PATH, bodies.customization({ name: 'beta-css', collectionId: b._id, data: '.card{outline:3px solid #bbbbbb}' }));

    expect(await applied(a.slug)).toEqual(['wide-css', 'alpha-css', 'alpha-js']);
    expect(await applied(b.slug)).toEqual(['wide-css', 'beta-css']);
    const betaWall = await wall(b.slug);
    for (const secret of ['#a1fa00', 'alphaOnly', 'alpha-css', 'alpha-js']) expect(betaWall).not.toContain(secret);
    const alphaWall = await wall(a.slug);
    // Contract-wide CSS first, the collection's after it: the collection's wins the cascade.
    expect(alphaWall.indexOf('#00d1de')).toBeLessThan(alphaWall.indexOf('#a1fa00'));
    expect(alphaWall).not.toContain('#bbbbbb');

    // Moved to the whole contract, it reaches B's wall too; moved back, it leaves it.
    const { _id: alphaId } = (await call('GET', `${PATH}?contract_id=${a.contractId}&collection_id=${a._id}`)).json()[0];
    await call('PATCH', `${PATH}/${alphaId}`, { collectionId: null });
    expect(await wall(b.slug)).toContain('#a1fa00');
    await call('PATCH', `${PATH}/${alphaId}`, { collectionId: a._id });
    expect(await wall(b.slug)).not.toContain('#a1fa00');
  });

  it("refuses another contract's collection (403 naming collectionId, without its data) and an unknown one (404), on create, update and list", async () => {
    const { call, create, bodies, a, theirs, tenant } = await setup();
    const foreign = await call('POST', PATH, bodies.customization({ collectionId: theirs._id }));
    const body = expectError(foreign, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collectionId' });
    expect(JSON.stringify(body)).not.toContain('Their wall');
    const unknown = '0123456789abcdef01234567';
    expectError(await call('POST', PATH, bodies.customization({ collectionId: unknown })), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collectionId' });
    expectError(await call('POST', PATH, bodies.customization({ collectionId: 'nothex' })), 400, { name: 'ValidationError', code: 1005, propertyName: 'collectionId' });

    const { _id: id } = await create(PATH, bodies.customization({ collectionId: a._id }));
    expectError(await call('PATCH', `${PATH}/${id}`, { collectionId: theirs._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collectionId' });
    expectError(await call('PATCH', `${PATH}/${id}`, { collectionId: unknown }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collectionId' });
    // Refused updates change nothing and keep no version.
    expect((await call('GET', `${PATH}/${id}`)).json()).toMatchObject({ collectionId: a._id, version: '1' });
    expect((await call('GET', `${PATH}/${id}/versions`)).json()).toEqual([]);

    expectError(await call('GET', `${PATH}?contract_id=${tenant.contract.id}&collection_id=${theirs._id}`), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collection_id' });
    expectError(await call('GET', `${PATH}?contract_id=${tenant.contract.id}&collection_id=${unknown}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collection_id' });
  });

  it('a viewer reads a collection’s customizations but cannot create or move one (403 naming the role)', async () => {
    const { app, db, create, bodies, a, b, tenant } = await setup();
    const viewer = await buildUser(db, { name: 'A viewer' });
    await grant(db, viewer.consumer.id, tenant.contract.id, undefined, 'viewer');
    const as = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => app.inject({ method, url, headers: { authorization: `Bearer ${viewer.token}` }, ...(payload ? { payload } : {}) });
    const { _id: id } = await create(PATH, bodies.customization({ collectionId: a._id }));
    expect((await as('GET', `${PATH}?contract_id=${tenant.contract.id}&collection_id=${a._id}`)).json()).toHaveLength(1);
    expectError(await as('POST', PATH, bodies.customization({ name: 'Mine', collectionId: a._id })), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
    expectError(await as('PATCH', `${PATH}/${id}`, { collectionId: b._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
  });

  it('does not delete a collection that a customization names (409 naming it), so it never turns contract-wide', async () => {
    const { call, create, bodies, b, wall } = await setup();
    const { _id: id } = await create(PATH, bodies.customization({ name: 'Beta only', collectionId: b._id }));
    const refused = expectError(await call('DELETE', `/collection/collections/${b._id}`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(refused.errors[0]).toMatchObject({ propertyValue: b._id, reason: `used by customization ${id}` });
    expect(await wall(b.slug)).toContain('data-customization="Beta only"');
    expect((await call('DELETE', `${PATH}/${id}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/collection/collections/${b._id}`)).statusCode).toBe(204);
  });
});
