/**
 * Rate limits of the API (docs/api.md#rate-limits), through HTTP: per consumer on token-bearing
 * endpoints, per client address on public reads, 429 RateLimitError with Retry-After and the
 * RateLimit / RateLimit-Policy headers (draft-ietf-httpapi-ratelimit-headers-11), exemptions,
 * and, on PostgreSQL, one count shared by two app instances on the same database. The limits are
 * made small through configuration; nothing waits for a window to end.
 */
import type { FastifyInstance, FastifyRequest, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { requestPrincipal } from '../../src/http/authenticate.ts';
import { limitHeader, policyHeader, rateLimitClass } from '../../src/http/rate-limit.ts';
import { hitRateLimit, LOCAL_MIN_LIMIT, SYNC_MS } from '../../src/store/rate-limits.ts';
import { build, buildTenant, expectError, testPostgresUrl } from '../helper.ts';

const me = (app: FastifyInstance, token: string) => app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${token}` });
const content = (app: FastifyInstance, slug: string, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'GET', url: `/v1/content/${slug}?q=world-news`, remoteAddress });

/** The `r` and `t` of a `RateLimit` header of `policy`. */
function remaining(res: LightMyRequestResponse, policy: string): { r: number; t: number } {
  const match = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(String(res.headers.ratelimit));
  expect(match, `RateLimit: ${res.headers.ratelimit}`).not.toBeNull();
  return { r: Number(match![1]), t: Number(match![2]) };
}

function expectLimited(res: LightMyRequestResponse, policy: string, quota: number, window: number) {
  expectError(res, 429, { name: 'RateLimitError', code: 4291 });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= window, `Retry-After: ${res.headers['retry-after']}`).toBe(true);
  expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${quota};w=${window}`);
  expect(remaining(res, policy).r).toBe(0);
}

describe('rate limit classes', () => {
  it.each([
    ['/collection/inputs', 'consumer'],
    ['/collection/collections/:id', 'consumer'],
    ['/publication/customizations', 'consumer'],
    ['/v1/queue/:contract', 'consumer'],
    ['/v1/oauth/me', 'consumer'],
    ['/v1/oauth/token/info', 'consumer'],
    ['/v1/customer/contracts/me', 'consumer'],
    ['/v1/content/:contract', 'address'],
    ['/v1/content/:contract/stream', 'address'],
    ['/v1/count/:contract', 'address'],
    ['/v1/collections/:contract', 'address'],
    ['/v1/related/:contract', 'address'],
    ['/v1/articles/:contract', 'address'],
    ['/v1/publication/:contract', 'address'],
    ['/v1/publication/:contract/items', 'address'],
    ['/v1/media/:signature/:url', 'address'],
    ['/websub/:id', 'address'],
    [undefined, 'address'],
    ['/healthz', 'exempt'],
    ['/readyz', 'exempt'],
    ['/openapi.json', 'exempt'],
    ['/docs', 'exempt'],
    ['/docs/static/*', 'exempt'],
    ['/', 'exempt'],
    ['/console', 'exempt'],
    ['/console/*', 'exempt'],
    ['/v1/oauth/token', 'exempt'],
    ['/v1/oauth/revoke', 'exempt'],
    ['/v1/oauth/logout', 'exempt'],
    ['/v1/authorize', 'exempt'],
    ['/v1/oauth/authorize', 'exempt'],
    ['/v1/login', 'exempt'],
    ['/v1/logout', 'exempt'],
    ['/.well-known/oauth-authorization-server', 'exempt'],
    ['/v1/assets/sign-in.css', 'exempt'],
    ['/v1/publication/assets/:name', 'exempt'],
    ['/v1/embed.js', 'exempt'],
  ])('%s is limited per %s', (route, kind) => {
    expect(rateLimitClass(route)).toBe(kind);
  });

  it('writes the draft structured-field headers', () => {
    expect(policyHeader('consumer', 600, 60)).toBe('"consumer";q=600;w=60');
    expect(limitHeader('consumer', 599, 42)).toBe('"consumer";r=599;t=42');
  });
});

describe('per consumer on token-bearing endpoints', () => {
  it('answers the request past the limit 429 with the error object and headers; another consumer is unaffected', async () => {
    const { app, db } = await build({ RATE_LIMIT_CONSUMER: '5', RATE_LIMIT_WINDOW: '3600' });
    const a = await buildTenant(db, 'Acme News');
    const b = await buildTenant(db, 'Other News');
    for (let i = 1; i <= 5; i++) {
      const res = await me(app, a.token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"consumer";q=5;w=3600');
      const { r, t } = remaining(res, 'consumer');
      expect(r).toBe(5 - i);
      expect(t).toBeGreaterThan(0);
      expect(t).toBeLessThanOrEqual(3600);
    }
    expectLimited(await me(app, a.token), 'consumer', 5, 3600);
    // Other endpoints of the same consumer share the count.
    expectLimited(
      await app.inject({ method: 'GET', url: `/collection/collections?contract_id=${a.contract.id}&access_token=${a.token}` }),
      'consumer', 5, 3600,
    );
    // Keyed on the consumer, not the token string: a new token of the same consumer is limited too.
    const { access_token: second } = await issueTokens(db, a.consumer.id, { ttlSeconds: 3600, withRefresh: false });
    expectLimited(await me(app, second), 'consumer', 5, 3600);
    // Another consumer, from the same address, is not.
    const other = await me(app, b.token);
    expect(other.statusCode, other.body).toBe(200);
    expect(remaining(other, 'consumer').r).toBe(4);
    // Exempt endpoints answer, without the headers.
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.headers.ratelimit).toBeUndefined();
    // Public reads count per address, apart from the consumer's count.
    const read = await content(app, a.contract.slug);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.headers['ratelimit-policy']).toBe('"address";q=6000;w=3600');
  });

  it('counts a request without a valid token against its address, not any consumer', async () => {
    const { app, db } = await build({ RATE_LIMIT_CONSUMER: '2', RATE_LIMIT_PUBLIC: '3', RATE_LIMIT_WINDOW: '3600' });
    const a = await buildTenant(db);
    for (let i = 0; i < 3; i++) expectError(await me(app, 'not-a-token'), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectLimited(await me(app, 'not-a-token'), 'address', 3, 3600);
    expectLimited(await app.inject({ method: 'GET', url: '/v1/oauth/me' }), 'address', 3, 3600);
    // The consumer's own count is untouched.
    const res = await me(app, a.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(remaining(res, 'consumer').r).toBe(1);
  });

  it('looks the token up once per request: the limiter and the handler share the lookup', async () => {
    const { db } = await build();
    const a = await buildTenant(db);
    const request = { query: { access_token: a.token }, headers: {} } as unknown as FastifyRequest;
    const first = requestPrincipal(db, request);
    expect(requestPrincipal(db, request)).toBe(first);
    expect((await first)?.consumer.id).toBe(a.consumer.id);
    expect(requestPrincipal(db, { query: {}, headers: {} } as unknown as FastifyRequest)).toBeUndefined();
  });

  it('turns a limit off with 0', async () => {
    const { app, db } = await build({ RATE_LIMIT_CONSUMER: '0', RATE_LIMIT_PUBLIC: '0' });
    const a = await buildTenant(db);
    const res = await me(app, a.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toBeUndefined();
    expect((await content(app, a.contract.slug)).headers.ratelimit).toBeUndefined();
  });
});

describe('per client address on public reads', () => {
  it('limits each address on its own', async () => {
    const { app, db } = await build({ RATE_LIMIT_PUBLIC: '3', RATE_LIMIT_WINDOW: '3600' });
    const a = await buildTenant(db);
    const reads = [
      () => content(app, a.contract.slug),
      () => app.inject({ method: 'GET', url: `/v1/count/${a.contract.slug}?q=world-news` }),
      () => app.inject({ method: 'GET', url: `/v1/collections/${a.contract.slug}` }),
    ];
    for (const [i, read] of reads.entries()) {
      const res = await read();
      expect(res.statusCode, res.body).toBe(200);
      expect(remaining(res, 'address').r).toBe(2 - i);
    }
    expectLimited(await content(app, a.contract.slug), 'address', 3, 3600);
    // An unknown path counts per address too, and is refused once the address is over.
    expectLimited(await app.inject({ method: 'GET', url: '/no/such/path' }), 'address', 3, 3600);
    // Another address is not limited; IPv6 addresses of one /64 share a count.
    expect((await content(app, a.contract.slug, '10.0.0.2')).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await content(app, a.contract.slug, `2001:db8:1:2::${i + 1}`)).statusCode).toBe(200);
    expectLimited(await content(app, a.contract.slug, '2001:db8:1:2::ffff'), 'address', 3, 3600);
    expect((await content(app, a.contract.slug, '2001:db8:1:3::1')).statusCode).toBe(200);
    // Token-bearing requests of a consumer from the limited address still go through.
    expect((await me(app, a.token)).statusCode).toBe(200);
    // Exempt: health, the OpenAPI document, the OAuth metadata.
    for (const url of ['/healthz', '/openapi.json', '/.well-known/oauth-authorization-server']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers.ratelimit, url).toBeUndefined();
    }
  });
});

describe('on PostgreSQL, one count per installation', () => {
  it('two app instances sharing the database share the counter', async (ctx) => {
    ctx.skip(!testPostgresUrl, 'PostgreSQL run only (TEST_DATABASE_URL)');
    const env = { RATE_LIMIT_CONSUMER: '5', RATE_LIMIT_PUBLIC: '4', RATE_LIMIT_WINDOW: '3600' };
    const first = await build(env);
    const second = await build({ ...env, DATABASE_URL: first.config.databaseUrl });
    const a = await buildTenant(first.db);
    const b = await buildTenant(first.db, 'Other News');
    const apps = [first.app, second.app, first.app, second.app, first.app];
    for (const [i, app] of apps.entries()) {
      const res = await me(app, a.token);
      expect(res.statusCode, res.body).toBe(200);
      expect(remaining(res, 'consumer').r).toBe(4 - i);
    }
    expectLimited(await me(second.app, a.token), 'consumer', 5, 3600);
    expectLimited(await me(first.app, a.token), 'consumer', 5, 3600);
    expect((await me(second.app, b.token)).statusCode).toBe(200);
    for (const app of [first.app, second.app, first.app, second.app]) expect((await content(app, a.contract.slug)).statusCode).toBe(200);
    expectLimited(await content(first.app, a.contract.slug), 'address', 4, 3600);
    expectLimited(await content(second.app, a.contract.slug), 'address', 4, 3600);
  });

  it('starts a new window once the key’s window has ended', async (ctx) => {
    ctx.skip(!testPostgresUrl, 'PostgreSQL run only (TEST_DATABASE_URL)');
    const { db } = await build();
    expect(await hitRateLimit(db, 'consumer:x', 60_000)).toMatchObject({ current: 1 });
    const hit = await hitRateLimit(db, 'consumer:x', 60_000);
    expect(hit.current).toBe(2);
    expect(hit.ttl).toBeGreaterThan(0);
    expect(hit.ttl).toBeLessThanOrEqual(60_000);
    // The window ends (as if its time had passed): the next hit starts a new one.
    await sql`update rate_limits set reset_at = reset_at - 60000 where key = 'consumer:x'`.execute(db);
    expect(await hitRateLimit(db, 'consumer:x', 60_000)).toMatchObject({ current: 1 });
    expect(await hitRateLimit(db, 'address:y', 60_000)).toMatchObject({ current: 1 });
  });

  it('counts a key far from its limit in memory between writes, at most SYNC_MS apart, and loses no hit', async (ctx) => {
    ctx.skip(!testPostgresUrl, 'PostgreSQL run only (TEST_DATABASE_URL)');
    const { app, db } = await build({ RATE_LIMIT_PUBLIC: String(LOCAL_MIN_LIMIT * 4), RATE_LIMIT_WINDOW: '3600' });
    const tenant = await buildTenant(db);
    const stored = async () => Number((await sql<{ hits: number }>`select hits from rate_limits where key like 'address:%'`.execute(db)).rows[0]?.hits ?? 0);
    const started = Date.now();
    for (let i = 1; i <= 20; i++) {
      const res = await content(app, tenant.contract.slug);
      expect(res.statusCode, res.body).toBe(200);
      expect(remaining(res, 'address').r).toBe(LOCAL_MIN_LIMIT * 4 - i);
    }
    // The first hit was written; the others wait in memory (unless the machine took a whole SYNC_MS).
    if (Date.now() - started < SYNC_MS) expect(await stored()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, SYNC_MS + 50));
    expect(remaining(await content(app, tenant.contract.slug), 'address').r).toBe(LOCAL_MIN_LIMIT * 4 - 21);
    expect(await stored()).toBe(21);
  });

  it('writes every hit of a key past half its limit, so a 429 is decided on the shared count', async (ctx) => {
    ctx.skip(!testPostgresUrl, 'PostgreSQL run only (TEST_DATABASE_URL)');
    const limit = LOCAL_MIN_LIMIT;
    const env = { RATE_LIMIT_PUBLIC: String(limit), RATE_LIMIT_WINDOW: '3600' };
    const first = await build(env);
    const second = await build({ ...env, DATABASE_URL: first.config.databaseUrl });
    const tenant = await buildTenant(first.db);
    // Other processes' hits bring the shared count to half the limit; both processes see it at
    // their next write, at most SYNC_MS after their last.
    await content(first.app, tenant.contract.slug);
    await sql`update rate_limits set hits = ${limit / 2} where key like 'address:%'`.execute(first.db);
    await new Promise((resolve) => setTimeout(resolve, SYNC_MS + 50));
    for (let i = 0; i < limit / 2; i++) expect((await content(i % 2 ? first.app : second.app, tenant.contract.slug)).statusCode).toBe(200);
    expectLimited(await content(first.app, tenant.contract.slug), 'address', limit, 3600);
    expectLimited(await content(second.app, tenant.contract.slug), 'address', limit, 3600);
  });
});
