/**
 * A filter applied to stored items (issue 16; docs/api.md#apply-a-filter, docs/api.md#jobs),
 * through HTTP on a real database: in the request for a few items (counts per rule, one
 * revertable audit entry, unpublished never deleted), as a job with progress for 100 000 items
 * stored directly through the store's batch insert, and its undo; with the hostile cases:
 * another contract's filter, collection or job, malformed ids, contradictory bodies.
 */
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { insertAll } from '../../src/store/batch.ts';
import { isPostgres } from '../../src/store/db.ts';
import { createJob } from '../../src/store/jobs.ts';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

type Setup = Awaited<ReturnType<typeof setupRecords>>;

/** A set rejecting status items (rule 0) and items whose text mentions a casino (rule 1). */
async function spamSet(s: Setup, contractId = s.tenant.contract.id, token = s.tenant.token) {
  return s.create(
    '/collection/sets',
    {
      name: 'Spam',
      contractId,
      rules: [s.rule({ field: 'type', value: 'status' }), s.rule({ operator: 'pattern', field: 'text', value: '/casino/i' })],
      preCondition: s.rule({ operator: 'exists', field: 'text', value: undefined }),
    },
    token,
  );
}

async function counts(s: Setup) {
  const res = await s.call('GET', `/v1/queue/${s.tenant.contract.slug}/count?q=${s.tenant.collection.slug}&since=0`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { published: number; unpublished: number };
}

describe('POST /collection/filters/apply in the request', () => {
  it('unpublishes what the filter rejects, counts per rule, one revertable entry; undo brings them back', async () => {
    const s = await setupRecords();
    await seedItems(s.db, s.tenant, [
      buildItem({ id: 'rss_fine', text: 'Harbour festival' }),
      buildItem({ id: 'rss_casino', text: 'Best CASINO bonus' }),
      buildItem({ id: 'twitter_1', service: 'twitter', type: 'status', text: 'A tweet' }),
      buildItem({ id: 'twitter_2', service: 'twitter', type: 'status', text: 'Another tweet' }),
      buildItem({ id: 'rss_old', text: 'casino of 1999', date: '1999-01-01T00:00:00.000Z' }),
    ]);
    await seedItems(s.db, s.tenant, [buildItem({ id: 'twitter_3', service: 'twitter', type: 'status', text: 'Hidden already' })], 'unpublished');
    const set = await spamSet(s);
    const since = Date.parse('2000-01-01T00:00:00.000Z') / 1000;
    const res = await s.call('POST', '/collection/filters/apply', { contractId: s.tenant.contract.id, filterId: set._id, collectionId: s.tenant.collection.id, since });
    expect(res.statusCode, res.body).toBe(200);
    const outcome = res.json();
    expect(outcome).toMatchObject({
      judged: 5,
      rejected: 4,
      unpublished: 3,
      hits: [
        { set: { id: set._id, name: 'Spam' }, rule: 0, count: 3 },
        { set: { id: set._id, name: 'Spam' }, rule: 1, count: 1 },
      ],
    });
    expect(await counts(s)).toEqual({ published: 2, unpublished: 4 });

    const audit = await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&action=apply`);
    const [entry] = audit.json();
    expect(entry).toMatchObject({ _id: outcome.auditId, resource: 'item', resourceId: s.tenant.collection.id, itemCount: 3, consumer: { id: s.tenant.consumer.id } });
    expect(entry.before.items.map((i: { id: string }) => i.id).sort()).toEqual(['rss_casino', 'twitter_1', 'twitter_2']);

    const undo = await s.call('POST', `/collection/audit/${outcome.auditId}/revert`);
    expect(undo.statusCode, undo.body).toBe(201);
    expect(undo.json()).toMatchObject({ action: 'revert', reverts: outcome.auditId, itemCount: 3 });
    expect(await counts(s)).toEqual({ published: 5, unpublished: 1 });

    // An unsaved set works as in the dry run; nothing to change → no entry.
    const rules = { rules: [s.rule({ field: 'service', value: 'vimeo' })], preCondition: s.rule({ operator: 'exists', field: 'text', value: undefined }) };
    const none = await s.call('POST', '/collection/filters/apply', { contractId: s.tenant.contract.id, set: rules, collectionId: s.tenant.collection.id });
    expect(none.json()).toEqual({ judged: 6, rejected: 0, held: 0, unpublished: 0, hits: [], auditId: null });
  });

  it("refuses another contract's filter or collection (403), unknown ones (404) and contradictory bodies (400)", async () => {
    const s = await setupRecords();
    const set = await spamSet(s);
    const theirs = await spamSet(s, s.other.contract.id, s.other.token);
    const body = { contractId: s.tenant.contract.id, filterId: set._id, collectionId: s.tenant.collection.id };
    const apply = (payload: unknown, token = s.tenant.token) => s.call('POST', '/collection/filters/apply', payload, token);
    expectError(await apply({ ...body, filterId: theirs._id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    expectError(await apply({ ...body, collectionId: s.other.collection.id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collectionId' });
    expectError(await apply(body, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
    expectError(await apply({ ...body, collectionId: '0'.repeat(24) }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collectionId' });
    expectError(await apply({ ...body, set: { rules: [], preCondition: s.rule() } }), 400, { name: 'ValidationError', code: 1001, propertyName: 'filterId' });
    expectError(await apply({ ...body, since: 100, until: 50 }), 400, { name: 'ValidationError', code: 1003, propertyName: 'until' });
    expectError(await apply({ ...body, collectionId: "x' OR 1=1" }), 400, { name: 'ValidationError', code: 1005, propertyName: 'collectionId' });
    const { collectionId: _omitted, ...withoutCollection } = body;
    expectError(await apply(withoutCollection), 400, { name: 'ValidationError', code: 1001, propertyName: 'collectionId' });
  });
});

describe('POST /collection/filters/apply as a job', () => {
  it('applies a filter to 100 000 stored items with progress, isolated, and undoes it', { timeout: 600_000 }, async () => {
    const s = await setupRecords();
    const set = await spamSet(s);
    const TOTAL = 100_000;
    const now = Date.now();
    const rows = Array.from({ length: TOTAL }, (_, i) => {
      const status = i % 2 === 0;
      const item = buildItem({ id: `rss_${i}`, type: status ? 'status' : 'link', text: `Item ${i}`, date: new Date(now - 1000 - i).toISOString() });
      const { state: _state, ...body } = item;
      return {
        collectionId: s.tenant.collection.id,
        id: item.id,
        contractId: s.tenant.contract.id,
        inputId: '0'.repeat(24),
        service: item.service,
        type: item.type,
        state: 'published',
        dateMs: Date.parse(item.date),
        score: 0,
        language: null,
        latitude: null,
        longitude: null,
        seq: 0,
        body: JSON.stringify(body),
        createdAt: now,
      };
    });
    await s.db.transaction().execute((trx) => insertAll(trx, 'items', rows));

    const res = await s.call('POST', '/collection/filters/apply', { contractId: s.tenant.contract.id, filterId: set._id, collectionId: s.tenant.collection.id });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json();
    expect(res.headers.location).toBe(`/collection/jobs/${queued._id}`);
    expect(queued).toMatchObject({ contractId: s.tenant.contract.id, kind: 'filter-apply', total: TOTAL, createdBy: { id: s.tenant.consumer.id } });
    expect(['queued', 'running']).toContain(queued.state);

    // Another contract's token sees nothing of the job; unknown and malformed ids are told apart.
    const foreign = expectError(await s.call('GET', `/collection/jobs/${queued._id}`, undefined, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(foreign)).not.toContain(s.tenant.contract.id);
    expectError(await s.call('GET', `/collection/jobs/${'0'.repeat(24)}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await s.call('GET', '/collection/jobs/1;DROP'), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });

    // Progress only grows, never past the total, until the job is done (bounded polling).
    let job = queued;
    let last = 0;
    for (let i = 0; i < 3000 && job.state !== 'done' && job.state !== 'failed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = (await s.call('GET', `/collection/jobs/${queued._id}`)).json();
      expect(job.done).toBeGreaterThanOrEqual(last);
      expect(job.done).toBeLessThanOrEqual(job.total);
      last = job.done;
    }
    expect(job.state, JSON.stringify(job)).toBe('done');
    expect(job).toMatchObject({ done: TOTAL, total: TOTAL, result: { judged: TOTAL, rejected: TOTAL / 2, unpublished: TOTAL / 2, hits: [{ rule: 0, count: TOTAL / 2 }] } });
    expect(typeof job.finished).toBe('string');
    expect(await counts(s)).toEqual({ published: TOTAL / 2, unpublished: TOTAL / 2 });

    const undo = await s.call('POST', `/collection/audit/${job.result.auditId}/revert`);
    expect(undo.statusCode, undo.body).toBe(201);
    expect(undo.json()).toMatchObject({ action: 'revert', itemCount: TOTAL / 2 });
    expect(await counts(s)).toEqual({ published: TOTAL, unpublished: 0 });
    // The items are all still there: unpublished, never deleted.
    const stored = await s.db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).where('collectionId', '=', s.tenant.collection.id).executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(TOTAL);
  });
});

describe('jobs left unfinished by a process that stopped', () => {
  it('are run again, once, by the next process that starts', async () => {
    const s = await setupRecords();
    await seedItems(s.db, s.tenant, [buildItem({ id: 'twitter_9', service: 'twitter', type: 'status' }), buildItem({ id: 'rss_9' })]);
    const set = await spamSet(s);
    const actor = { id: s.tenant.consumer.id, name: s.tenant.consumer.name };
    const params = { contractId: s.tenant.contract.id, collectionId: s.tenant.collection.id, filterId: set._id, sinceMs: 0, untilMs: Date.now(), actor };
    const jobId = await createJob(s.db, { contractId: s.tenant.contract.id, kind: 'filter-apply', params, total: 2, actor });
    // As a dead process leaves it: running half-way on SQLite (the process owned the file); on
    // PostgreSQL queued before it reached pg-boss (pg-boss itself hands over running ones).
    if (!isPostgres(s.db)) await s.db.updateTable('jobs').set({ state: 'running', done: 1 }).where('id', '=', jobId).execute();
    const next = await buildApp(s.config, { db: s.db });
    try {
      await next.ready();
      let job = { state: 'queued' } as Record<string, any>;
      for (let i = 0; i < 600 && job.state !== 'done' && job.state !== 'failed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        job = (await next.inject({ method: 'GET', url: `/collection/jobs/${jobId}?access_token=${s.tenant.token}` })).json();
      }
      expect(job).toMatchObject({ state: 'done', done: 2, total: 2, result: { judged: 2, rejected: 1, unpublished: 1 } });
      expect(await counts(s)).toEqual({ published: 1, unpublished: 1 });
      const applied = await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&action=apply`);
      expect(applied.json()).toHaveLength(1);
    } finally {
      await next.close();
    }
  });
});
