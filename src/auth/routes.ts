/**
 * The Authorization API's route table (docs/api.md#authorization-api):
 *
 *   POST /v1/oauth/token        client_credentials, refresh_token, authorization_code (grants/)
 *   POST /v1/oauth/revoke       token revocation (RFC 7009)
 *   GET  /v1/oauth/token/info   token information (docs/api.md#token-info)
 *   GET  /v1/oauth/me           consumer details (docs/api.md#me)
 *   GET|POST /v1/authorize, /v1/oauth/authorize, POST /v1/login, /v1/logout   browser sign-in (login/)
 *   GET  /.well-known/oauth-authorization-server   server metadata (RFC 8414, metadata.ts)
 *   POST /v1/oauth/logout       an application signs its user out (login/; the console's sign-out)
 *
 * Token-endpoint errors carry the error object (docs/api.md#errors) plus RFC 6749 §5.2 `error` and
 * `error_description`. Failed client authentications and grants count against the client id and
 * the client address together (rate-limit.ts, docs/api.md): more than 10 a minute → 429
 * RateLimitError with Retry-After for that client from that address only.
 */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, authenticationError, rateLimitError } from '../errors.ts';
import { authenticate, requestPrincipal } from '../http/authenticate.ts';
import type { App } from '../http/typed.ts';
import { iso } from '../lib/time.ts';
import type { Db } from '../store/db.ts';
import { consumerEmail } from '../store/consumers.ts';
import { authenticateClient, presentedCredentials } from './client-auth.ts';
import { fields, param } from './grants/grant.ts';
import { grants } from './grants/index.ts';
import { loginRoutes } from './login/routes.ts';
import { metadataRoutes } from './metadata.ts';
import { invalidRequest, unsupportedGrantType } from './oauth-errors.ts';
import { type FailureLimiter, failureLimiter } from './rate-limit.ts';
import { schemas } from './schema.ts';
import { revokeIssued } from './tokens.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The failure limiters of the token and revocation endpoints and of the login form. */
    authFailures: { token: FailureLimiter; login: FailureLimiter };
  }
}

/**
 * Registers the routes of the module's table on `app`, with failed client authentications and
 * grants counted per client id and address (`authFailures`, decorated on `app`).
 */
export function authRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const tokenFailures = failureLimiter();
  const loginFailures = failureLimiter();
  app.decorate('authFailures', { token: tokenFailures, login: loginFailures });

  /** Runs `work`; a 400/401 it throws counts as a failure of the client id from this address. */
  async function limited<T>(request: FastifyRequest, clientId: string | undefined, work: () => Promise<T>): Promise<T> {
    const identity = clientId ?? '';
    const wait = tokenFailures.retryAfter(identity, request.ip);
    if (wait > 0) throw rateLimitError(wait);
    try {
      return await work();
    } catch (error) {
      if (error instanceof ApiError && (error.status === 400 || error.status === 401)) tokenFailures.fail(identity, request.ip);
      throw error;
    }
  }

  app.post('/v1/oauth/token', { schema: schemas.token }, async (request, reply) => {
    const body = fields(request.body);
    const credentials = presentedCredentials(request, body);
    const tokens = await limited(request, credentials?.id, async () => {
      const grantType = param(body, 'grant_type');
      if (!grantType) throw invalidRequest('grant_type is required.', 'grant_type');
      const grant = grants.get(grantType);
      if (!grant) throw unsupportedGrantType(grantType);
      const client = await authenticateClient(db, credentials, { allowPublic: grant.allowPublicClients });
      return grant.handler({ db, config, client, body, now: Date.now() });
    });
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return tokens;
  });

  app.post('/v1/oauth/revoke', { schema: schemas.revoke }, async (request, reply) => {
    const body = fields(request.body);
    const credentials = presentedCredentials(request, body);
    await limited(request, credentials?.id, async () => {
      const client = await authenticateClient(db, credentials, { allowPublic: true });
      const token = param(body, 'token');
      if (!token) throw invalidRequest('token is required.', 'token');
      await revokeIssued(db, token, client.id);
    });
    return reply.header('cache-control', 'no-store').code(200).send();
  });

  app.get('/v1/oauth/token/info', { schema: schemas.tokenInfo }, async (request) => {
    const lookup = requestPrincipal(db, request);
    if (!lookup) await authenticate(db, request); // throws the 401 for a missing token
    const principal = await lookup;
    if (!principal) throw authenticationError('The access token is unknown or revoked.', 'access_token');
    const ttl = Math.max(0, principal.token.expiresAt - Date.now());
    return { active: ttl > 0, expired: ttl === 0, expires: iso(principal.token.expiresAt), ttl, scope: principal.token.scope };
  });

  app.get('/v1/oauth/me', { schema: schemas.me }, async (request) => {
    const { consumer } = await authenticate(db, request);
    const me: Record<string, unknown> = {
      privileges: consumer.type === 'user' ? ['MY_ACCOUNT'] : [],
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      consumer_type: consumer.type,
      consumer_email: consumerEmail(consumer),
    };
    if (consumer.type === 'user' && consumer.language) me.language = consumer.language;
    return me;
  });

  app.register(loginRoutes, { db, config, failures: loginFailures });
  metadataRoutes(app, { config });
}
