/**
 * Rate limits of the API (docs/api.md#rate-limits), counted by @fastify/rate-limit:
 *
 * - token-bearing endpoints (management, queue, `/v1/oauth/me`, `/v1/oauth/token/info`): per
 *   consumer, `RATE_LIMIT_CONSUMER` requests (default 600) per `RATE_LIMIT_WINDOW` seconds
 *   (default 60), policy `"consumer"`. The key is the consumer's id, found from the request's
 *   token by the same lookup the handler then uses (`requestPrincipal`, made once per request),
 *   so a consumer's tokens share one count. A request whose token is missing or unknown counts
 *   against its client address under the address policy (it is answered 401 anyway);
 * - public reads (content, count, collections, related content, articles, the publication page and its items, the media proxy) and unknown
 *   paths: per client address, `RATE_LIMIT_PUBLIC` (default 6000) per window, policy
 *   `"address"`; IPv6 addresses count per /64, IPv4-mapped ones as IPv4 (`lib/addresses.ts`);
 * - exempt: health checks, `/openapi.json`, `/docs`, the console and other static assets, and the
 *   OAuth and sign-in endpoints, which have their own failure limits (`auth/rate-limit.ts`).
 *
 * Every limited response carries `RateLimit-Policy` and `RateLimit` in the structured-field form
 * of the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers-11 §3 and §4), e.g.
 * `RateLimit-Policy: "consumer";q=600;w=60` and `RateLimit: "consumer";r=599;t=42` (`r` requests
 * left, `t` seconds until the window ends). Beyond the limit: 429 RateLimitError (code 4291) with
 * `Retry-After` in seconds (RFC 9110 §10.2.3), before the body is read.
 *
 * Counters live in memory on SQLite (one process owns the database) and in the `rate_limits`
 * table on PostgreSQL (`store/rate-limits.ts`), so that processes sharing the database share the
 * limits. A limit of 0 turns that limit off. A failing counter never fails the request: it is
 * logged and the request let through.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { rateLimitError } from '../errors.ts';
import { addressGroup } from '../lib/addresses.ts';
import { isPostgres, type Db } from '../store/db.ts';
import { rateLimitStore } from '../store/rate-limits.ts';
import { requestPrincipal } from './authenticate.ts';
import { ref } from './openapi.ts';

/** How a route is limited: per consumer (token-bearing), per client address (public), or not at all. */
export type RateLimitClass = 'consumer' | 'address' | 'exempt';

/** Route patterns (as registered, `:param` and `*` kept) that are never limited. */
const EXEMPT = [
  /^\/(healthz|readyz|openapi\.json)$/,
  /^\/docs(\/|$)/,
  /^\/(console(\/.*)?)?$/,
  /^\/\.well-known\//,
  /^\/v1\/(oauth\/)?authorize$/,
  /^\/v1\/oauth\/(token|revoke|logout)$/,
  /^\/v1\/(login|logout)$/,
  /^\/v1\/assets\//,
  /^\/v1\/publication\/assets\//,
  /^\/v1\/embed\.js$/,
];

/** Public reads and the WebSub callback (hubs): no token, limited per client address. */
const PUBLIC = /^\/(v1\/(content|count|collections|publication|related|articles|media)|websub)\//;

/**
 * The class of a route from its registered pattern (`request.routeOptions.url`); undefined for a
 * request that matched no route (404), which counts per address. Pure; table-tested.
 */
export function rateLimitClass(route: string | undefined): RateLimitClass {
  if (route === undefined) return 'address';
  if (EXEMPT.some((pattern) => pattern.test(route))) return 'exempt';
  return PUBLIC.test(route) ? 'address' : 'consumer';
}

/** `RateLimit-Policy` of a policy (draft-ietf-httpapi-ratelimit-headers-11 §3): quota `q` per window `w` seconds. */
export function policyHeader(policy: string, quota: number, windowSeconds: number): string {
  return `"${policy}";q=${quota};w=${windowSeconds}`;
}

/** `RateLimit` of a policy (same draft, §4): `r` requests left, `t` seconds until the window ends. */
export function limitHeader(policy: string, remaining: number, resetSeconds: number): string {
  return `"${policy}";r=${remaining};t=${resetSeconds}`;
}

/** Registers the limits on `app` (before the routes): one line in `app.ts`. */
export async function registerRateLimits(app: FastifyInstance, { db, config }: { db: Db; config: Config }): Promise<void> {
  const windowMs = config.rateLimitWindow * 1000;
  await app.register(rateLimit, {
    // Limits are applied by the hook below, which picks the policy and writes the draft's headers.
    global: false,
    skipOnError: false,
    timeWindow: windowMs,
    cache: 10_000,
    ...(isPostgres(db) ? { store: rateLimitStore(db, (error) => app.log.error({ err: error }, 'rate-limit sweep failed')) } : {}),
  });

  const keys = new WeakMap<FastifyRequest, string>();
  const keyOf = (request: FastifyRequest) => keys.get(request)!;
  const limiters = {
    consumer: config.rateLimitConsumer > 0 ? app.createRateLimit({ max: config.rateLimitConsumer, timeWindow: windowMs, keyGenerator: keyOf }) : undefined,
    address: config.rateLimitPublic > 0 ? app.createRateLimit({ max: config.rateLimitPublic, timeWindow: windowMs, keyGenerator: keyOf }) : undefined,
  };
  const quotas = { consumer: config.rateLimitConsumer, address: config.rateLimitPublic };

  // The 429 is part of every limited route's description (GET /openapi.json).
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response || response[429] || rateLimitClass(route.url) === 'exempt') return;
    route.schema = { ...route.schema, response: { ...response, 429: ref('ErrorObject', 'RateLimitError: too many requests; see Retry-After and RateLimit') } };
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const kind = rateLimitClass(request.routeOptions.url);
    if (kind === 'exempt') return;
    const principal = kind === 'consumer' ? await requestPrincipal(db, request)?.catch(() => undefined) : undefined;
    const policy = principal ? 'consumer' : 'address';
    const limiter = limiters[policy];
    if (!limiter) return;
    keys.set(request, principal ? `consumer:${principal.consumer.id}` : `address:${addressGroup(request.ip)}`);
    let result: Awaited<ReturnType<typeof limiter>>;
    try {
      result = await limiter(request);
    } catch (error) {
      request.log.error({ err: error }, 'rate-limit counter failed; request let through');
      return;
    }
    if (result.isAllowed) return;
    reply.header('ratelimit-policy', policyHeader(policy, quotas[policy], config.rateLimitWindow));
    reply.header('ratelimit', limitHeader(policy, result.remaining, result.ttlInSeconds));
    if (result.isExceeded) throw rateLimitError(Math.max(1, result.ttlInSeconds));
  });
}
