/**
 * Outbound webhooks (docs/api.md#webhooks) through HTTP on a real database, delivered by the
 * delivery worker (src/collect/deliver.ts) to a receiver started by the test that verifies every
 * signature with the `standardwebhooks` package: CRUD with the secret shown once, validation,
 * isolation between contracts; every event type once, in order per item; retries after a 500 and
 * a timeout; no delivery to a private address unless allowed; a webhook disabled when its retries
 * run out, re-enabled and a delivery re-sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryWorker, startDelivery } from '../../src/collect/deliver.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import type { Config } from '../../src/config.ts';
import { fakeApi, fixtureBytes } from '../fake-api.ts';
import { build, buildItem, buildTenant, expectError, seedItems, type TestContext } from '../helper.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;
const ALL = ['item.collected', 'item.published', 'item.unpublished', 'item.rejected', 'input.failed', 'input.recovered', 'credential.failed'];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  closers.push(() => started.close());
  return started;
}

function worker(ctx: TestContext, config: Config = ctx.config): DeliveryWorker {
  const started = startDelivery({ db: ctx.db, config }, 3_600_000);
  closers.push(() => started.stop());
  return started;
}

/** Runs delivery rounds until `done` holds (at most 300 rounds, 25 ms apart). */
async function deliverUntil(delivery: DeliveryWorker, done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let round = 0; round < 300; round++) {
    await delivery.tick();
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Waits (at most 10 s, looking every 25 ms) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!done()) throw new Error('gave up waiting');
}

/** Creates a webhook posting to `receiver.url + path`; registers its secret with the receiver. */
async function createWebhook(ctx: TestContext, tenant: Tenant, to: Receiver, path: string, events = ALL, name = 'Integrator') {
  const res = await call(ctx, tenant, 'POST', '/collection/webhooks', { name, contractId: tenant.contract.id, url: `${to.url}${path}`, events });
  expect(res.statusCode, res.body).toBe(201);
  const webhook = res.json();
  to.secrets.set(path, webhook.secret);
  return webhook;
}

const moderate = (ctx: TestContext, tenant: Tenant, id: string, state: string) =>
  call(ctx, tenant, 'PATCH', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${encodeURIComponent(id)}`, { state });

describe('webhooks: records', () => {
  it('creates one with its secret shown once, never returned again nor stored in the clear', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db);
    const created = await call(ctx, tenant, 'POST', '/collection/webhooks', { name: 'CRM', contractId: tenant.contract.id, url: 'http://127.0.0.1:9/hook', events: ['item.published'] });
    expect(created.statusCode, created.body).toBe(201);
    const webhook = created.json();
    expect(webhook).toMatchObject({ name: 'CRM', contractId: tenant.contract.id, url: 'http://127.0.0.1:9/hook', events: ['item.published'], active: true, disabledReason: null, disabledAt: null, createdBy: tenant.consumer.name });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);

    const reads = [
      await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}`),
      await call(ctx, tenant, 'GET', `/collection/webhooks?contract_id=${tenant.contract.id}`),
      await call(ctx, tenant, 'PATCH', `/collection/webhooks/${webhook._id}`, { events: ['item.published', 'item.unpublished'], active: false }),
    ];
    for (const res of reads) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain(webhook.secret.slice(6));
      expect(res.body).not.toContain('"secret"');
    }
    expect(reads[2]!.json()).toMatchObject({ events: ['item.published', 'item.unpublished'], active: false });
    const row = await ctx.db.selectFrom('webhooks').selectAll().where('id', '=', webhook._id).executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(webhook.secret.slice(6));

    expect((await call(ctx, tenant, 'DELETE', `/collection/webhooks/${webhook._id}`)).statusCode).toBe(204);
    expect((await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}`)).statusCode).toBe(404);
  });

  it('refuses bad input naming the property, and private addresses unless allowed', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const body = (over: Record<string, unknown>) => ({ name: 'CRM', contractId: tenant.contract.id, url: 'https://hooks.example.com/in', events: ['item.collected'], ...over });
    const post = (over: Record<string, unknown>) => call(ctx, tenant, 'POST', '/collection/webhooks', body(over));
    expectError(await post({ events: ['item.exploded'] }), 400, { name: 'ValidationError', code: 1004, propertyName: 'events[0]' });
    expectError(await post({ events: [] }), 400, { name: 'ValidationError', code: 1003, propertyName: 'events' });
    expectError(await post({ url: undefined }), 400, { name: 'ValidationError', code: 1001, propertyName: 'url' });
    for (const url of ['ftp://hooks.example.com/', 'not a url', 'https://user:pw@hooks.example.com/', 'http://127.0.0.1:8080/', 'http://10.1.2.3/', 'http://[::1]/', 'http://169.254.169.254/', 'http://localhost:1/']) {
      expectError(await post({ url }), 400, { name: 'ValidationError', code: 1005, propertyName: 'url' });
    }
    const created = await post({});
    expect(created.statusCode, created.body).toBe(201);
    expectError(await call(ctx, tenant, 'PATCH', `/collection/webhooks/${created.json()._id}`, { url: 'http://192.168.1.1/' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'url' });
    expectError(await call(ctx, tenant, 'PATCH', `/collection/webhooks/${created.json()._id}`, { events: ['item.collected', 'item.collected'] }), 400, { name: 'ValidationError', code: 1002, propertyName: 'events' });
  });

  it("answers another contract's token with 403 and none of the webhook's data", async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db);
    const other = await buildTenant(ctx.db, 'Other Corp');
    const to = await receiver();
    const webhook = await createWebhook(ctx, tenant, to, '/mine', ['item.published']);
    const [item] = [buildItem({ id: 'rss_isolated' })];
    await seedItems(ctx.db, tenant, [item!], 'unpublished');
    await moderate(ctx, tenant, item!.id, 'published');
    const delivery = worker(ctx);
    await deliverUntil(delivery, () => to.delivered().length === 1, 'the delivery');
    const [mine] = (await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}/deliveries`)).json();

    const byId = [
      await call(ctx, other, 'GET', `/collection/webhooks/${webhook._id}`),
      await call(ctx, other, 'PATCH', `/collection/webhooks/${webhook._id}`, { active: false }),
      await call(ctx, other, 'DELETE', `/collection/webhooks/${webhook._id}`),
      await call(ctx, other, 'GET', `/collection/webhooks/${webhook._id}/deliveries`),
      await call(ctx, other, 'POST', `/collection/webhooks/${webhook._id}/deliveries/${mine._id}/resend`),
    ];
    for (const res of byId) {
      const error = expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
      for (const secretive of [webhook.url, mine.eventId, tenant.contract.id, 'rss_isolated']) expect(JSON.stringify(error)).not.toContain(secretive);
    }
    // Naming the contract itself: 403 with nothing but what the caller sent.
    for (const res of [
      await call(ctx, other, 'GET', `/collection/webhooks?contract_id=${tenant.contract.id}`),
      await call(ctx, other, 'POST', '/collection/webhooks', { name: 'Spy', contractId: tenant.contract.id, url: 'https://spy.example.com/', events: ALL }),
    ]) {
      expect(expectError(res, 403, { name: 'ForbiddenError', code: 3001 }).errors.map((e) => e.message).join()).not.toContain(webhook.url);
    }
    expect((await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}`)).json().active).toBe(true);
    // Its own webhook sees nothing of the other contract's events.
    const theirs = await createWebhook(ctx, other, to, '/theirs', ALL);
    await moderate(ctx, tenant, item!.id, 'unpublished');
    await moderate(ctx, tenant, item!.id, 'published');
    await deliverUntil(delivery, () => to.delivered('/mine').length === 2, 'the second delivery');
    expect(to.received.filter((r) => r.path === '/theirs')).toEqual([]);
    expect((await call(ctx, other, 'GET', `/collection/webhooks/${theirs._id}/deliveries`)).json()).toEqual([]);
    expectError(await call(ctx, tenant, 'POST', `/collection/webhooks/${webhook._id}/deliveries/${'0'.repeat(24)}/resend`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'deliveryId' });
  });
});

describe('webhooks: events and delivery', () => {
  it('delivers every event type once, signed, in order per item and input', async () => {
    const tweets = () => ({ body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } });
    const api = await fakeApi(tweets);
    closers.push(() => api.close());
    const ctx = await build({ TWITTER_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true' });
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    closers.push(() => collector.stop());
    const poll = async () => {
      await collector.tick();
      await collector.idle();
    };
    const tenant = await buildTenant(ctx.db);
    const other = await buildTenant(ctx.db, 'Other Corp');
    const to = await receiver();
    await createWebhook(ctx, tenant, to, '/all');
    await createWebhook(ctx, other, to, '/other');

    const credential = (await call(ctx, tenant, 'POST', '/collection/credentials', { name: 'X', contractId: tenant.contract.id, service: 'twitter', bearerToken: 'AAAA-token-for-webhooks-1' })).json();
    const rejectOne = { operator: 'equals', field: 'id', value: 'twitter_1275763727908798470' };
    const set = (await call(ctx, tenant, 'POST', '/collection/sets', { name: 'Not that one', contractId: tenant.contract.id, rules: [rejectOne], preCondition: { operator: 'exists', field: 'id' } })).json();
    const keyword = { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'twitter', type: 'keyword', input: 'news', filterId: set._id, display: true };
    const input = (await call(ctx, tenant, 'POST', '/collection/inputs', keyword)).json();
    await poll(); // 3 collected and published at once, 1 rejected
    const kept = 'twitter_1276035977375477760';
    expect((await moderate(ctx, tenant, kept, 'unpublished')).statusCode).toBe(200);
    expect((await moderate(ctx, tenant, kept, 'unpublished')).statusCode).toBe(200); // no change: no event

    api.respond = () => ({ status: 401, body: { title: 'Unauthorized', detail: 'Unauthorized', type: 'about:blank', status: 401 } });
    await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, { ...keyword, input: 'other news' });
    await poll(); // the credential and the input fail
    api.respond = tweets;
    await call(ctx, tenant, 'PATCH', `/collection/credentials/${credential._id}`, { bearerToken: 'AAAA-renewed-token-00002' });
    await poll(); // the input recovers; nothing new to collect

    const delivery = worker(ctx);
    const expected = 3 * 2 + 1 + 1 + 1 + 1 + 1;
    await deliverUntil(delivery, () => to.delivered('/all').length >= expected, `${expected} deliveries`);
    await delivery.tick();
    const got = to.received.filter((r) => r.path === '/all');
    expect(got.length).toBe(expected);
    expect(got.every((r) => r.event !== undefined), 'every signature verifies').toBe(true);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(expected);
    const types = got.map((r) => r.event!.type);
    expect([...types].sort()).toEqual([...['item.collected', 'item.published'].flatMap((t) => [t, t, t]), 'item.unpublished', 'item.rejected', 'credential.failed', 'input.failed', 'input.recovered'].sort());
    expect(to.received.filter((r) => r.path === '/other')).toEqual([]);

    const events = got.map((r) => r.event!);
    const ofItem = (id: string) => events.filter((e) => e.data.itemId === id || e.data.item?.id === id).map((e) => e.type);
    expect(ofItem(kept)).toEqual(['item.collected', 'item.published', 'item.unpublished']);
    expect(ofItem('twitter_1275763727908798470')).toEqual(['item.rejected']);
    expect(events.filter((e) => e.type.startsWith('input.')).map((e) => e.type)).toEqual(['input.failed', 'input.recovered']);
    const collected = events.find((e) => e.type === 'item.collected' && e.data.item.id === kept)!;
    expect(collected.data).toMatchObject({ contractId: tenant.contract.id, collectionId: tenant.collection.id, inputId: input._id, item: { id: kept, service: 'twitter', state: 'published' } });
    expect(events.find((e) => e.type === 'item.rejected')!.data).toMatchObject({ itemId: 'twitter_1275763727908798470', setId: set._id, rule: 0 });
    expect(events.find((e) => e.type === 'credential.failed')!.data).toMatchObject({ credentialId: credential._id, service: 'twitter', error: expect.stringContaining('401') });
    expect(events.find((e) => e.type === 'input.failed')!.data).toMatchObject({ inputId: input._id, error: expect.stringContaining('401'), failures: 1 });
    for (const r of got) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(1_700_000_000);
      expect(Date.parse(r.event!.timestamp)).not.toBeNaN();
    }
  });

  it('retries after a 500 and after a timeout with the same webhook-id, and holds the item’s next event until then', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_RETRY_MS: '20', WEBHOOK_TIMEOUT_MS: '300' });
    const tenant = await buildTenant(ctx.db);
    const to = await receiver();
    to.answer = ({ index }) => (index === 0 ? 500 : index === 1 ? 'hang' : 200);
    const webhook = await createWebhook(ctx, tenant, to, '/flaky', ['item.published', 'item.unpublished']);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_flaky' })], 'unpublished');
    await moderate(ctx, tenant, 'rss_flaky', 'published');
    await moderate(ctx, tenant, 'rss_flaky', 'unpublished');
    const delivery = worker(ctx);
    await deliverUntil(delivery, () => to.delivered().length === 2, 'both events');
    expect(to.received.map((r) => [r.event?.type, r.answered])).toEqual([
      ['item.published', 500],
      ['item.published', 'hang'],
      ['item.published', 200],
      ['item.unpublished', 200],
    ]);
    expect(new Set(to.received.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1);

    const deliveries = (await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}/deliveries`)).json();
    expect(deliveries.map((d: { type: string; status: string }) => [d.type, d.status])).toEqual([
      ['item.unpublished', 'delivered'],
      ['item.published', 'delivered'],
    ]);
    const published = deliveries[1];
    expect(published.eventId).toBe(to.received[0]!.headers['webhook-id']);
    expect(published.attempts).toMatchObject([
      { attempt: 1, statusCode: 500, error: null, response: 'try again later', nextAttempt: expect.any(String) },
      { attempt: 2, statusCode: null, error: expect.stringMatching(/timed out after 300 ms/), nextAttempt: expect.any(String) },
      { attempt: 3, statusCode: 200, error: null, response: 'thanks', nextAttempt: null },
    ]);
    for (const attempt of published.attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    expect(published.nextAttempt).toBeNull();
    expect(published.delivered).toEqual(expect.any(String));
  });

  it("keeps delivering to other webhooks while one receiver does not answer", async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_TIMEOUT_MS: '60000' });
    const tenant = await buildTenant(ctx.db);
    const to = await receiver();
    to.answer = ({ path }) => (path === '/slow' ? 'hang' : 200);
    const slow = await createWebhook(ctx, tenant, to, '/slow', ['item.published'], 'Slow');
    await createWebhook(ctx, tenant, to, '/fast', ['item.published'], 'Fast');
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_one' }), buildItem({ id: 'rss_two' })], 'unpublished');
    await moderate(ctx, tenant, 'rss_one', 'published');
    const delivery = startDelivery({ db: ctx.db, config: ctx.config }, 3_600_000);
    await until(() => to.received.some((r) => r.path === '/slow'));
    // Another event while the slow receiver holds its request: the fast one gets both.
    await moderate(ctx, tenant, 'rss_two', 'published');
    await until(() => to.delivered('/fast').length === 2);
    const held = (await call(ctx, tenant, 'GET', `/collection/webhooks/${slow._id}/deliveries`)).json();
    expect(held.length).toBeGreaterThanOrEqual(1);
    for (const delivery of held) expect(delivery).toMatchObject({ status: 'pending', attempts: [] });
    await to.close(); // the held request fails; the worker records it and stops
    await delivery.stop();
  });

  it("delivers another contract's event while one webhook's 200 events wait on a receiver that never answers", async () => {
    // The attack (issue 30 point 5): contract A's webhook points at a receiver that accepts
    // connections and never answers, with 200 events pending; contract B's webhook is healthy.
    // B's one event must go out while A's requests are still all held (none can time out within
    // the test: WEBHOOK_TIMEOUT_MS is a minute), and A holds no more than its own slots.
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_CONCURRENCY: '2' });
    const a = await buildTenant(ctx.db, 'Alpha');
    const b = await buildTenant(ctx.db, 'Bravo');
    const stuck = await receiver();
    stuck.answer = () => 'hang';
    const healthy = await receiver();
    const hookA = await createWebhook(ctx, a, stuck, '/a', ['item.published'], 'Stuck');
    await createWebhook(ctx, b, healthy, '/b', ['item.published'], 'Healthy');
    const itemsA = Array.from({ length: 200 }, (_, i) => buildItem({ id: `rss_a${i}` }));
    await seedItems(ctx.db, a, itemsA, 'unpublished');
    for (const item of itemsA) expect((await moderate(ctx, a, item.id, 'published')).statusCode).toBe(200);
    await seedItems(ctx.db, b, [buildItem({ id: 'rss_b' })], 'unpublished');

    const delivery = startDelivery({ db: ctx.db, config: ctx.config }, 3_600_000);
    try {
      await until(() => stuck.received.length >= 2);
      expect((await moderate(ctx, b, 'rss_b', 'published')).statusCode).toBe(200);
      await until(() => healthy.delivered('/b').length === 1);
      expect(healthy.delivered('/b')[0]!.event).toMatchObject({ type: 'item.published', data: { contractId: b.contract.id, itemId: 'rss_b' } });
      // A's deliveries are still all pending and unanswered: B did not wait for any of them.
      const held = (await call(ctx, a, 'GET', `/collection/webhooks/${hookA._id}/deliveries?count=500`)).json();
      expect(held.length).toBe(200);
      expect(held.filter((d: { status: string; attempts: unknown[] }) => d.status !== 'pending' || d.attempts.length > 0)).toEqual([]);
      // A holds its own slots (WEBHOOK_CONCURRENCY), not more.
      expect(stuck.received.length).toBe(2);
    } finally {
      await stuck.close(); // the held requests fail; the worker records them and stops
      await delivery.stop();
    }
  });

  it('does not deliver to a private address unless ALLOW_PRIVATE_FETCH', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_RETRY_MS: '20' });
    const tenant = await buildTenant(ctx.db);
    const to = await receiver();
    const webhook = await createWebhook(ctx, tenant, to, '/loopback', ['item.published']);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_guarded' })], 'unpublished');
    await moderate(ctx, tenant, 'rss_guarded', 'published');
    const deliveries = async () => (await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}/deliveries`)).json();

    const guarded = worker(ctx, { ...ctx.config, allowPrivateFetch: false });
    await deliverUntil(guarded, async () => (await deliveries())[0].attempts.length >= 2, 'two refused attempts');
    await guarded.stop();
    expect(to.received).toEqual([]);
    const [refused] = await deliveries();
    expect(refused.status).toBe('pending');
    expect(refused.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringContaining('not a public address') });

    const allowed = worker(ctx);
    await deliverUntil(allowed, () => to.delivered().length === 1, 'the delivery once allowed');
    expect((await deliveries())[0].status).toBe('delivered');
  });

  it('disables the webhook when its retries run out, says why, and delivers again once re-enabled and re-sent', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', WEBHOOK_RETRY_MS: '20', WEBHOOK_RETRY_WINDOW: '1' });
    const tenant = await buildTenant(ctx.db);
    const to = await receiver();
    to.answer = () => 503;
    const webhook = await createWebhook(ctx, tenant, to, '/down', ['item.published']);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_down' })], 'unpublished');
    await moderate(ctx, tenant, 'rss_down', 'published');
    const delivery = worker(ctx);
    const read = async () => (await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}`)).json();
    await deliverUntil(delivery, async () => (await read()).active === false, 'the webhook to be disabled');
    const disabled = await read();
    expect(disabled.disabledReason).toMatch(/HTTP 503/);
    expect(disabled.disabledAt).toEqual(expect.any(String));
    expect(to.received.length).toBeGreaterThanOrEqual(2);
    const [failed] = (await call(ctx, tenant, 'GET', `/collection/webhooks/${webhook._id}/deliveries`)).json();
    expect(failed.status).toBe('failed');
    expectError(await call(ctx, tenant, 'POST', `/collection/webhooks/${webhook._id}/deliveries/${failed._id}/resend`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });

    to.answer = () => 200;
    const enabled = (await call(ctx, tenant, 'PATCH', `/collection/webhooks/${webhook._id}`, { active: true })).json();
    expect(enabled).toMatchObject({ active: true, disabledReason: null, disabledAt: null });
    const resent = await call(ctx, tenant, 'POST', `/collection/webhooks/${webhook._id}/deliveries/${failed._id}/resend`);
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json()).toMatchObject({ _id: failed._id, status: 'pending' });
    await deliverUntil(delivery, () => to.delivered().length === 1, 'the re-sent delivery');
    expect(to.delivered()[0]!.headers['webhook-id']).toBe(to.received[0]!.headers['webhook-id']);
  });
});
