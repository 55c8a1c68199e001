/**
 * Publication analytics (issue 35 point 4, docs/api.md#analytics) through HTTP on a real
 * database: scripted views, impressions and clicks through the public beacon, flushed, read back
 * exactly from `GET /collection/analytics`; items collected and moderated counted from the
 * queue; and the attacks: another contract's and unknown item ids in a beacon are not counted, a
 * malformed or oversized beacon is refused naming the property (never a 500), nothing about the
 * visitor is stored (the table's rows hold no address, cookie or URL), a flood from one address
 * is answered 429, another contract's collection is refused.
 */
import { describe, expect, it } from 'vitest';
import { flushBeacons } from '../../src/publication/beacon.ts';
import { buildItem, expectError, seedItems } from '../helper.ts';
import { setupRecords } from './records.ts';

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

async function setup() {
  const ctx = await setupRecords();
  const { tenant, other, db } = ctx;
  await seedItems(db, tenant, [
    buildItem({ id: 'rss_a', title: 'Harbour festival', author: { name: 'Ann', username: 'ann', userid: null, url: null } }),
    buildItem({ id: 'rss_b', title: 'Council vote', author: { name: 'Ben', username: 'ben', userid: null, url: null } }),
    buildItem({ id: 'rss_c', title: 'Rain tonight', author: { name: 'Ann', username: 'ann', userid: null, url: null } }),
  ]);
  await seedItems(db, tenant, [buildItem({ id: 'rss_waiting' })], 'unpublished');
  await seedItems(db, other, [buildItem({ id: 'rss_theirs', author: { name: 'Mallory', username: 'mallory', userid: null, url: null } })]);
  const beacon = (body: unknown, { slug = tenant.contract.slug, type = 'text/plain;charset=UTF-8', ip = '203.0.113.7' } = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: `/v1/publication/${slug}/beacon`,
      headers: { 'content-type': type, cookie: 'visitor=tracking-me', 'user-agent': 'Secret-Agent/1.0' },
      remoteAddress: ip,
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const analytics = (query = '', token = tenant.token) => ctx.call('GET', `/collection/analytics?collection_id=${tenant.collection.id}&interval=hour${query}`, undefined, token);
  const totals = (res: { json: () => { series: Record<string, number>[] } }) => {
    const sum: Record<string, number> = {};
    for (const bucket of res.json().series) for (const [key, value] of Object.entries(bucket)) if (typeof value === 'number') sum[key] = (sum[key] ?? 0) + value;
    return sum;
  };
  return { ...ctx, beacon, analytics, totals, q: tenant.collection.slug };
}

describe('the beacon and GET /collection/analytics', () => {
  it('counts scripted views, impressions and clicks exactly, per origin, item and author', async () => {
    const { app, beacon, analytics, totals, q, tenant, call } = await setup();
    const sent = [
      { q, page: 'wall', view: true, origin: 'https://blog.example' },
      { q, page: 'wall', view: true, origin: 'https://blog.example/2026/12/wall?utm=1' },
      { q, page: 'wall', view: true },
      { q, page: 'display', view: true, origin: '' },
      { q, page: 'wall', impressions: ['rss_a', 'rss_b', 'rss_c', 'rss_a'], clicks: ['rss_a'] },
      { q, page: 'wall', impressions: ['rss_a', 'rss_b', 'rss_c'], clicks: ['rss_a', 'rss_b'] },
      { q, page: 'wall', clicks: ['rss_a'] },
    ];
    for (const body of sent) {
      const res = await beacon(body);
      expect(res.statusCode, res.body).toBe(204);
    }
    // Moderation: one item published, one taken off the wall.
    const moderate = (body: object) => call('PATCH', `/v1/queue/${tenant.contract.slug}?q=${q}`, body);
    expect((await moderate({ state: 'published', ids: ['rss_waiting'] })).statusCode).toBe(200);
    expect((await moderate({ state: 'unpublished', ids: ['rss_c'] })).statusCode).toBe(200);
    await flushBeacons(app);

    const res = await analytics();
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.collectionId).toBe(tenant.collection.id);
    expect(body.interval).toBe('hour');
    expect(totals(res)).toEqual({ wallViews: 3, displayViews: 1, impressions: 6, clicks: 4, collected: 4, published: 1, unpublished: 1, removed: 0 });
    expect(body.origins).toEqual([
      { page: 'wall', origin: 'https://blog.example', views: 2 },
      { page: 'display', origin: null, views: 1 },
      { page: 'wall', origin: null, views: 1 },
    ]);
    expect(body.topItems).toEqual([
      { id: 'rss_a', title: 'Harbour festival', author: 'Ann', clicks: 3, impressions: 2 },
      { id: 'rss_b', title: 'Council vote', author: 'Ben', clicks: 1, impressions: 2 },
    ]);
    expect(body.topAuthors).toEqual([
      { author: 'Ann', clicks: 3 },
      { author: 'Ben', clicks: 1 },
    ]);
    expect(body.sources).toEqual([{ inputId: '0'.repeat(24), service: null, input: null, total: 4, counts: body.series.map((b: { collected: number }) => b.collected) }]);

    // Flushing again adds nothing; a later beacon adds to the same hour's rows.
    await flushBeacons(app);
    expect((await beacon({ q, page: 'wall', clicks: ['rss_a'] })).statusCode).toBe(204);
    await flushBeacons(app);
    expect(totals(await analytics())).toMatchObject({ wallViews: 3, clicks: 5 });
    // Day buckets hold the same counts.
    expect(totals(await call('GET', `/collection/analytics?collection_id=${tenant.collection.id}&interval=day`))).toMatchObject({ wallViews: 3, impressions: 6, clicks: 5, collected: 4 });
  });

  it("ignores another contract's and unknown item ids, and stores nothing about the visitor", async () => {
    const { app, db, beacon, analytics, totals, q, other } = await setup();
    const res = await beacon({ q, page: 'wall', view: true, visitor: '203.0.113.7', origin: 'javascript:alert(1)', impressions: ['rss_theirs', 'rss_nothing'], clicks: ['rss_theirs', 'rss_nothing'] });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.headers['set-cookie']).toBeUndefined();
    await flushBeacons(app);
    expect(totals(await analytics())).toMatchObject({ wallViews: 1, impressions: 0, clicks: 0 });
    const rows = await db.selectFrom('analyticsCounts').selectAll().execute();
    expect(rows.map((r) => [r.kind, r.key, Number(r.count)])).toEqual([['wall-view', '', 1]]);
    expect(rows.every((r) => r.collectionId !== other.collection.id)).toBe(true);
    const stored = JSON.stringify(rows);
    for (const secret of ['203.0.113', 'tracking-me', 'Secret-Agent', 'javascript']) expect(stored).not.toContain(secret);
    // The other contract's own beacon for its item counts for it only.
    expect((await beacon({ q: other.collection.slug, page: 'wall', clicks: ['rss_theirs'] }, { slug: other.contract.slug })).statusCode).toBe(204);
    await flushBeacons(app);
    expect(totals(await analytics())).toMatchObject({ clicks: 0 });
  });

  it('refuses a malformed or oversized beacon naming the property, never a 500', async () => {
    const { beacon, q, tenant } = await setup();
    expectError(await beacon('{not json'), 400, v(1002, 'body'));
    expectError(await beacon({ page: 'wall' }), 400, v(1001, 'q'));
    expectError(await beacon({ q, page: 'screen' }), 400, v(1004, 'page'));
    expectError(await beacon({ q, page: 'wall', clicks: 'rss_a' }), 400, v(1002, 'clicks'));
    expectError(await beacon({ q, page: 'wall', impressions: Array.from({ length: 201 }, (_, i) => `id${i}`) }), 400, v(1003, 'impressions'));
    expectError(await beacon({ q, page: 'wall', clicks: ['x'.repeat(301)] }), 400, v(1003, 'clicks[0]'));
    expectError(await beacon({ q, page: 'wall', origin: 'x'.repeat(20_000) }), 413, v(1003, 'body'));
    expect((await beacon({ q: 'nothing', page: 'wall', view: true })).statusCode).toBe(404);
    expect((await beacon({ q, page: 'wall', view: true }, { slug: 'nobody' })).statusCode).toBe(401);
    expect((await beacon({ q, page: 'wall', view: true }, { type: 'application/json' })).statusCode).toBe(204);
    expect(tenant).toBeDefined();
  });

  it('answers 429 to a flood of beacons from one address, and still counts others', async () => {
    const { beacon, q, config } = await setup();
    for (let i = 0; i < config.rateLimitBeacon; i++) expect((await beacon({ q, page: 'wall' }, { ip: '198.51.100.9' })).statusCode).toBe(204);
    const refused = await beacon({ q, page: 'wall', view: true }, { ip: '198.51.100.9' });
    expectError(refused, 429, { name: 'RateLimitError', code: 4291 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await beacon({ q, page: 'wall', view: true }, { ip: '198.51.100.10' })).statusCode).toBe(204);
  });

  it('validates the range and interval naming the property, and refuses another contract', async () => {
    const { analytics, other, call, tenant } = await setup();
    expectError(await analytics('&from=2000&to=1000'), 400, v(1003, 'from'));
    expectError(await analytics(`&from=0&to=${93 * 86400}`), 400, v(1003, 'to'));
    expect((await analytics(`&from=0&to=${91 * 86400}`)).statusCode).toBe(200);
    const days = await call('GET', `/collection/analytics?collection_id=${tenant.collection.id}&interval=day&from=0&to=${730 * 86400}`);
    expect(days.statusCode, days.body).toBe(200);
    expect(days.json().series).toHaveLength(731);
    expectError(await call('GET', `/collection/analytics?collection_id=${tenant.collection.id}&interval=day&from=0&to=${731 * 86400}`), 400, v(1003, 'to'));
    expectError(await call('GET', `/collection/analytics?collection_id=${tenant.collection.id}&interval=week`), 400, v(1004, 'interval'));
    expectError(await call('GET', `/collection/analytics?collection_id=nope`), 400, v(1005, 'collection_id'));
    expectError(await analytics('', other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collection_id' });
    expectError(await call('GET', '/collection/analytics?collection_id=0123456789abcdef01234567'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collection_id' });
  });
});
