/**
 * Undo of a moderation by the id its answer names (issue 33 point 3; docs/api.md#moderation,
 * #revert), through HTTP on a real database: the `Audit-Id` header of `PATCH /v1/queue/{contract}`
 * names the entries the moderation recorded (one for a bulk, one per aspect for state + pin +
 * edit, none when nothing was recorded), and reverting them undoes exactly that moderation.
 * Hostile beside it: the id does not let another contract's token revert it, a refused
 * moderation names no entry, and an undo after a later change is refused with the item named.
 */
import { describe, expect, it } from 'vitest';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

async function setup() {
  const s = await setupRecords();
  const ids = Array.from({ length: 12 }, (_, i) => `rss_${String(i).padStart(2, '0')}`);
  await seedItems(s.db, s.tenant, ids.map((id) => buildItem({ id })));
  const slug = s.tenant.contract.slug;
  const q = s.tenant.collection.slug;
  const moderate = (query: string, body: unknown, token = s.tenant.token) => s.call('PATCH', `/v1/queue/${slug}?q=${q}${query}`, body, token);
  const revert = (id: string, token = s.tenant.token) => s.call('POST', `/collection/audit/${id}/revert`, undefined, token);
  const states = async () => {
    const res = await s.call('GET', `/v1/queue/${slug}?q=${q}&since=0`);
    return Object.fromEntries((res.json() as { id: string; state: string }[]).map((item) => [item.id, item.state]));
  };
  /** The published items as the public content API shows them. */
  const published = async () => {
    const res = await s.app.inject({ method: 'GET', url: `/v1/content/${slug}?q=${q}&since=0&count=100` });
    return (res.json() as { id: string }[]).map((item) => item.id).sort();
  };
  const auditIds = (res: { headers: Record<string, unknown> }) => String(res.headers['audit-id'] ?? '').split(',').map((id) => id.trim()).filter(Boolean);
  return { ...s, ids, moderate, revert, states, published, auditIds };
}

describe('the moderation answer names its audit entries (Audit-Id)', () => {
  it('a bulk unpublish of 12 names its one entry; reverting it publishes all 12 again', async () => {
    const s = await setup();
    const res = await s.moderate('', { state: 'unpublished', ids: s.ids });
    expect(res.statusCode, res.body).toBe(200);
    const [id, ...rest] = s.auditIds(res);
    expect(rest).toEqual([]);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(await s.published()).toEqual([]);
    const reverted = await s.revert(id!);
    expect(reverted.statusCode, reverted.body).toBe(201);
    expect(reverted.json()).toMatchObject({ action: 'revert', reverts: id, itemCount: 12 });
    expect(await s.published()).toEqual(s.ids);
  });

  it('a single moderation names its entry; state, pin and edit in one request name three, in that order, each reverted alone', async () => {
    const s = await setup();
    const one = await s.moderate('&id=rss_00', { state: 'unpublished' });
    expect(one.statusCode, one.body).toBe(200);
    const [moderation] = s.auditIds(one);
    expect((await s.revert(moderation!)).statusCode).toBe(201);
    expect((await s.states()).rss_00).toBe('published');

    const three = await s.moderate('&id=rss_01', { state: 'unpublished', pinned: true, edit: { title: 'Corrected' } });
    expect(three.statusCode, three.body).toBe(200);
    const ids = s.auditIds(three);
    expect(ids).toHaveLength(3);
    const entries = await Promise.all(ids.map(async (id) => (await s.call('GET', `/collection/audit?contract_id=${s.tenant.contract.id}&resource=item&count=100`)).json().find((e: { _id: string }) => e._id === id)));
    expect(entries.map((entry) => entry.action)).toEqual(['moderate', 'pin', 'edit']);
    // Undo in the reverse order: the edit, the pin, the state.
    for (const id of ids.reverse()) expect((await s.revert(id)).statusCode).toBe(201);
    const [item] = (await s.call('GET', `/v1/queue/${s.tenant.contract.slug}?q=${s.tenant.collection.slug}&since=0&pinned=true`)).json();
    expect(item).toBeUndefined();
    expect((await s.states()).rss_01).toBe('published');
  });

  it('names nothing when nothing was recorded (a pin of a pinned item); a refused moderation names nothing', async () => {
    const s = await setup();
    expect(s.auditIds(await s.moderate('&id=rss_02', { pinned: true }))).toHaveLength(1);
    const again = await s.moderate('&id=rss_02', { pinned: true });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['audit-id']).toBeUndefined();
    const unknown = await s.moderate('', { state: 'unpublished', ids: ['rss_00', 'rss_nope'] });
    expectError(unknown, 404, { name: 'NotFoundError', code: 4001, propertyName: 'ids' });
    expect(unknown.headers['audit-id']).toBeUndefined();
  });

  it('the OpenAPI description names the header on the 200 answer', async () => {
    const s = await setup();
    const doc = (await s.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/queue/{contract}'].patch.responses['200'].headers['Audit-Id']).toMatchObject({ schema: { type: 'string' } });
  });

  it("hostile: another contract's token cannot undo by the named id (403, nothing changed); an undo after a later change → 409 naming the item", async () => {
    const s = await setup();
    const res = await s.moderate('', { state: 'unpublished', ids: s.ids });
    const [id] = s.auditIds(res);
    expectError(await s.revert(id!, s.other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(await s.published()).toEqual([]);
    await s.moderate('&id=rss_05', { state: 'published' });
    const refused = expectError(await s.revert(id!), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    expect(refused.errors[0]!.propertyValue).toBe('rss_05');
    expect(await s.published()).toEqual(['rss_05']);
  });
});
