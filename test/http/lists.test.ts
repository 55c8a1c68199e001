/**
 * Filter lists (docs/api.md#filter-lists, docs/filters.md#lists, docs/api.md#limits): create, read,
 * list, update, delete; pattern entries compiled on re2js; fixed fields; names unique; referential
 * 409.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });
/** The contract's own lists of a listing: the built-in ones follow them (docs/filters.md#built-in-lists). */
const own = (lists: { builtIn?: boolean }[]) => lists.filter((list) => !list.builtIn);

describe('filter lists', () => {
  it('create → 201 with the common fields; get, list, update, delete', async () => {
    const { call, bodies, tenant } = await setupRecords();
    const res = await call('POST', '/collection/lists', { ...bodies.list(), colour: 'blue' });
    expect(res.statusCode, res.body).toBe(201);
    const list = res.json();
    expect(Object.keys(list).sort()).toEqual(['_id', 'active', 'contractId', 'created', 'createdBy', 'entries', 'lastModified', 'lastModifiedBy', 'name', 'type']);
    expect(list).toMatchObject({ name: 'Bad words', type: 'strings', entries: ['spam'], active: true, contractId: tenant.contract.id, createdBy: tenant.consumer.name });
    expect(list.created).toMatch(ISO_MS);
    expect((await call('GET', `/collection/lists/${list._id}`)).json()).toEqual(list);
    expect(own((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json())).toEqual([list]);

    const patched = await call('PATCH', `/collection/lists/${list._id}`, { name: 'Words', entries: ['a', 'b'], active: false });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ _id: list._id, name: 'Words', entries: ['a', 'b'], active: false, type: 'strings', created: list.created });

    expect((await call('DELETE', `/collection/lists/${list._id}`)).statusCode).toBe(204);
    expectError(await call('GET', `/collection/lists/${list._id}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expect(own((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json())).toEqual([]);
  });

  it('compiles pattern entries on re2js: a bad one → 400 naming entries[i] with its position', async () => {
    const { call, bodies } = await setupRecords();
    const ok = await call('POST', '/collection/lists', bodies.list({ type: 'patterns', entries: ['/sp[a4]m/i', '/^breaking\\b/ms', '/caf\u00e9/u'] }));
    expect(ok.statusCode, ok.body).toBe(201);
    const res = await call('POST', '/collection/lists', bodies.list({ name: 'P', type: 'patterns', entries: ['/ok/', '/a(b/', 'no-slashes', '/x/g', '/(a)\\1/', '/(?=a)/'] }));
    const body = expectError(res, 400, v(1006, 'entries[1]'), v(1006, 'entries[2]'), v(1006, 'entries[3]'), v(1006, 'entries[4]'), v(1006, 'entries[5]'));
    const byName = Object.fromEntries(body.errors.map((e) => [e.propertyName, e]));
    expect(byName['entries[2]']!.reason).toMatch(/^position 0:/);
    expect(byName['entries[3]']!.reason).toMatch(/^position 3: unknown flag "g"/);
    expect(byName['entries[5]']!.reason).toMatch(/^position 1:/);
    // On update too.
    expectError(await call('PATCH', `/collection/lists/${ok.json()._id}`, { entries: ['/fine/', '/[z-a]/'] }), 400, v(1006, 'entries[1]'));
    // A strings list takes any text.
    expect((await call('POST', '/collection/lists', bodies.list({ name: 'S', entries: ['/a(b/'] }))).statusCode).toBe(201);
  });

  it('refuses a patterns list whose compiled size exceeds the bound (400 naming entries, 1003), on create and update', async () => {
    const { call, bodies, other } = await setupRecords();
    // `/a[ab]{990}c…/` compiles to about 995 instructions: 250 of them exceed 200 000.
    const costly = Array.from({ length: 250 }, (_, i) => `/a[ab]{990}c${i}/`);
    const body = expectError(await call('POST', '/collection/lists', bodies.list({ type: 'patterns', entries: costly })), 400, v(1003, 'entries'));
    expect(body.errors[0]!.message).toMatch(/^entries: the list's patterns compile to more than 200000 instructions \(crossed at entries\[\d+\]\)/);
    const small = await call('POST', '/collection/lists', bodies.list({ type: 'patterns', entries: costly.slice(0, 100) }));
    expect(small.statusCode, small.body).toBe(201);
    expectError(await call('PATCH', `/collection/lists/${small.json()._id}`, { entries: costly }), 400, v(1003, 'entries'));
    // Another contract's token gets 403 before any pattern is compiled.
    expectError(await call('PATCH', `/collection/lists/${small.json()._id}`, { entries: costly }, other.token), 403, { name: 'ForbiddenError', code: 3001 });
  });

  it('validates the body: required fields, type enum, limits; type and contractId cannot change', async () => {
    const { call, bodies, tenant, other } = await setupRecords();
    expectError(await call('POST', '/collection/lists', { contractId: tenant.contract.id }), 400, v(1001, 'name'), v(1001, 'type'), v(1001, 'entries'));
    expectError(await call('POST', '/collection/lists', bodies.list({ type: 'regex' })), 400, v(1004, 'type'));
    expectError(await call('POST', '/collection/lists', bodies.list({ contractId: 'nope' })), 400, v(1005, 'contractId'));
    expectError(await call('POST', '/collection/lists', bodies.list({ entries: Array.from({ length: 10_001 }, (_, i) => `w${i}`) })), 400, v(1003, 'entries'));
    expectError(await call('POST', '/collection/lists', bodies.list({ entries: ['x'.repeat(1001)] })), 400, v(1003, 'entries[0]'));
    const list = (await call('POST', '/collection/lists', bodies.list())).json();
    expectError(await call('PATCH', `/collection/lists/${list._id}`, { type: 'patterns' }), 400, v(1005, 'type'));
    expectError(await call('PATCH', `/collection/lists/${list._id}`, { contractId: other.contract.id }), 400, v(1005, 'contractId'));
    expect((await call('PATCH', `/collection/lists/${list._id}`, { type: 'strings', contractId: tenant.contract.id })).statusCode).toBe(200);
  });

  it('answers a body over 1 MiB with 413', async () => {
    const { call, bodies } = await setupRecords();
    const res = await call('POST', '/collection/lists', bodies.list({ entries: Array.from({ length: 1200 }, () => 'x'.repeat(1000)) }));
    expectError(res, 413, v(1003, 'body'));
  });

  it('ids: malformed → 400, unknown → 404; names unique in the contract → 409', async () => {
    const { call, bodies, other } = await setupRecords();
    expectError(await call('GET', '/collection/lists/xyz'), 400, v(1005, 'id'));
    expectError(await call('GET', `/collection/lists/${'a'.repeat(24)}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await call('DELETE', `/collection/lists/${'a'.repeat(24)}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    await call('POST', '/collection/lists', bodies.list());
    expectError(await call('POST', '/collection/lists', bodies.list()), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
    const second = (await call('POST', '/collection/lists', bodies.list({ name: 'Second' }))).json();
    expectError(await call('PATCH', `/collection/lists/${second._id}`, { name: 'Bad words' }), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
    // The same name in another contract is fine.
    expect((await call('POST', '/collection/lists', bodies.list({ contractId: other.contract.id }), other.token)).statusCode).toBe(201);
  });

  it('delete: 409 naming the set that uses the list; bulk all or nothing', async () => {
    const { call, bodies, create, rule, tenant } = await setupRecords();
    const used = await create('/collection/lists', bodies.list());
    const free = await create('/collection/lists', bodies.list({ name: 'Free' }));
    const set = await create('/collection/sets', bodies.set({ rules: [rule({ operator: 'in', field: 'tags', value: undefined, listId: used._id })] }));
    const res = await call('DELETE', `/collection/lists/${used._id}`);
    const body = expectError(res, 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(body.errors[0]!.message).toContain(set._id);
    expect(body.errors[0]!.reason).toBe(`used by set ${set._id}`);
    const bulk = await call('DELETE', '/collection/lists', { ids: [free._id, used._id] });
    expectError(bulk, 409, { name: 'ConflictError', code: 4091, propertyName: 'ids[1]' });
    expect(own((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json())).toHaveLength(2);
    expectError(await call('DELETE', '/collection/lists', { ids: [free._id, 'a'.repeat(24)] }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'ids[1]' });
    expectError(await call('DELETE', '/collection/lists', { ids: [] }), 400, v(1003, 'ids'));
    expectError(await call('DELETE', '/collection/lists', { ids: ['bad'] }), 400, v(1005, 'ids[0]'));
    expect(own((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json())).toHaveLength(2);
    // Once the set is gone, both go in one request.
    expect((await call('DELETE', `/collection/sets/${set._id}`)).statusCode).toBe(204);
    expect((await call('DELETE', '/collection/lists', { ids: [free._id, used._id] })).statusCode).toBe(204);
    expect(own((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json())).toEqual([]);
  });
});

describe('built-in lists (naughty-words, docs/filters.md#built-in-lists)', () => {
  it('are listed after the contract’s own, read by id, at least 20 languages, versioned with the package', async () => {
    const { call, tenant } = await setupRecords();
    const all = (await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json() as Record<string, any>[];
    const builtIn = all.filter((list) => list.builtIn);
    expect(builtIn.length).toBeGreaterThanOrEqual(20);
    for (const list of builtIn) expect(list).toMatchObject({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), contractId: null, type: 'patterns', active: true, version: 'naughty-words@1.2.0' });
    const en = builtIn.find((list) => list.language === 'en')!;
    expect(en._id).toBe('f11941554f5c2ed281f123c4');
    expect((await call('GET', `/collection/lists/${en._id}`)).json()).toEqual(en);
  });

  it('are read-only: a change or delete → 403 naming the list, and it is unchanged', async () => {
    const { call, tenant } = await setupRecords();
    const en = 'f11941554f5c2ed281f123c4';
    for (const res of [
      await call('PATCH', `/collection/lists/${en}`, { entries: [] }),
      await call('PATCH', `/collection/lists/${en}`, { active: false }),
      await call('DELETE', `/collection/lists/${en}`),
      await call('DELETE', '/collection/lists', { ids: [en] }),
    ]) {
      const body = expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
      expect(body.errors[0]!.message).toContain(`${en} (Offensive words (en))`);
    }
    expect((await call('GET', `/collection/lists/${en}`)).json()).toMatchObject({ active: true, entries: expect.arrayContaining([expect.any(String)]) });
    // Without a token: 401 first.
    expect((await call('DELETE', `/collection/lists/${en}`, undefined, '')).statusCode).toBe(401);
    void tenant;
  });

  it('are usable in rules by id: three languages judged by the dry run', async () => {
    const { call, tenant } = await setupRecords();
    const all = (await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json() as Record<string, any>[];
    const id = (language: string) => all.find((list) => list.builtIn && list.language === language)!._id as string;
    const set = await call('POST', '/collection/sets', {
      contractId: tenant.contract.id,
      name: 'offensive',
      preCondition: { operator: 'exists', field: 'id' },
      rules: ['en', 'de', 'fr'].map((language) => ({ operator: 'patternin', field: 'text', listId: id(language) })),
    });
    expect(set.statusCode, set.body).toBe(201);
    const items = [
      { id: 'x_en', text: 'what a load of bullshit' },
      { id: 'x_de', text: 'so ein Arschloch' },
      { id: 'x_fr', text: 'quel connard' },
      { id: 'x_ok', text: 'a classic Scunthorpe class' },
    ];
    const dry = await call('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: set.json()._id, items });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json().results.map((r: Record<string, unknown>) => [r.id, r.accepted, r.rule])).toEqual([
      ['x_en', false, 0],
      ['x_de', false, 1],
      ['x_fr', false, 2],
      ['x_ok', true, null],
    ]);
  });
});
