/**
 * `GET /v1/content/{contract}/stream` (issue 6): Server-Sent Events of newly published items,
 * read by a streaming HTTP client from a real server on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { connect } from './sse.ts';

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/v1/content/${tenant.contract.slug}/stream?q=${tenant.collection.slug}`;
  const moderate = (id: string, state: string) =>
    ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${id}&access_token=${tenant.token}`, payload: { state } });
  return { ...ctx, tenant, url, moderate };
}

describe('GET /v1/content/{contract}/stream', () => {
  it('announces new published items and moderations, not unpublished arrivals', { timeout: 20_000 }, async () => {
    const { db, tenant, url, moderate } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_before' })]);
    await seedItems(db, tenant, [buildItem({ id: 'rss_waiting' })], 'unpublished');
    const stream = await connect(url);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.res.headers.get('cache-control')).toBe('no-store');

    // Stored by the collector (through the database only, as another process would).
    await seedItems(db, tenant, [buildItem({ id: 'rss_new', title: 'Fresh' })]);
    const [first] = await stream.until(1);
    expect(first!.event).toBe('item');
    expect(JSON.parse(first!.data)).toMatchObject({ id: 'rss_new', title: 'Fresh', state: 'published' });

    await seedItems(db, tenant, [buildItem({ id: 'rss_hidden' })], 'unpublished');
    expect((await moderate('rss_waiting', 'published')).statusCode).toBe(200);
    expect((await moderate('rss_before', 'unpublished')).statusCode).toBe(200);
    const events = await stream.until(3);
    expect(events.slice(1).map((e) => [e.event, JSON.parse(e.data).id])).toEqual([
      ['item', 'rss_waiting'],
      ['unpublished', 'rss_before'],
    ]);
    expect(stream.events.some((e) => e.data.includes('rss_hidden'))).toBe(false);
    // Event ids are increasing collection versions.
    const versions = events.map((e) => Number(e.id));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    await stream.close();
  });

  it('sends what a reconnecting client missed after its Last-Event-ID', { timeout: 20_000 }, async () => {
    const { db, tenant, url } = await setup();
    const first = await connect(url);
    await seedItems(db, tenant, [buildItem({ id: 'rss_a' })]);
    const [a] = await first.until(1);
    await first.close();
    await seedItems(db, tenant, [buildItem({ id: 'rss_b' })]);
    await seedItems(db, tenant, [buildItem({ id: 'rss_c' })]);
    // A subscriber keeps the poller's cursor ahead, so the missed items are older than it.
    const other = await connect(url);
    await seedItems(db, tenant, [buildItem({ id: 'rss_d' })]);
    await other.until(1);
    const again = await connect(url, { 'last-event-id': a!.id! });
    const missed = await again.until(3);
    expect(missed.map((e) => JSON.parse(e.data).id)).toEqual(['rss_b', 'rss_c', 'rss_d']);
    await other.close();
    await again.close();
  });

  it('answers like the content endpoint for unknown contracts and collections and a missing q', async () => {
    const { app, tenant } = await setup();
    expectError(await app.inject({ method: 'GET', url: `/v1/content/nobody/stream?q=${tenant.collection.slug}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
    expectError(await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}/stream?q=nothing` }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    expectError(await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}/stream` }), 400, { name: 'ValidationError', code: 1001, propertyName: 'q' });
  });
});
