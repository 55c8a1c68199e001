/**
 * `buildApp(config, deps)`: the HTTP application without listening (tests build it in-process
 * and use `inject`; `main.ts` listens). It registers, in order, error handling, health checks
 * and the route table of each area the process's roles serve (docs/operations.md#roles).
 */
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { authRoutes } from './auth/routes.ts';
import type { Config } from './config.ts';
import { consoleRoutes } from './console/routes.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.ts';
import { installBodyTimeout, installRequestBounds } from './http/limits.ts';
import { installMetrics } from './http/metrics.ts';
import { installPermissions } from './http/authenticate.ts';
import { ROUTER_OPTIONS } from './http/methods.ts';
import { registerRateLimits } from './http/rate-limit.ts';
import { redactUrl } from './http/redact.ts';
import type { App } from './http/typed.ts';
import { COMPONENTS } from './http/openapi.ts';
import { compileFor, installEmptyQueryAsAbsent } from './http/validate.ts';
import { auditRoutes } from './management/audit/routes.ts';
import { analyticsRoutes } from './management/analytics/routes.ts';
import { contractRoutes } from './management/contracts/routes.ts';
import { jobRoutes } from './management/jobs/routes.ts';
import { chainRoutes } from './management/chains/routes.ts';
import { collectionRoutes } from './management/collections/routes.ts';
import { credentialRoutes } from './management/credentials/routes.ts';
import { connectRoutes } from './management/credentials/connect.ts';
import { createFetcher } from './collect/fetch.ts';
import { createPollNow } from './collect/poll-now.ts';
import { websubRoutes } from './collect/websub/routes.ts';
import { customizationRoutes } from './management/customizations/routes.ts';
import { filterRoutes } from './management/filters/routes.ts';
import { inputRoutes } from './management/inputs/routes.ts';
import { listRoutes } from './management/lists/routes.ts';
import { articleRoutes } from './management/articles/routes.ts';
import { erasureRoutes } from './management/erasures/routes.ts';
import { setRoutes } from './management/sets/routes.ts';
import { webhookRoutes } from './management/webhooks/routes.ts';
import { smtpMailer } from './management/team/mail.ts';
import { teamRoutes } from './management/team/routes.ts';
import { queueRoutes } from './queue/routes.ts';
import { createRelated } from './queue/related/related.ts';
import type { Db } from './store/db.ts';
import { mediaKey, type MediaWidth, proxiedMediaUrl } from './lib/media-url.ts';
import { currentSecretKey } from './lib/secret-box.ts';
import { schemaState } from './store/migrate.ts';

export const ROLES = ['all', 'auth', 'api', 'queue', 'collector'] as const;
export type Role = (typeof ROLES)[number];

/** Request bodies at most 1 MiB (docs/api.md#limits). */
export const BODY_LIMIT = 1024 * 1024;

export interface AppDeps {
  db: Db;
  /** Which APIs this process serves; default all. `collector` serves only the health checks. */
  role?: Role;
  /** Human-readable log lines (pino-pretty) instead of JSON lines: `npm start` on a terminal. */
  prettyLogs?: boolean;
  /** Milliseconds a client has to send a whole request, body included (default `REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs?: number;
}

/**
 * A request's headers, and then its body, must each arrive within 30 s, else 408 with the error
 * object: a client sending slowly cannot hold a connection (docs/api.md#limits).
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Time limit of an article fetch for related content, ms (docs/api.md#related-content). */
export const ARTICLE_TIMEOUT_MS = 10_000;
/** Size limit of an article page, bytes: 2 MiB (docs/api.md#related-content). */
export const ARTICLE_MAX_BYTES = 2 * 1024 * 1024;


/**
 * Request ids (`X-Request-Id`, the error object's `requestId`): 24 hex characters, 96 bits from
 * the CSPRNG, cut from a pool of random bytes filled 4 KiB at a time. One `randomBytes` call per
 * request cost 5 % of a cached content read (bench/content.ts).
 */
function requestIds(): () => string {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + 12 > pool.length) {
      pool = randomBytes(4096);
      at = 0;
    }
    at += 12;
    return pool.toString('hex', at - 12, at);
  };
}

/**
 * The HTTP application of a process with the roles `deps.role` (default all), not listening:
 * error handling, request bounds, rate limits, metrics, health checks and the routes of each
 * area the role serves (docs/operations.md#roles). Rejects when a plugin or route fails to
 * register.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  const role = deps.role ?? 'all';
  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Loaded only for a terminal: JSON lines (the default) need no formatter.
  const stream = deps.prettyLogs
    ? (await import('pino-pretty')).default({ destination: 2, colorize: process.stderr.isTTY === true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' })
    : process.stderr;
  const app = Fastify({
    // Logs go to stderr: stdout carries the CLI's one JSON document (docs/operations.md#cli); JSON lines,
    // or pino-pretty's lines when `npm start` runs on a terminal (`prettyLogs`).
    // Tokens travel in query strings (docs/api.md#authentication): request URLs are logged with them redacted.
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            stream,
            serializers: {
              req: (request: { method: string; url: string; ip?: string }) => ({ method: request.method, url: redactUrl(request.url), remoteAddress: request.ip }),
            },
          },
    bodyLimit: BODY_LIMIT,
    genReqId: requestIds(),
    routerOptions: ROUTER_OPTIONS,
    // Errors met before a route runs (router, HTTP parser) answer with the error object too.
    frameworkErrors,
    clientErrorHandler,
    requestTimeout: requestTimeoutMs,
    // Headers within the same time; Node checks for late ones this often (its default, 30 s,
    // would let a short timeout run long). The body has its own deadline (`installBodyTimeout`).
    http: { headersTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.max(50, Math.min(requestTimeoutMs / 4, 30_000)) },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(({ schema, httpPart }) => compileFor(httpPart, schema));
  // Response schemas document the API (OpenAPI); they must not reshape responses, which
  // fast-json-stringify would do by dropping what a schema does not list.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);
  installRequestBounds(app);
  installBodyTimeout(app, requestTimeoutMs);
  installEmptyQueryAsAbsent(app);
  await registerRateLimits(app, { db: deps.db, config });
  // The permission table on every route registered from here on (docs/api.md#roles-and-scopes).
  installPermissions(app, deps.db);
  await app.register(formbody);
  await registerDocs(app);
  // Every role: request metrics, and GET /metrics when METRICS_TOKEN is set (docs/operations.md#metrics).
  installMetrics(app, config);

  const Health = Type.Object({ status: Type.String({ enum: ['ok', 'unavailable'] }), reason: Type.Optional(Type.String()) }, { description: 'ok, or unavailable (503) with the reason' });
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['health'], response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    try {
      await sql`select 1`.execute(deps.db);
      const { state } = await schemaState(deps.db);
      if (state === 'current') return { status: 'ok' };
      return reply.code(503).send({ status: 'unavailable', reason: `schema ${state}` });
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
  });

  const ctx = { db: deps.db, config };
  if (role === 'all' || role === 'auth') authRoutes(app, ctx);
  if (role === 'all' || role === 'api') {
    // A poll of one input now: the collector's poll, holding a politeness slot (collect/poll-now.ts).
    const pollNow = createPollNow({ ...ctx, log: app.log });
    app.addHook('onClose', async () => pollNow.close());
    inputRoutes(app, { ...ctx, pollInput: pollNow.poll });
    contractRoutes(app, ctx);
    listRoutes(app, ctx);
    setRoutes(app, ctx);
    chainRoutes(app, ctx);
    customizationRoutes(app, ctx);
    collectionRoutes(app, ctx);
    credentialRoutes(app, ctx);
    // The connect flows' outbound requests (token endpoints, Mastodon instances) are guarded like the collector's.
    const connectFetch = createFetcher({ allowPrivate: config.allowPrivateFetch });
    app.addHook('onClose', async () => connectFetch.close());
    connectRoutes(app, { ...ctx, fetch: connectFetch });
    webhookRoutes(app, ctx);
    filterRoutes(app, ctx);
    auditRoutes(app, ctx);
    articleRoutes(app, ctx);
    erasureRoutes(app, ctx);
    // Invitation and password-reset links by e-mail when SMTP_URL is set (docs/configuration.md#e-mail).
    const mailer = config.smtp ? smtpMailer(config.smtp) : undefined;
    if (mailer) app.addHook('onClose', async () => mailer.close());
    teamRoutes(app, { ...ctx, mailer });
    jobRoutes(app, ctx);
    analyticsRoutes(app, ctx);
    // The WebSub callback: hubs verify subscriptions and push notifications here (collect/websub).
    websubRoutes(app, { ...ctx, bodyLimit: BODY_LIMIT });
    // The console lives on {api_url}: its redirect URI is <API_URL>/console/ (first-party.ts).
    consoleRoutes(app, ctx);
  }
  if (role === 'all' || role === 'queue') {
    // Related content reads articles through the collector's guarded fetch, with tighter limits (docs/api.md#related-content).
    const articleFetch = createFetcher({ allowPrivate: config.allowPrivateFetch, timeoutMs: ARTICLE_TIMEOUT_MS, maxBytes: ARTICLE_MAX_BYTES });
    app.addHook('onClose', async () => articleFetch.close());
    const related = createRelated(deps.db, config, articleFetch);
    // The media proxy (docs/api.md#media-proxy): images fetched through the collector's guard, its URLs signed with a key derived from the secret key (read on first use).
    const { mediaRoutes, MEDIA_MAX_BYTES } = await import('./publication/media.ts');
    let mediaHmac: Buffer | undefined;
    const mediaHmacKey = () => (mediaHmac ??= mediaKey(currentSecretKey(config)));
    const mediaFetch = createFetcher({ allowPrivate: config.allowPrivateFetch, maxBytes: MEDIA_MAX_BYTES });
    app.addHook('onClose', async () => mediaFetch.close());
    mediaRoutes(app, { config, fetch: mediaFetch, key: mediaHmacKey });
    // The wall and the display page are documents of the queue origin: their pictures' URLs are
    // root-relative, so they resolve against the origin that served the page whatever QUEUE_URL says.
    const media = config.mediaProxy === 'off' ? undefined : (url: string, width?: MediaWidth) => proxiedMediaUrl('', mediaHmacKey(), url, width);
    const fullSize = config.mediaProxy === 'off' ? undefined : (url: string) => proxiedMediaUrl(config.queueUrl, mediaHmacKey(), url);
    queueRoutes(app, { ...ctx, related, media: config.mediaProxy === 'api' ? fullSize : undefined, queueMedia: fullSize });
    // Loaded on demand: the sanitizer and templates would slow every CLI command that imports this file.
    const { publicationRoutes } = await import('./publication/routes.ts');
    publicationRoutes(app, { ...ctx, related, media });
    // The walls' analytics beacon: counted in memory, written every few seconds (docs/api.md#analytics-beacon).
    (await import('./publication/beacon.ts')).beaconRoutes(app, ctx);
  }
  return app;
}

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document generated from the route schemas of the APIs
 * this process serves (all three with role `all`); `GET /docs`: the same rendered for people
 * (Swagger UI, served from the package, no outside requests). Registered before the routes,
 * whose schemas it collects as they are added.
 */
async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice',
        version: '1',
        description: 'Authorization API (/v1/oauth…), management API (/collection…, /publication…) and queue and content API (/v1/queue…, /v1/content…).',
      },
      components: {
        securitySchemes: {
          access_token: { type: 'apiKey', in: 'query', name: 'access_token' },
          bearer: { type: 'http', scheme: 'bearer' },
          basic: { type: 'http', scheme: 'basic', description: 'Client id and secret, each URL-encoded (token and revocation endpoints)' },
        },
      },
    },
    // Shared schemas (http/openapi.ts) become #/components/schemas/<their $id>.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  for (const schema of COMPONENTS) app.addSchema(schema);
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
