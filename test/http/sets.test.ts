/**
 * Filter sets and chains (docs/api.md#filter-sets, docs/api.md#filter-chains,
 * docs/filters.md#rules): CRUD, the rule validation of the operator table with its propertyName
 * paths, list and set references, referential 409s.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

describe('filter sets', () => {
  it('create → 201 (or defaults to false, not to false); get, list, partial update, delete', async () => {
    const { call, bodies, tenant } = await setupRecords();
    const res = await call('POST', '/collection/sets', bodies.set({ rules: [{ operator: 'equals', field: 'service', value: 'rss' }] }));
    expect(res.statusCode, res.body).toBe(201);
    const set = res.json();
    expect(Object.keys(set).sort()).toEqual(['_id', 'action', 'active', 'contractId', 'created', 'createdBy', 'lastModified', 'lastModifiedBy', 'name', 'or', 'preCondition', 'rules']);
    expect(set).toMatchObject({ or: false, active: true, rules: [{ operator: 'equals', field: 'service', value: 'rss', not: false }], preCondition: { operator: 'exists', field: 'text', not: false } });
    expect((await call('GET', `/collection/sets/${set._id}`)).json()).toEqual(set);
    expect((await call('GET', `/collection/sets?contract_id=${tenant.contract.id}`)).json()).toEqual([set]);
    const patched = (await call('PATCH', `/collection/sets/${set._id}`, { or: true })).json();
    expect(patched).toMatchObject({ or: true, name: 'Spam', rules: set.rules, preCondition: set.preCondition });
    expect((await call('DELETE', `/collection/sets/${set._id}`)).statusCode).toBe(204);
    expect((await call('GET', `/collection/sets?contract_id=${tenant.contract.id}`)).json()).toEqual([]);
  });

  it('accepts every operator of docs/filters.md#operators with the right value', async () => {
    const { call, bodies, rule } = await setupRecords();
    const rules = [
      rule({ operator: 'equals', field: 'kudos.score', value: 3 }),
      rule({ operator: 'gt', field: 'kudos.twitter_likes', value: 10 }),
      rule({ operator: 'lte', field: 'date', value: '2026-01-01T00:00:00.000Z' }),
      rule({ operator: 'pattern', field: 'text', value: '/free money/i', not: true }),
      rule({ operator: 'in', field: 'user', value: ['spammer', 42] }),
      rule({ operator: 'patternin', field: 'tags', value: ['/^ad/', '/promo$/i'] }),
      rule({ operator: 'datediff', field: 'date', value: 86400 }),
      rule({ operator: 'exists', field: 'media.type', value: undefined }),
    ];
    const res = await call('POST', '/collection/sets', bodies.set({ rules }));
    expect(res.statusCode, res.body).toBe(201);
  });

  it('validates rules and preCondition against the operator table, naming each path', async () => {
    const { call, bodies, rule } = await setupRecords();
    const res = await call(
      'POST',
      '/collection/sets',
      bodies.set({
        preCondition: rule({ operator: 'exists', field: 'text', value: 'x' }),
        rules: [
          rule({ operator: 'like' }),
          rule({ field: 'body' }),
          rule({ operator: 'gt', field: 'text', value: 'abc' }),
          rule({ operator: 'pattern', field: 'text', value: '/a(b/' }),
          rule({ operator: 'in', value: 'rss' }),
          rule({ operator: 'patternin', value: ['/ok/', '/(?<=x)y/'] }),
          rule({ operator: 'equals', value: undefined }),
          rule({ operator: 'equals', listId: 'a'.repeat(24) }),
          rule({ operator: 'datediff', field: 'date', value: -1 }),
          rule({ operator: 'equals', value: ['a'] }),
        ],
      }),
    );
    expectError(
      res,
      400,
      v(1002, 'preCondition.value'),
      v(1004, 'rules[0].operator'),
      v(1004, 'rules[1].field'),
      v(1002, 'rules[2].value'),
      v(1006, 'rules[3].value'),
      v(1002, 'rules[4].value'),
      v(1006, 'rules[5].value[1]'),
      v(1001, 'rules[6].value'),
      v(1002, 'rules[7].listId'),
      v(1002, 'rules[8].value'),
      v(1002, 'rules[9].value'),
    );
    expectError(await call('POST', '/collection/sets', { name: 'X', contractId: bodies.set().contractId }), 400, v(1001, 'rules'), v(1001, 'preCondition'));
    expectError(await call('POST', '/collection/sets', bodies.set({ rules: [{ field: 'text', value: 'x' }] })), 400, v(1001, 'rules[0].operator'));
    expectError(await call('POST', '/collection/sets', bodies.set({ rules: Array.from({ length: 101 }, () => rule()) })), 400, v(1003, 'rules'));
  });

  it('listId: only in the same contract (403) and of the type the operator needs (400); unknown → 404', async () => {
    const { call, bodies, create, rule, other } = await setupRecords();
    const strings = await create('/collection/lists', bodies.list());
    const patterns = await create('/collection/lists', bodies.list({ name: 'P', type: 'patterns', entries: ['/x/'] }));
    const foreign = await create('/collection/lists', bodies.list({ contractId: other.contract.id }), other.token);
    const ok = await call('POST', '/collection/sets', bodies.set({ rules: [rule({ operator: 'in', value: undefined, listId: strings._id }), rule({ operator: 'patternin', value: undefined, listId: patterns._id })] }));
    expect(ok.statusCode, ok.body).toBe(201);
    expectError(await call('POST', '/collection/sets', bodies.set({ name: 'B', rules: [rule({ operator: 'in', value: undefined, listId: patterns._id })] })), 400, v(1002, 'rules[0].listId'));
    expectError(await call('POST', '/collection/sets', bodies.set({ name: 'C', rules: [rule({ operator: 'in', value: undefined, listId: foreign._id })] })), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'rules[0].listId' });
    expectError(await call('POST', '/collection/sets', bodies.set({ name: 'D', preCondition: rule({ operator: 'patternin', value: undefined, listId: 'b'.repeat(24) }) })), 404, { name: 'NotFoundError', code: 4001, propertyName: 'preCondition.listId' });
    expectError(await call('PATCH', `/collection/sets/${ok.json()._id}`, { rules: [rule({ operator: 'patternin', value: undefined, listId: strings._id })] }), 400, v(1002, 'rules[0].listId'));
  });

  it('refuses a set whose patterns, with the lists its rules name, exceed the compiled-size bound (400 naming rules, 1003)', async () => {
    const { call, create, bodies, rule } = await setupRecords();
    // 66 `/a[ab]{990}c…/` patterns compile to about 65 700 instructions: three fit in 200 000, four do not.
    const costly = Array.from({ length: 66 }, (_, i) => `/a[ab]{990}c${i}/`);
    const inline = (n: number) => Array.from({ length: n }, () => rule({ operator: 'patternin', field: 'text', value: costly }));
    expect((await call('POST', '/collection/sets', bodies.set({ name: 'three', rules: inline(3) }))).statusCode).toBe(201);
    const body = expectError(await call('POST', '/collection/sets', bodies.set({ name: 'four', rules: inline(4) })), 400, v(1003, 'rules'));
    expect(body.errors[0]!.message).toMatch(/^rules: the set's patterns compile to \d+ instructions, more than 200000/);

    // A list counts once per rule that names it.
    const list = await create('/collection/lists', bodies.list({ name: 'costly', type: 'patterns', entries: costly }));
    const byList = (n: number) => Array.from({ length: n }, () => rule({ operator: 'patternin', field: 'text', value: undefined, listId: list._id }));
    const fits = await create('/collection/sets', bodies.set({ name: 'by list', rules: byList(3) }));
    const over = expectError(await call('POST', '/collection/sets', bodies.set({ name: 'by list 4', rules: byList(4) })), 400, v(1003, 'rules'));
    expect(over.errors[0]!.message).toMatch(/the lists its rules name compile to \d+ instructions, more than 200000/);
    // On update, the set as it would be saved: its rules plus a preCondition naming the list again.
    expectError(await call('PATCH', `/collection/sets/${fits._id}`, { preCondition: rule({ operator: 'patternin', field: 'text', value: undefined, listId: list._id }) }), 400, v(1003, 'rules'));
    expect((await call('PATCH', `/collection/sets/${fits._id}`, { name: 'renamed' })).statusCode).toBe(200);
  });

  it('delete → 409 naming the chain, input, collection and contract that use the set', async () => {
    const { call, bodies, create, tenant, db } = await setupRecords();
    const set = await create('/collection/sets', bodies.set());
    const chain = await create('/collection/chains', bodies.chain({ sets: [set._id] }));
    const input = await create('/collection/inputs', { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: tenant.collection.id, filterId: set._id });
    const collection = await create('/collection/collections', bodies.collection({ filterId: set._id }));
    await db.updateTable('contracts').set({ filterId: set._id }).where('id', '=', tenant.contract.id).execute();
    const body = expectError(
      await call('DELETE', `/collection/sets/${set._id}`),
      409,
      ...Array.from({ length: 4 }, () => ({ name: 'ConflictError', code: 4091, propertyName: 'id' })),
    );
    expect(body.errors.map((e) => e.reason).sort()).toEqual(
      [`used by chain ${chain._id}`, `used by collection ${collection._id}`, `used by contract ${tenant.contract.id}`, `used by input ${input._id}`].sort(),
    );
    expect((await call('GET', `/collection/sets/${set._id}`)).statusCode).toBe(200);
  });
});

describe('filter chains', () => {
  it('create (sets may be empty), get, list, update, delete', async () => {
    const { call, bodies, create, tenant } = await setupRecords();
    const res = await call('POST', '/collection/chains', bodies.chain());
    expect(res.statusCode, res.body).toBe(201);
    const chain = res.json();
    expect(Object.keys(chain).sort()).toEqual(['_id', 'active', 'contractId', 'created', 'createdBy', 'lastModified', 'lastModifiedBy', 'name', 'sets']);
    expect(chain.sets).toEqual([]);
    const [a, b] = [await create('/collection/sets', bodies.set({ name: 'A' })), await create('/collection/sets', bodies.set({ name: 'B' }))];
    const patched = await call('PATCH', `/collection/chains/${chain._id}`, { sets: [b._id, a._id], active: false });
    expect(patched.json()).toMatchObject({ sets: [b._id, a._id], active: false, name: 'Main' });
    expect((await call('GET', `/collection/chains/${chain._id}`)).json()).toEqual(patched.json());
    expect((await call('GET', `/collection/chains?contract_id=${tenant.contract.id}`)).json()).toEqual([patched.json()]);
    expect((await call('DELETE', `/collection/chains/${chain._id}`)).statusCode).toBe(204);
    // The sets are free again.
    expect((await call('DELETE', '/collection/sets', { ids: [a._id, b._id] })).statusCode).toBe(204);
  });

  it('every set id must exist (404) in the same contract (403), naming sets[i]', async () => {
    const { call, bodies, create, other } = await setupRecords();
    const mine = await create('/collection/sets', bodies.set());
    const theirs = await create('/collection/sets', bodies.set({ contractId: other.contract.id }), other.token);
    expectError(await call('POST', '/collection/chains', bodies.chain({ sets: [mine._id, theirs._id] })), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'sets[1]' });
    expectError(await call('POST', '/collection/chains', bodies.chain({ sets: ['c'.repeat(24)] })), 404, { name: 'NotFoundError', code: 4001, propertyName: 'sets[0]' });
    expectError(await call('POST', '/collection/chains', bodies.chain({ sets: ['nope'] })), 400, v(1005, 'sets[0]'));
    expectError(await call('POST', '/collection/chains', { name: 'X', contractId: mine.contractId }), 400, v(1001, 'sets'));
  });

  it('a chain used as a filter cannot be deleted (409); a bulk delete including it deletes nothing', async () => {
    const { call, bodies, create, tenant } = await setupRecords();
    const used = await create('/collection/chains', bodies.chain());
    const free = await create('/collection/chains', bodies.chain({ name: 'Free' }));
    const input = await create('/collection/inputs', { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: tenant.collection.id, filterId: used._id });
    const body = expectError(await call('DELETE', '/collection/chains', { ids: [free._id, used._id] }), 409, { name: 'ConflictError', code: 4091, propertyName: 'ids[1]' });
    expect(body.errors[0]!.reason).toBe(`used by input ${input._id}`);
    expect((await call('GET', `/collection/chains?contract_id=${tenant.contract.id}`)).json()).toHaveLength(2);
  });
});
