/**
 * The audit trail, undo and item history (issue 16; docs/api.md#audit-trail, #revert,
 * #item-history), through HTTP on a real database: every kind of change leaves its entry with
 * the record before and after (table-driven over the resources), secrets never recorded, a
 * refused change records nothing, reads isolated between contracts, cursor paging, revert of a
 * single and of a bulk moderation (all or nothing, refused when an item changed since), and the
 * hostile cases beside each.
 */
import { describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/store/audit.ts';
import { grant, revokeGrant } from '../../src/store/contracts.ts';
import { buildClient, buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

const SECRET = 'AAAAaudit-secret-bearer-token-q8w7e6';

type Setup = Awaited<ReturnType<typeof setupRecords>>;
type Entry = Record<string, any>;

async function setup() {
  const ctx = await setupRecords();
  const audit = async (query = '', token = ctx.tenant.token) => {
    const res = await ctx.call('GET', `/collection/audit?contract_id=${ctx.tenant.contract.id}${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Entry[];
  };
  const slug = ctx.tenant.contract.slug;
  const q = ctx.tenant.collection.slug;
  const moderate = (query: string, body: unknown, token = ctx.tenant.token) => ctx.call('PATCH', `/v1/queue/${slug}?q=${q}${query}`, body, token);
  const history = (id: string, token = ctx.tenant.token) => ctx.call('GET', `/v1/queue/${slug}/history?q=${q}&id=${encodeURIComponent(id)}`, undefined, token);
  const revert = (id: string, token = ctx.tenant.token) => ctx.call('POST', `/collection/audit/${id}/revert`, undefined, token);
  const states = async () => {
    const res = await ctx.call('GET', `/v1/queue/${slug}?q=${q}&since=0`);
    return Object.fromEntries((res.json() as { id: string; state: string }[]).map((item) => [item.id, item.state]));
  };
  return { ...ctx, audit, moderate, history, revert, states };
}

/** Each management resource: how to create, update and delete one, and a field the update changes. */
const RESOURCES: {
  resource: string;
  path: string;
  body: (s: Setup) => Record<string, unknown>;
  update: Record<string, unknown>;
  method?: 'PATCH' | 'PUT';
  field: string;
}[] = [
  { resource: 'collection', path: '/collection/collections', body: (s) => s.bodies.collection(), update: { name: 'Sports 2' }, field: 'name' },
  { resource: 'list', path: '/collection/lists', body: (s) => s.bodies.list(), update: { entries: ['ham'] }, field: 'entries' },
  { resource: 'set', path: '/collection/sets', body: (s) => s.bodies.set(), update: { or: true }, field: 'or' },
  { resource: 'chain', path: '/collection/chains', body: (s) => s.bodies.chain(), update: { name: 'Other' }, field: 'name' },
  { resource: 'customization', path: '/publication/customizations', body: (s) => s.bodies.customization(), update: { data: 'body{color:red}' }, field: 'data' },
  {
    resource: 'credential',
    path: '/collection/credentials',
    body: (s) => ({ contractId: s.tenant.contract.id, name: 'X account', service: 'twitter', bearerToken: SECRET }),
    update: { name: 'Y account', bearerToken: `${SECRET}-2` },
    field: 'name',
  },
  {
    resource: 'input',
    path: '/collection/inputs',
    body: (s) => ({ service: 'rss', type: 'feed', input: 'https://example.com/a.xml', contractId: s.tenant.contract.id, collectionId: s.tenant.collection.id }),
    update: { service: 'rss', type: 'feed', input: 'https://example.com/b.xml' },
    method: 'PUT',
    field: 'input',
  },
];

describe('every management change is recorded with before and after', () => {
  it.each(RESOURCES)('$resource: create, update and delete', async ({ resource, path, body, update, method, field }) => {
    const s = await setup();
    const created = await s.create(path, body(s));
    const updated = await s.call(method ?? 'PATCH', `${path}/${created._id}`, update);
    expect(updated.statusCode, updated.body).toBe(200);
    // A refused change (a malformed contractId) records nothing.
    expect((await s.call(method ?? 'PATCH', `${path}/${created._id}`, { ...update, contractId: 'bad' })).statusCode).toBe(400);
    const removed = await s.call('DELETE', `${path}/${created._id}`);
    expect(removed.statusCode, removed.body).toBe(204);

    const entries = await s.audit(`&resource=${resource}&id=${created._id}`);
    expect(entries.map((e) => e.action)).toEqual(['delete', 'update', 'create']);
    const [deleted, changed, made] = entries as [Entry, Entry, Entry];
    for (const entry of entries) {
      expect(entry).toMatchObject({ contractId: s.tenant.contract.id, resource, resourceId: created._id, consumer: { id: s.tenant.consumer.id, name: s.tenant.consumer.name } });
      expect(Date.parse(entry.date)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(made.before).toBeNull();
    expect(made.after).toEqual(created);
    expect(changed.before).toEqual(created);
    expect(changed.after).toEqual(updated.json());
    expect(changed.after[field]).not.toEqual(changed.before[field]);
    expect(deleted.before).toEqual(updated.json());
    expect(deleted.after).toBeNull();
    // Secrets are never recorded, not even masked elsewhere in the entry.
    expect(JSON.stringify(entries)).not.toContain(SECRET.slice(4, -4));
  });

  it("records the contract's filter change, and the operator's grants", async () => {
    const s = await setup();
    const set = await s.create('/collection/sets', s.bodies.set());
    const res = await s.call('PATCH', `/collection/contracts/${s.tenant.contract.id}`, { filterId: set._id });
    expect(res.statusCode, res.body).toBe(200);
    const [entry] = await s.audit('&resource=contract');
    expect(entry).toMatchObject({ action: 'update', resourceId: s.tenant.contract.id, after: { filterId: set._id } });
    expect(entry!.before.filterId).toBeUndefined();

    const newcomer = await buildClient(s.db, 'Newcomer');
    await grant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR);
    await grant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR); // a no-op: not recorded again
    await revokeGrant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR);
    const grants = await s.audit('&resource=grant');
    expect(grants.map((e) => [e.action, e.resourceId, e.consumer])).toEqual([
      ['delete', newcomer.consumer.id, { id: null, name: 'operator' }],
      ['create', newcomer.consumer.id, { id: null, name: 'operator' }],
    ]);
  });

  it('records a grant with its role and a role change with the roles before and after (docs/api.md#roles-and-scopes)', async () => {
    const s = await setup();
    const newcomer = await buildClient(s.db, 'Newcomer');
    expect(await grant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR, 'viewer')).toBe('created');
    expect(await grant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR, 'viewer')).toBe('unchanged');
    expect(await grant(s.db, newcomer.consumer.id, s.tenant.contract.id, OPERATOR, 'editor')).toBe('updated');
    const [update, create, ...rest] = await s.audit('&resource=grant');
    expect(rest).toEqual([]);
    const ids = { consumerId: newcomer.consumer.id, contractId: s.tenant.contract.id };
    expect(create).toMatchObject({ action: 'create', resourceId: newcomer.consumer.id, after: { ...ids, role: 'viewer' } });
    expect(update).toMatchObject({ action: 'update', resourceId: newcomer.consumer.id, before: { ...ids, role: 'viewer' }, after: { ...ids, role: 'editor' } });
  });
});

describe('GET /collection/audit', () => {
  it('filters by resource, id, consumer, action and time, and pages by cursor with a Link to the next page', async () => {
    const s = await setup();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await s.create('/collection/lists', s.bodies.list({ name: `List ${i}` })));
    const all = await s.audit();
    expect(all.map((e) => e.resourceId)).toEqual(made.map((m) => m._id).reverse());

    const first = await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&count=2&action=create`);
    expect(first.json().map((e: Entry) => e.resourceId)).toEqual([made[4]._id, made[3]._id]);
    const link = String(first.headers.link);
    expect(link).toMatch(/^<\/collection\/audit\?.*cursor=[0-9a-f]{24}.*>; rel="next"$/);
    const next = await s.call('GET', link.slice(1, link.indexOf('>')));
    expect(next.json().map((e: Entry) => e.resourceId)).toEqual([made[2]._id, made[1]._id]);
    const last = await s.audit(`&count=2&cursor=${next.json()[1]._id}`);
    expect(last.map((e) => e.resourceId)).toEqual([made[0]._id]);

    expect(await s.audit(`&consumer=${s.other.consumer.id}`)).toEqual([]);
    expect(await s.audit(`&consumer=${s.tenant.consumer.id}`)).toHaveLength(5);
    expect(await s.audit('&action=delete')).toEqual([]);
    expect(await s.audit('&resource=set')).toEqual([]);
    expect(await s.audit(`&until=${Math.floor(Date.now() / 1000) - 3600}`)).toEqual([]);
    expect(await s.audit(`&since=${Math.floor(Date.now() / 1000) - 3600}`)).toHaveLength(5);
  });

  it("is contract-isolated: another contract's token gets 403 without data; hostile parameters get 400 naming them", async () => {
    const s = await setup();
    await s.create('/collection/lists', s.bodies.list());
    const foreign = await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}`, undefined, s.other.token);
    const body = expectError(foreign, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract_id' });
    expect(JSON.stringify(body)).not.toContain('Bad words');
    // The other contract's own trail does not show this one's entries.
    const theirs = await s.call('GET', `/collection/audit?contract_id=${s.other.contract.id}`, undefined, s.other.token);
    expect(theirs.json()).toEqual([]);
    expectError(await s.call('GET', '/collection/audit'), 400, { name: 'ValidationError', code: 1001, propertyName: 'contract_id' });
    expectError(await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&cursor=x' OR 1=1`), 400, { name: 'ValidationError', code: 1005, propertyName: 'cursor' });
    expectError(await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&action=drop`), 400, { name: 'ValidationError', code: 1004, propertyName: 'action' });
    expectError(await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&count=101`), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
    expectError(await s.app.inject({ method: 'GET', url: `/collection/audit?contract_id=${s.tenant.contract.id}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });
});

describe('moderation: audit, history and revert', () => {
  async function seeded() {
    const s = await setup();
    await seedItems(s.db, s.tenant, ['rss_a', 'rss_b', 'rss_c'].map((id) => buildItem({ id })));
    await seedItems(s.db, s.tenant, [buildItem({ id: 'rss_d' })], 'unpublished');
    return s;
  }

  it('records a single moderation and reverts it; the revert is recorded, pointing at it, and cannot run twice', async () => {
    const s = await seeded();
    expect((await s.moderate('&id=rss_a', { state: 'unpublished' })).statusCode).toBe(200);
    const [entry] = await s.audit('&resource=item');
    expect(entry).toMatchObject({
      action: 'moderate',
      resourceId: 'rss_a',
      collectionId: s.tenant.collection.id,
      itemCount: 1,
      before: { items: [{ id: 'rss_a', state: 'published' }] },
      after: { items: [{ id: 'rss_a', state: 'unpublished' }] },
    });
    const reverted = await s.revert(entry!._id);
    expect(reverted.statusCode, reverted.body).toBe(201);
    expect(reverted.json()).toMatchObject({ action: 'revert', reverts: entry!._id, after: { items: [{ id: 'rss_a', state: 'published' }] } });
    expect((await s.states()).rss_a).toBe('published');
    const [revertEntry, original] = await s.audit('&resource=item');
    expect(revertEntry!._id).toBe(reverted.json()._id);
    expect(original!.revertedBy).toBe(revertEntry!._id);
    expectError(await s.revert(entry!._id), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });

    const steps = await s.history('rss_a');
    expect(steps.statusCode, steps.body).toBe(200);
    expect(steps.json().map((step: Entry) => [step.action, step.before, step.after, step.consumer.name])).toEqual([
      ['revert', 'unpublished', 'published', s.tenant.consumer.name],
      ['moderate', 'published', 'unpublished', s.tenant.consumer.name],
    ]);
    expect((await s.history('rss_b')).json()).toEqual([]);
  });

  it('a bulk moderation is one entry, reverted as one; a bulk with an unknown id records nothing', async () => {
    const s = await seeded();
    expect((await s.moderate('', { state: 'unpublished', ids: ['rss_a', 'rss_zzz'] })).statusCode).toBe(404);
    expect(await s.audit('&resource=item')).toEqual([]);
    expect((await s.moderate('', { state: 'published', ids: ['rss_a', 'rss_b', 'rss_d'] })).statusCode).toBe(200);
    const entries = await s.audit('&resource=item');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'moderate', resourceId: s.tenant.collection.id, itemCount: 3 });
    expect(entries[0]!.before.items).toEqual([
      { id: 'rss_a', state: 'published' },
      { id: 'rss_b', state: 'published' },
      { id: 'rss_d', state: 'unpublished' },
    ]);
    expect((await s.revert(entries[0]!._id)).statusCode).toBe(201);
    expect(await s.states()).toEqual({ rss_a: 'published', rss_b: 'published', rss_c: 'published', rss_d: 'unpublished' });
  });

  it('refuses (409 naming the item) to revert an entry whose item was moderated since, changing nothing', async () => {
    const s = await seeded();
    await s.moderate('', { state: 'unpublished', ids: ['rss_a', 'rss_b'] });
    const [bulk] = await s.audit('&resource=item');
    await s.moderate('&id=rss_b', { state: 'published' });
    const refused = expectError(await s.revert(bulk!._id), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(refused.errors[0]!.propertyValue).toBe('rss_b');
    expect(await s.states()).toMatchObject({ rss_a: 'unpublished', rss_b: 'published' });
    expect(await s.audit('&action=revert')).toEqual([]);
  });

  it('rejects reverting what is not a moderation (400), unknown (404), malformed (400) or foreign (403) entries', async () => {
    const s = await seeded();
    const list = await s.create('/collection/lists', s.bodies.list());
    const [created] = await s.audit('&resource=list');
    expectError(await s.revert(created!._id), 400, { name: 'ValidationError', code: 1004, propertyName: 'id' });
    expectError(await s.revert('0'.repeat(24)), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await s.revert('not-an-id'), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
    await s.moderate('&id=rss_a', { state: 'unpublished' });
    const [moderation] = await s.audit('&resource=item');
    const foreign = expectError(await s.revert(moderation!._id, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(foreign)).not.toContain('rss_a');
    expect((await s.states()).rss_a).toBe('unpublished');
    expect(list._id).toBe(created!.resourceId);
  });

  it('records a split of a duplicate, which is not revertable', async () => {
    const s = await setup();
    await s.db.updateTable('collections').set({ dedupe: 'url' }).where('id', '=', s.tenant.collection.id).execute();
    await seedItems(s.db, s.tenant, [buildItem({ id: 'rss_card', url: 'https://example.com/story' })]);
    await seedItems(s.db, s.tenant, [buildItem({ id: 'rss_copy', url: 'https://example.com/story' })]);
    const split = await s.call('POST', `/v1/queue/${s.tenant.contract.slug}/split?q=${s.tenant.collection.slug}&id=rss_card`, { duplicateId: 'rss_copy' });
    expect(split.statusCode, split.body).toBe(200);
    const [entry] = await s.audit('&action=split');
    expect(entry).toMatchObject({ resource: 'item', resourceId: 'rss_card', before: { id: 'rss_card', duplicateId: 'rss_copy' }, after: { splitId: 'rss_copy', state: 'published' } });
    expectError(await s.revert(entry!._id), 400, { name: 'ValidationError', code: 1004, propertyName: 'id' });
  });

  it("history: another contract's token → 403, an unknown item → 404, an unknown collection → 404", async () => {
    const s = await seeded();
    const slug = s.tenant.contract.slug;
    expectError(await s.history('rss_a', s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expectError(await s.history('rss_nope'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await s.call('GET', `/v1/queue/${slug}/history?q=nope&id=rss_a`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    expectError(await s.call('GET', `/v1/queue/${slug}/history?q=${s.tenant.collection.slug}`), 400, { name: 'ValidationError', code: 1001, propertyName: 'id' });
  });
});
