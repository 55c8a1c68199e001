/**
 * Contract isolation (docs/api.md#contract-access, docs/api.md#errors): every management endpoint,
 * called with a token of another contract, answers 403 ForbiddenError and leaks none of the
 * resource's data, and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

describe('another contract cannot see, change or delete', () => {
  it('answers 403 with no data on every management endpoint', async () => {
    const { call, create, bodies, tenant, other, db } = await setupRecords();
    const list = await create('/collection/lists', bodies.list());
    const set = await create('/collection/sets', bodies.set());
    const chain = await create('/collection/chains', bodies.chain({ sets: [set._id] }));
    const customization = await create('/publication/customizations', bodies.customization());
    const collection = await create('/collection/collections', bodies.collection());
    const input = await create('/collection/inputs', { service: 'twitter', type: 'tag', input: 'news', contractId: tenant.contract.id, collectionId: collection._id });
    await seedItems(db, { contract: tenant.contract, collection: { id: collection._id } }, [buildItem({ id: 'rss_1' })]);
    const mine = tenant.contract.id;
    const records: [string, { _id: string }, Record<string, unknown>][] = [
      ['/collection/lists', list, { name: 'x' }],
      ['/collection/sets', set, { name: 'x' }],
      ['/collection/chains', chain, { name: 'x' }],
      ['/publication/customizations', customization, { name: 'x' }],
      ['/collection/collections', collection, { name: 'x' }],
      ['/collection/inputs', input, { service: 'twitter', type: 'tag', input: 'x' }],
    ];
    const before = await Promise.all(records.map(([path, record]) => call('GET', `${path}/${record._id}`).then((r) => r.body)));

    const requests: [string, string, unknown][] = [];
    for (const [path, record, change] of records) {
      requests.push(['GET', `${path}?contract_id=${mine}`, undefined]);
      requests.push(['GET', `${path}/${record._id}`, undefined]);
      requests.push([path === '/collection/inputs' ? 'PUT' : 'PATCH', `${path}/${record._id}`, change]);
      requests.push(['DELETE', `${path}/${record._id}`, undefined]);
      requests.push(['DELETE', path, { ids: [record._id] }]);
    }
    requests.push(['POST', '/collection/lists', bodies.list({ name: 'Mine now' })]);
    requests.push(['POST', '/collection/sets', bodies.set({ name: 'Mine now' })]);
    requests.push(['POST', '/collection/chains', bodies.chain({ name: 'Mine now' })]);
    requests.push(['POST', '/publication/customizations', bodies.customization({ name: 'Mine now' })]);
    requests.push(['POST', '/collection/collections', bodies.collection({ name: 'Mine now' })]);
    requests.push(['POST', '/collection/inputs', { service: 'twitter', type: 'tag', input: 'x', contractId: mine, collectionId: collection._id }]);

    const secrets = [list._id, set._id, chain._id, customization._id, collection._id, input._id, 'Bad words', 'body{color:#000}', collection.slug];
    for (const [method, url, payload] of requests) {
      const res = await call(method as 'GET', url, payload, other.token);
      const body = expectError(res, 403, { name: 'ForbiddenError', code: 3001 });
      expect(Object.keys(body).sort(), `${method} ${url}`).toEqual(['errors', 'requestId']);
      const text = JSON.stringify(body.errors.map(({ message: _m, ...rest }) => rest));
      for (const secret of secrets.slice(6)) expect(res.body, `${method} ${url}`).not.toContain(secret);
      expect(text, `${method} ${url}`).not.toContain(mine);
    }
    expect(requests.length).toBe(36);
    // Nothing changed, nothing was created.
    const after = await Promise.all(records.map(([path, record]) => call('GET', `${path}/${record._id}`).then((r) => r.body)));
    expect(after).toEqual(before);
    for (const path of ['/collection/lists', '/collection/sets', '/collection/chains', '/publication/customizations', '/collection/collections']) {
      expect((await call('GET', `${path}?contract_id=${mine}`)).json().some((r: { name: string }) => r.name === 'Mine now')).toBe(false);
    }
    expect(await db.selectFrom('items').selectAll().execute()).toHaveLength(1);
  });
});

describe('a body or query naming a record', () => {
  it('answers 403 naming the property for a record of another contract, and 404 for an unknown one', async () => {
    const { call, create, bodies, tenant, other } = await setupRecords();
    const mine = tenant.contract.id;
    const theirs = (over: Record<string, unknown>) => ({ ...over, contractId: other.contract.id });
    const set = await create('/collection/sets', bodies.set());
    const chain = await create('/collection/chains', bodies.chain({ sets: [set._id] }));
    const collection = await create('/collection/collections', bodies.collection());
    const theirSet = await create('/collection/sets', theirs(bodies.set()), other.token);
    const theirChain = await create('/collection/chains', theirs(bodies.chain()), other.token);
    const theirCollection = await create('/collection/collections', theirs(bodies.collection()), other.token);
    const unknown = 'd'.repeat(24);
    const input = { service: 'twitter', type: 'tag', input: 'news', contractId: mine, collectionId: collection._id };

    const cases: [string, 'POST' | 'PATCH', string, (id: string) => unknown, string, string][] = [
      ['chain sets', 'POST', '/collection/chains', (id) => bodies.chain({ name: `C ${id}`, sets: [set._id, id] }), theirSet._id, 'sets[1]'],
      ['chain update sets', 'PATCH', `/collection/chains/${chain._id}`, (id) => ({ sets: [id] }), theirSet._id, 'sets[0]'],
      ['collection filter', 'POST', '/collection/collections', (id) => bodies.collection({ name: `K ${id}`, filterId: id }), theirChain._id, 'filterId'],
      ['input collection', 'POST', '/collection/inputs', (id) => ({ ...input, collectionId: id }), theirCollection._id, 'collectionId'],
      ['input filter', 'POST', '/collection/inputs', (id) => ({ ...input, filterId: id }), theirSet._id, 'filterId'],
      ['dry run filter', 'POST', '/collection/filters/test', (id) => ({ contractId: mine, filterId: id, items: [] }), theirChain._id, 'filterId'],
      ['dry run collection', 'POST', '/collection/filters/test', (id) => ({ contractId: mine, filterId: set._id, collectionId: id }), theirCollection._id, 'collectionId'],
    ];
    for (const [label, method, url, body, theirId, propertyName] of cases) {
      const forbidden = expectError(await call(method, url, body(theirId)), 403, { name: 'ForbiddenError', code: 3001, propertyName });
      expect(JSON.stringify(forbidden), label).not.toContain(other.contract.id);
      expectError(await call(method, url, body(unknown)), 404, { name: 'NotFoundError', code: 4001, propertyName });
    }
    const listed = `/collection/inputs?contract_id=${mine}&collection_id=`;
    expectError(await call('GET', `${listed}${theirCollection._id}`), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collection_id' });
    expectError(await call('GET', `${listed}${unknown}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collection_id' });
  });
});
