/**
 * What the console's Filters screen needs of the API (issue 12; docs/api.md): the rule table
 * (`GET /collection/filters/operators`), the dry run of a set that is not saved (`set` instead
 * of `filterId` in `POST /collection/filters/test`), and the contract's filter
 * (`PATCH /collection/contracts/{id}`). Each with its hostile cases: no token, another
 * contract's token, list or filter, bad input naming the property.
 */
import { describe, expect, it } from 'vitest';
import { OPERATORS } from '../../src/filter/rules.ts';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

const always = { operator: 'exists', field: 'id', not: false };
const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

describe('GET /collection/filters/operators', () => {
  it('gives every operator of the rule table with its value kind and list type, and the fields with their kinds', async () => {
    const { call } = await setupRecords();
    const res = await call('GET', '/collection/filters/operators');
    expect(res.statusCode, res.body).toBe(200);
    const table = res.json();
    expect(table.operators.map((o: { operator: string }) => o.operator)).toEqual(Object.keys(OPERATORS));
    expect(table.operators).toContainEqual({ operator: 'patternin', value: 'patterns', list: 'patterns' });
    expect(table.operators).toContainEqual({ operator: 'in', value: 'values', list: 'strings' });
    expect(table.operators).toContainEqual({ operator: 'exists', value: 'none', list: null });
    expect(table.operators).toContainEqual({ operator: 'gt', value: 'numberOrDate', list: null });
    expect(table.fields).toContainEqual({ field: 'text', kind: 'text', aliasOf: null });
    expect(table.fields).toContainEqual({ field: 'date', kind: 'date', aliasOf: null });
    expect(table.fields).toContainEqual({ field: 'kudos.score', kind: 'number', aliasOf: null });
    expect(table.fields).toContainEqual({ field: 'user', kind: 'text', aliasOf: 'author.username' });
    expect(table.listTypes).toEqual(['strings', 'patterns']);
  });

  it('wants a token', async () => {
    const { app } = await setupRecords();
    expectError(await app.inject({ method: 'GET', url: '/collection/filters/operators' }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });
});

describe('POST /collection/filters/test with an unsaved set', () => {
  it('judges the stored items with the set, naming it with id null, and saves nothing', async () => {
    const { call, create, db, tenant } = await setupRecords();
    const list = await create('/collection/lists', { name: 'Spam words', contractId: tenant.contract.id, type: 'patterns', entries: ['/viagra/i', '/casino/i'] });
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_1', text: 'Buy VIAGRA now' }),
      buildItem({ id: 'rss_2', text: 'The council met today' }),
      buildItem({ id: 'rss_3', text: 'Casino night' }),
    ]);
    const set = { name: 'Spam', preCondition: always, rules: [{ operator: 'patternin', field: 'text', listId: list._id, not: false }] };
    const res = await call('POST', '/collection/filters/test', { contractId: tenant.contract.id, set, collectionId: tenant.collection.id });
    expect(res.statusCode, res.body).toBe(200);
    const { results, hits } = res.json();
    expect(results.filter((r: { accepted: boolean }) => !r.accepted).map((r: { id: string }) => r.id).sort()).toEqual(['rss_1', 'rss_3']);
    expect(results.find((r: { id: string }) => r.id === 'rss_1')).toMatchObject({ set: { id: null, name: 'Spam' }, rule: 0, reason: expect.stringContaining('/viagra/i') });
    expect(hits).toEqual([{ set: { id: null, name: 'Spam' }, rule: 0, action: 'reject', count: 2 }]);
    expect((await call('GET', `/collection/sets?contract_id=${tenant.contract.id}`)).json()).toEqual([]);

    // or and a nameless set, with items sent in the request.
    const either = { or: true, preCondition: always, rules: [{ operator: 'pattern', field: 'text', value: '/night/', not: false }, { operator: 'equals', field: 'service', value: 'rss', not: false }] };
    const sent = await call('POST', '/collection/filters/test', { contractId: tenant.contract.id, set: either, items: [buildItem({ id: 'a', text: 'a night' }), buildItem({ id: 'b' })] });
    expect(sent.json().hits).toEqual([{ set: { id: null, name: 'unsaved set' }, rule: 1, action: 'reject', count: 1 }]);
  });

  it('validates the set as a saved set is, every path under set.', async () => {
    const { call, create, tenant, other } = await setupRecords();
    const strings = await create('/collection/lists', { name: 'Words', contractId: tenant.contract.id, type: 'strings', entries: ['a'] });
    const theirs = await create('/collection/lists', { name: 'Theirs', contractId: other.contract.id, type: 'patterns', entries: ['/a/'] }, other.token);
    const dry = (set: unknown, extra: Record<string, unknown> = {}) => call('POST', '/collection/filters/test', { contractId: tenant.contract.id, set, items: [], ...extra });
    const rule = (over: Record<string, unknown>) => ({ operator: 'equals', field: 'text', value: 'x', not: false, ...over });

    expectError(
      await dry({ preCondition: rule({ operator: 'like' }), rules: [rule({ operator: 'pattern', value: '/a(b/' }), rule({ field: 'body' }), rule({ operator: 'exists' })] }),
      400,
      v(1004, 'set.preCondition.operator'),
      v(1006, 'set.rules[0].value'),
      v(1004, 'set.rules[1].field'),
      v(1002, 'set.rules[2].value'),
    );
    const bad = expectError(await dry({ preCondition: always, rules: [rule({ operator: 'pattern', value: '/a(b/' })] }), 400, v(1006, 'set.rules[0].value'));
    expect(bad.errors[0]!.reason).toMatch(/^position \d+: /);
    expectError(await dry({ rules: [] }), 400, v(1001, 'set.preCondition'));
    // A list of the wrong type, an unknown list, another contract's list.
    expectError(await dry({ preCondition: always, rules: [rule({ operator: 'patternin', value: undefined, listId: strings._id })] }), 400, v(1002, 'set.rules[0].listId'));
    expectError(await dry({ preCondition: always, rules: [rule({ operator: 'patternin', value: undefined, listId: 'c'.repeat(24) })] }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'set.rules[0].listId' });
    const forbidden = expectError(await dry({ preCondition: always, rules: [rule({ operator: 'patternin', value: undefined, listId: theirs._id })] }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'set.rules[0].listId' });
    expect(JSON.stringify(forbidden)).not.toContain(other.contract.id);
    // Exactly one of filterId and set.
    expectError(await call('POST', '/collection/filters/test', { contractId: tenant.contract.id, items: [] }), 400, v(1001, 'filterId'));
    const saved = await create('/collection/sets', { name: 'S', contractId: tenant.contract.id, preCondition: always, rules: [] });
    expectError(await dry({ preCondition: always, rules: [] }, { filterId: saved._id }), 400, v(1001, 'filterId'));
    // Another contract's token sees nothing of this contract.
    expectError(await call('POST', '/collection/filters/test', { contractId: tenant.contract.id, set: { preCondition: always, rules: [] }, collectionId: tenant.collection.id }, other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
  });
});

describe('PATCH /collection/contracts/{id}', () => {
  it("sets and clears the contract's filter, shown in contracts/me", async () => {
    const { call, create, tenant } = await setupRecords();
    const set = await create('/collection/sets', { name: 'S', contractId: tenant.contract.id, preCondition: always, rules: [] });
    const chain = await create('/collection/chains', { name: 'C', contractId: tenant.contract.id, sets: [set._id] });
    const res = await call('PATCH', `/collection/contracts/${tenant.contract.id}`, { filterId: chain._id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ _id: tenant.contract.id, name: 'Acme News', filterId: chain._id, active: true });
    expect((await call('GET', '/v1/customer/contracts/me')).json()).toEqual([res.json()]);
    // In use by the contract: the chain cannot be deleted.
    expectError(await call('DELETE', `/collection/chains/${chain._id}`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    const cleared = await call('PATCH', `/collection/contracts/${tenant.contract.id}`, { filterId: null });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).not.toHaveProperty('filterId');
    expect((await call('DELETE', `/collection/chains/${chain._id}`)).statusCode).toBe(204);
  });

  it('refuses another contract, another contract’s filter, unknown ids and bad bodies', async () => {
    const { call, create, tenant, other } = await setupRecords();
    const mine = await create('/collection/sets', { name: 'Mine', contractId: tenant.contract.id, preCondition: always, rules: [] });
    const theirs = await create('/collection/sets', { name: 'Theirs', contractId: other.contract.id, preCondition: always, rules: [] }, other.token);
    const url = `/collection/contracts/${tenant.contract.id}`;
    const forbidden = expectError(await call('PATCH', url, { filterId: theirs._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    expect(JSON.stringify(forbidden)).not.toContain(other.contract.id);
    expectError(await call('PATCH', url, { filterId: 'd'.repeat(24) }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'filterId' });
    const notMine = expectError(await call('PATCH', `/collection/contracts/${other.contract.id}`, { filterId: null }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(notMine)).not.toContain(other.contract.name);
    expectError(await call('PATCH', `/collection/contracts/${other.contract.id}`, { filterId: mine._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expectError(await call('PATCH', `/collection/contracts/${'e'.repeat(24)}`, { filterId: null }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await call('PATCH', url, {}), 400, v(1001, 'filterId'));
    expectError(await call('PATCH', url, { filterId: 'nope' }), 400, { name: 'ValidationError', propertyName: 'filterId', code: 1005 });
    expect((await call('PATCH', url, { filterId: null }, 'not-a-token')).statusCode).toBe(401);
    expect((await call('GET', '/v1/customer/contracts/me')).json()[0]).not.toHaveProperty('filterId');
  });
});
