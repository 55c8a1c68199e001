/**
 * Ids over HTTP (src/lib/ids.ts, issue 14): another contract's ids cannot be guessed from one's
 * own, and listings still come in creation order, also for records made in one request.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

const tail = (id: string) => BigInt(`0x${id.slice(8)}`);
const bitsApart = (a: string, b: string) => (tail(a) ^ tail(b)).toString(2).replace(/0/g, '').length;

describe('ids', () => {
  it('another contract\'s next id is not a neighbour of one\'s own: guesses answer 404, not 403', async () => {
    const { call, create, bodies, other } = await setupRecords();
    const mine = await create('/collection/lists', bodies.list({ name: 'Mine' }));
    const theirs = await create('/collection/lists', { ...bodies.list({ name: 'Theirs' }), contractId: other.contract.id }, other.token);
    // Made one after the other by the same process: with a counter they would differ by one.
    expect(bitsApart(mine._id, theirs._id)).toBeGreaterThan(8);
    for (let step = -8n; step <= 8n; step++) {
      if (step === 0n) continue;
      const guess = mine._id.slice(0, 8) + (tail(mine._id) + step).toString(16).padStart(16, '0').slice(-16);
      expect(guess).not.toBe(theirs._id);
      expectError(await call('GET', `/collection/lists/${guess}`), 404, { name: 'NotFoundError', code: 4001 });
    }
    // The real id of the other contract is refused as such (and so never reachable by a guess above).
    expectError(await call('GET', `/collection/lists/${theirs._id}`), 403, { name: 'ForbiddenError', code: 3001 });
  });

  it('lists records in creation order, those made one after another and those of one bulk request', async () => {
    const { call, create, bodies, tenant } = await setupRecords();
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push((await create('/collection/lists', bodies.list({ name: `List ${String(i).padStart(2, '0')}` })))._id);
    const listed = ((await call('GET', `/collection/lists?contract_id=${tenant.contract.id}`)).json() as { _id: string; builtIn?: boolean }[]).filter((list) => !list.builtIn);
    expect(listed.map((l) => l._id)).toEqual(made);
    for (let i = 1; i < made.length; i++) expect(bitsApart(made[i - 1]!, made[i]!), `ids ${i - 1} and ${i}`).toBeGreaterThan(8);

    // One request, one timestamp: the order of the request is kept.
    const inputs = Array.from({ length: 40 }, (_, i) => ({ service: 'rss', type: 'feed', input: `https://example.com/feed-${i}.xml`, contractId: tenant.contract.id, collectionId: tenant.collection.id }));
    const bulk = await call('POST', '/collection/inputs', inputs);
    expect(bulk.statusCode, bulk.body).toBe(201);
    const createdIds = (bulk.json() as { _id: string }[]).map((input) => input._id);
    expect([...createdIds].sort()).toEqual(createdIds);
    const all = (await call('GET', `/collection/inputs?contract_id=${tenant.contract.id}`)).json() as { _id: string; input: string }[];
    expect(all.map((input) => input.input)).toEqual(inputs.map((input) => input.input));
  });
});
