/**
 * A rejected item published anyway (issue 33 point 4; docs/api.md#rejections,
 * docs/filters.md#rejections), end to end: a real feed (test/fixtures/rss) served on 127.0.0.1,
 * an input whose filter rejects some of it, collected with `refreshInput`; then
 * `POST /collection/inputs/{id}/rejections/publish` puts one in the queue published, audited, and
 * neither a later poll nor a filter application (nor its dry-run count) rejects it again. The
 * attacks: another contract's input (403) and another input's rejection (404), a viewer (403),
 * publishing twice (404: no longer a rejection), a rejection recorded before items were kept (409).
 * And the stories the dry run names (title, date, input), and the apply's dry-run count.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { loadConfig } from '../../src/config.ts';
import { grant } from '../../src/store/contracts.ts';
import { build, buildClient, buildTenant, expectError, type TestContext, inputRow } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';

const feed = readFileSync(new URL('../fixtures/rss/guardian-rss2-media-content.rss', import.meta.url));
const services = loadConfig({}).services;
const fetcher = createFetcher({ allowPrivate: true });

let server: SourceServer;
let ctx: TestContext;
let tenant: Awaited<ReturnType<typeof buildTenant>>;
let other: Awaited<ReturnType<typeof buildTenant>>;

beforeAll(async () => {
  server = await startSourceServer((req) => (req.url === '/guardian' ? { status: 200, headers: { 'content-type': 'application/xml' }, body: feed } : { status: 404 }));
});
beforeEach(async () => {
  ctx = await build();
  tenant = await buildTenant(ctx.db);
  other = await buildTenant(ctx.db, 'Other News');
});
afterAll(async () => {
  await fetcher.close();
  await server.close();
});

type Json = Record<string, any>;

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, token = tenant.token) {
  const response = await ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${token}`, ...(payload ? { payload: payload as Json } : {}) });
  return { status: response.statusCode, body: response.body ? response.json() : undefined, response };
}

async function create(path: string, payload: Json, as = tenant): Promise<Json> {
  const { status, body } = await api('POST', path, { contractId: as.contract.id, ...payload }, as.token);
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

const poll = async (id: string) => refreshInput(ctx.db, (await inputRow(ctx.db, id))!, { fetch: fetcher, services, pollInterval: 300 });
const always = { operator: 'exists', field: 'id' };
/** Rejects the feed's items whose title mentions Trump (rule 0). */
const noTrump = { name: 'no Trump', preCondition: always, rules: [{ operator: 'pattern', field: 'title', value: '/trump/i' }] };

/** An input of `as` on the feed, governed by a fresh "no Trump" set, polled once. */
async function rejectingInput(as = tenant) {
  const set = await create('/collection/sets', noTrump, as);
  const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: as.collection.id, filterId: set._id }, as);
  await poll(input._id);
  return { set, input };
}

const queueIds = async () => ((await api('GET', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=200`)).body as Json[]).map((item) => `${item.id}:${item.state}`);

describe('POST /collection/inputs/{id}/rejections/publish', () => {
  it('publishes a rejected item: in the queue published, audited, not rejected again by a poll nor by applying the filter', async () => {
    const { set, input } = await rejectingInput();
    const rejections = (await api('GET', `/collection/inputs/${input._id}/rejections`)).body as Json[];
    expect(rejections.length).toBeGreaterThan(1);
    expect(rejections.every((r) => r.publishable === true)).toBe(true);
    const chosen = rejections[0]!;
    expect(await queueIds()).not.toContain(`${chosen.id}:published`);

    const published = await api('POST', `/collection/inputs/${input._id}/rejections/publish`, { itemId: chosen.id });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(published.body).toMatchObject({ id: chosen.id, collectionId: tenant.collection.id, state: 'published', auditId: expect.any(String) });
    expect(await queueIds()).toContain(`${chosen.id}:published`);
    const left = (await api('GET', `/collection/inputs/${input._id}/rejections`)).body as Json[];
    expect(left.map((r) => r.id)).not.toContain(chosen.id);
    expect(left).toHaveLength(rejections.length - 1);

    // Audited, and in the item's history.
    const [entry] = (await api('GET', `/collection/audit?contract_id=${tenant.contract.id}&action=publish-anyway`)).body as Json[];
    expect(entry).toMatchObject({ _id: published.body.auditId, resource: 'item', resourceId: chosen.id, collectionId: tenant.collection.id, consumer: { id: tenant.consumer.id } });
    expect(entry.before.rejection).toMatchObject({ set: { id: set._id, name: 'no Trump' }, rule: 0 });
    const history = (await api('GET', `/v1/queue/${tenant.contract.slug}/history?q=${tenant.collection.slug}&id=${encodeURIComponent(chosen.id)}`)).body as Json[];
    expect(history[0]).toMatchObject({ action: 'publish-anyway', before: 'rejected', after: 'published' });

    // Not reverted by the audit's revert (it is no moderation of a state): unpublishing is how.
    expectError((await api('POST', `/collection/audit/${published.body.auditId}/revert`)).response, 400, { name: 'ValidationError', code: 1004, propertyName: 'id' });

    // A later poll stores nothing, rejects nothing again.
    expect(await poll(input._id)).toBe(0);
    expect((await api('GET', `/collection/inputs/${input._id}/rejections`)).body).toHaveLength(rejections.length - 1);
    expect(await queueIds()).toContain(`${chosen.id}:published`);

    // Applying the same filter to the stored items leaves it alone: counted neither in the dry run nor the change.
    const body = { contractId: tenant.contract.id, filterId: set._id, collectionId: tenant.collection.id };
    const count = await api('POST', '/collection/filters/apply', { ...body, dryRun: true });
    expect(count.status, JSON.stringify(count.body)).toBe(200);
    expect(count.body).toMatchObject({ rejected: 0, unpublished: 0, wouldUnpublish: 0, auditId: null });
    const applied = await api('POST', '/collection/filters/apply', body);
    expect(applied.body).toMatchObject({ rejected: 0, unpublished: 0, auditId: null });
    expect(await queueIds()).toContain(`${chosen.id}:published`);

    // Publishing it twice: it is no longer a rejection.
    expectError((await api('POST', `/collection/inputs/${input._id}/rejections/publish`, { itemId: chosen.id })).response, 404, { name: 'NotFoundError', code: 4001, propertyName: 'itemId' });
  });

  it("refuses another contract's input (403), another input's rejection (404), a viewer (403), a rejection not kept (409), bad bodies (400)", async () => {
    const mine = await rejectingInput();
    const theirs = await rejectingInput(other);
    const [their] = (await api('GET', `/collection/inputs/${theirs.input._id}/rejections`, undefined, other.token)).body as Json[];
    const [own] = (await api('GET', `/collection/inputs/${mine.input._id}/rejections`)).body as Json[];
    const publish = (inputId: string, payload: unknown, token = tenant.token) => api('POST', `/collection/inputs/${inputId}/rejections/publish`, payload, token).then((r) => r.response);

    // Another contract's input; another contract's rejection under my input (its id is not my input's rejection).
    expectError(await publish(theirs.input._id, { itemId: their!.id }), 403, { name: 'ForbiddenError', code: 3001 });
    const ownInputOtherCollection = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian?x`, collectionId: tenant.collection.id });
    expectError(await publish(ownInputOtherCollection._id, { itemId: own!.id }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'itemId' });
    expectError(await publish(mine.input._id, { itemId: 'rss_never_rejected' }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'itemId' });

    // A viewer of the contract may read rejections, not publish them.
    const viewer = await buildClient(ctx.db, 'viewer');
    await grant(ctx.db, viewer.consumer.id, tenant.contract.id, undefined, 'viewer');
    expect((await api('GET', `/collection/inputs/${mine.input._id}/rejections`, undefined, viewer.token)).status).toBe(200);
    expectError(await publish(mine.input._id, { itemId: own!.id }, viewer.token), 403, { name: 'ForbiddenError', code: 3001 });

    // Bad bodies.
    expectError(await publish(mine.input._id, {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'itemId' });
    expectError(await publish(mine.input._id, { itemId: '' }), 400, { name: 'ValidationError', code: 1003, propertyName: 'itemId' });
    expectError(await publish('nope', { itemId: own!.id }), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });

    // A rejection recorded before rejected items were kept cannot be published (nothing to publish).
    await ctx.db.updateTable('rejections').set({ item: null }).where('inputId', '=', mine.input._id).where('itemId', '=', own!.id).execute();
    const listed = (await api('GET', `/collection/inputs/${mine.input._id}/rejections`)).body as Json[];
    expect(listed.find((r) => r.id === own!.id)).toMatchObject({ publishable: false });
    expectError(await publish(mine.input._id, { itemId: own!.id }), 409, { name: 'ConflictError', code: 4091, propertyName: 'itemId' });
    expect(await queueIds()).not.toContain(`${own!.id}:published`);
  });
});

describe('the dry run names the stories; apply counts before it changes', () => {
  it('results carry title (else the start of the text), date and input; dryRun counts and changes nothing', async () => {
    const { set, input } = await rejectingInput(tenant);
    // Accept everything at a second input of the same feed (forced: docs/api.md#inputs, duplicates),
    // so the collection holds the whole feed; the set then judges it.
    const open = await create('/collection/inputs?force=true', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id });
    await poll(open._id);
    const dry = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: set._id, collectionId: tenant.collection.id });
    expect(dry.status).toBe(200);
    const rejected = (dry.body.results as Json[]).filter((r) => !r.accepted);
    expect(rejected.length).toBeGreaterThan(1);
    for (const r of rejected) {
      expect(r.title).toMatch(/trump/i);
      expect(Date.parse(r.date)).not.toBeNaN();
      expect(r.inputId).toBe(open._id);
    }
    // Items sent in the body: no input; no title → the start of the text, tags removed.
    const sent = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: set._id, items: [{ id: 'x_1', text: `<p>Trump   said</p> ${'word '.repeat(40)}`, title: '' }] });
    expect(sent.body.results[0]).toMatchObject({ title: expect.stringMatching(/^Trump said word word .*…$/), date: null, inputId: null });
    expect(sent.body.results[0].title.length).toBeLessThanOrEqual(101);

    const before = (await queueIds()).filter((x) => x.endsWith(':published')).length;
    const body = { contractId: tenant.contract.id, filterId: set._id, collectionId: tenant.collection.id };
    const count = await api('POST', '/collection/filters/apply', { ...body, dryRun: true });
    expect(count.body).toEqual({ judged: expect.any(Number), rejected: rejected.length, held: 0, unpublished: 0, hits: expect.any(Array), auditId: null, wouldUnpublish: rejected.length });
    expect((await queueIds()).filter((x) => x.endsWith(':published'))).toHaveLength(before);
    expect((await api('GET', `/collection/audit?contract_id=${tenant.contract.id}&action=apply`)).body).toEqual([]);
    const applied = await api('POST', '/collection/filters/apply', body);
    expect(applied.body).toMatchObject({ unpublished: rejected.length, auditId: expect.any(String) });
    expect(applied.body).not.toHaveProperty('wouldUnpublish');
    expectError((await api('POST', '/collection/filters/apply', { ...body, dryRun: 'yes' })).response, 400, { name: 'ValidationError', code: 1002, propertyName: 'dryRun' });
    void input;
  });
});
