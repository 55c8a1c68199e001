/**
 * Refusals tell nothing of the other contract (issue 30, point 8; docs/api.md#errors: "A resource
 * of another contract is answered 403 without any of its data, not even its contract id"). The
 * attack: with contract A's token, contract B's queue and management endpoints named by B's slug
 * and by B's id; the queue's refusal used to name the id B's slug resolves to. Every answer is
 * 403 ForbiddenError naming the property, and its whole body holds nothing of B: not its id,
 * slug or name, not its collection's id or slug, not its records' ids or names.
 */
import { expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

it("answers A's requests for B's queue and management resources, by B's slug and by B's id, 403 with nothing of B", async () => {
  const { call, create, bodies, tenant, other } = await setupRecords();
  const theirs = (over: Record<string, unknown>) => ({ ...over, contractId: other.contract.id });
  const theirSet = await create('/collection/sets', theirs(bodies.set({ name: 'Bravo spam rules' })), other.token);
  const theirList = await create('/collection/lists', theirs(bodies.list({ name: 'Bravo words' })), other.token);
  const b = other.contract;
  const q = other.collection.slug;
  const theirAudit = (await call('GET', `/collection/audit?contract_id=${other.contract.id}`, undefined, other.token)).json() as { _id: string }[];
  const secrets = [b.id, b.slug, b.name, other.collection.id, q, theirSet._id, theirSet.name, theirList._id, theirList.name];

  const cases: { method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'; url: string; body?: unknown; propertyName: string }[] = [];
  for (const contract of [b.slug, b.id]) {
    cases.push(
      { method: 'GET', url: `/v1/queue/${contract}?q=${q}`, propertyName: 'contract' },
      { method: 'GET', url: `/v1/queue/${contract}/count?q=${q}`, propertyName: 'contract' },
      { method: 'GET', url: `/v1/queue/${contract}/history?q=${q}&id=rss_1`, propertyName: 'contract' },
      { method: 'GET', url: `/v1/queue/${contract}/stream?q=${q}`, propertyName: 'contract' },
      { method: 'PATCH', url: `/v1/queue/${contract}?q=${q}`, body: { id: 'rss_1', state: 'published' }, propertyName: 'contract' },
      { method: 'POST', url: `/v1/queue/${contract}/split?q=${q}&id=rss_1`, body: { duplicateId: 'rss_2' }, propertyName: 'contract' },
    );
  }
  cases.push(
    { method: 'PATCH', url: `/collection/contracts/${b.id}`, body: { filterId: null }, propertyName: 'id' },
    { method: 'GET', url: `/collection/sets?contract_id=${b.id}`, propertyName: 'contract_id' },
    { method: 'GET', url: `/collection/inputs?contract_id=${b.id}`, propertyName: 'contract_id' },
    { method: 'GET', url: `/collection/audit?contract_id=${b.id}`, propertyName: 'contract_id' },
    { method: 'POST', url: '/collection/lists', body: theirs(bodies.list()), propertyName: 'contractId' },
    { method: 'POST', url: '/collection/filters/test', body: { contractId: b.id, filterId: theirSet._id, items: [] }, propertyName: 'contractId' },
    { method: 'GET', url: `/collection/sets/${theirSet._id}`, propertyName: 'id' },
    { method: 'PATCH', url: `/collection/lists/${theirList._id}`, body: { name: 'x' }, propertyName: 'id' },
    { method: 'POST', url: '/collection/chains', body: bodies.chain({ sets: [theirSet._id] }), propertyName: 'sets[0]' },
    { method: 'POST', url: `/collection/audit/${theirAudit[0]!._id}/revert`, propertyName: 'id' },
  );

  for (const { method, url, body, propertyName } of cases) {
    const res = await call(method, url, body);
    expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName });
    for (const secret of secrets) expect(res.body, `${method} ${url} tells ${secret}`).not.toContain(secret);
  }
  // The happy side: A's own queue by A's slug answers.
  expect((await call('GET', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}`)).statusCode).toBe(200);
});
