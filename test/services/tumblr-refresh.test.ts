// End to end through refreshInput with a real SQLite database: items land in the queue, a
// missing credential and a rate limit land in the input's status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeApi, fixtureJson } from '../fake-api.ts';
import { build, buildTenant, inputRow } from '../helper.ts';
import { loadConfig } from '../../src/config.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';

const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 1000 });
let api: Awaited<ReturnType<typeof fakeApi>>;
beforeAll(async () => {
  api = await fakeApi(() => ({ body: { meta: { status: 200 }, response: { posts: fixtureJson('tumblr', 'blog_likes_legacy_posts.json').liked_posts } } }));
});
afterAll(async () => {
  await api.close();
  await fetcher.close();
});

async function setUp() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/collection/inputs?access_token=${tenant.token}`,
    payload: { service: 'tumblr', type: 'user', input: 'sashalre', contractId: tenant.contract.id, collectionId: tenant.collection.id },
  });
  expect(res.statusCode).toBe(201);
  return { ctx, tenant, input: (await inputRow(ctx.db, res.json()._id))! };
}

describe('tumblr through refreshInput', () => {
  it('stores the posts in the queue and the cursor in the input', async () => {
    const { ctx, tenant, input } = await setUp();
    const services = loadConfig({ TUMBLR_API_URL: api.base, TUMBLR_API_KEY: 'k' }).services;
    expect(await refreshInput(ctx.db, input, { fetch: fetcher, services, pollInterval: 60 })).toBe(19);
    const after = (await inputRow(ctx.db, input.id))!;
    expect(after).toMatchObject({ collected: 19, lastError: null });
    expect(JSON.parse(after.sourceState)).toEqual({ since: 1445175093 });
    const queue = await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${tenant.token}`);
    expect(queue.json().map((i: { id: string }) => i.id)).toContain('tumblr_131232761410');
  });

  it('records a missing credential in the status and parks the input', async () => {
    const { ctx, tenant, input } = await setUp();
    const t0 = Date.now();
    await refreshInput(ctx.db, input, { fetch: fetcher, services: loadConfig({ TUMBLR_API_URL: api.base }).services, pollInterval: 60 });
    const res = await ctx.app.inject(`/collection/inputs/${input.id}?access_token=${tenant.token}`);
    expect(res.json().status.lastError).toBe('tumblr is not configured: set TUMBLR_API_KEY');
    expect((await inputRow(ctx.db, input.id))!.nextRunAt).toBeGreaterThan(t0 + 30 * 24 * 3600_000);
  });
});
