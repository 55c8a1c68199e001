/**
 * Contract isolation (decisions §2, §4): every management endpoint, called with a token of
 * another contract, answers 403 ForbiddenError and leaks none of the resource's data, and
 * changes nothing.
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
