/**
 * `GET /metrics` (docs/operations.md#metrics): the registry of `lib/metrics.ts` in the Prometheus
 * text exposition format, and the recording of every HTTP request answered.
 *
 * Where it is served (configuration METRICS_TOKEN, METRICS_PORT, METRICS_HOST):
 * - METRICS_TOKEN set: on the main port, to a request with `Authorization: Bearer <token>`; a
 *   missing or wrong token → 401 AuthenticationError (the error object, `WWW-Authenticate:
 *   Bearer`). The token is compared in constant time (SHA-256 of both, `timingSafeEqual`).
 * - METRICS_PORT set: on a listener of its own (`startMetricsServer`, loopback by default) that
 *   serves `/metrics` alone, to anyone who reaches it, or with the same check when METRICS_TOKEN
 *   is set too.
 * - neither: nowhere; `/metrics` on the main port is an unknown route (404).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, type ErrorEntry, internalError, notFoundError } from '../errors.ts';
import { observeHttpRequest, registry } from '../lib/metrics.ts';

/** The 401 of a missing or wrong metrics token (RFC 6750 §3: `WWW-Authenticate: Bearer`). */
function tokenError(): ApiError {
  return new ApiError(401, [{ name: 'AuthenticationError', message: 'The metrics token is missing or wrong: send Authorization: Bearer <METRICS_TOKEN>.', propertyName: 'Authorization', code: 2001 }], {
    headers: { 'www-authenticate': 'Bearer realm="metrics"' },
  });
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether an `Authorization` header carries `token` as a Bearer token; constant time in the token's content. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}

/**
 * Records every answered request (`sluice_http_request_duration_seconds`, labelled with the
 * route's pattern) and, when METRICS_TOKEN is set, registers `GET /metrics` on `app`.
 */
export function installMetrics(app: FastifyInstance, config: Pick<Config, 'metricsToken'>): void {
  app.addHook('onResponse', (request, reply, done) => {
    observeHttpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    done();
  });
  const token = config.metricsToken;
  if (!token) return;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) throw tokenError();
    const text = await registry.metrics();
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(text);
  });
}

function sendError(response: ServerResponse, error: ApiError): void {
  const requestId = randomBytes(12).toString('hex');
  const body = JSON.stringify({ requestId, errors: error.entries satisfies ErrorEntry[] });
  response.writeHead(error.status, { ...error.headers, 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId }).end(body);
}

async function answer(request: IncomingMessage, response: ServerResponse, token: string | undefined): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) return sendError(response, notFoundError('Not found: this listener serves GET /metrics only.'));
  if (token && !bearerMatches(request.headers.authorization, token)) return sendError(response, tokenError());
  const text = await registry.metrics();
  response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(request.method === 'HEAD' ? undefined : text);
}

/**
 * Starts the METRICS_PORT listener on METRICS_HOST; resolves with the server once it listens
 * (its `address()` gives the port when METRICS_PORT is 0). Throws when the port cannot be bound.
 */
export async function startMetricsServer(config: Pick<Config, 'metricsToken' | 'metricsPort' | 'metricsHost'>): Promise<Server> {
  const server = createServer((request, response) => {
    answer(request, response, config.metricsToken).catch(() => {
      if (!response.headersSent) sendError(response, internalError());
      else response.destroy();
    });
  });
  // A scraper holds no connection longer than this.
  server.requestTimeout = 30_000;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort ?? 0, config.metricsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
