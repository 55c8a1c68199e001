/**
 * The Authorization API's route table (docs/api.md#authorization-api):
 *
 *   POST /v1/oauth/token        client_credentials, refresh_token, authorization_code (grants/)
 *   POST /v1/oauth/revoke       token revocation (RFC 7009)
 *   GET  /v1/oauth/token/info   token information (docs/api.md#token-info)
 *   GET  /v1/oauth/me           consumer details (docs/api.md#me)
 *   GET|POST /v1/authorize, /v1/oauth/authorize, POST /v1/login, /v1/logout   browser sign-in (login/)
 *   POST /v1/login/oidc, GET /v1/login/oidc/callback   sign-in through an OpenID Connect provider (login/oidc.ts)
 *   GET  /.well-known/oauth-authorization-server   server metadata (RFC 8414, metadata.ts)
 *   POST /v1/oauth/logout       an application signs its user out (login/; the console's sign-out)
 *   POST /v1/account/password, /v1/account/logout-all   the caller's own account (account.ts)
 *   GET|POST /v1/account/two-factor[/confirm|/disable|/recovery-codes]   two-factor sign-in (two-factor.ts)
 *
 * Token-endpoint errors carry the error object (docs/api.md#errors) plus RFC 6749 §5.2 `error` and
 * `error_description`. Failed client authentications and grants are limited (rate-limit.ts,
 * docs/api.md#token-endpoint): a wrong client secret counts against the client id across all
 * addresses and against the client id and address group together; other failures only against
 * the latter; once delayed → 429 RateLimitError with Retry-After, the secret not checked.
 */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, authenticationError, rateLimitError } from '../errors.ts';
import { authenticate, requestPrincipal } from '../http/authenticate.ts';
import type { App } from '../http/typed.ts';
import { iso } from '../lib/time.ts';
import { isPostgres, type Db } from '../store/db.ts';
import { databaseFailureCounts, memoryFailureCounts } from '../store/rate-limits.ts';
import { consumerEmail } from '../store/consumers.ts';
import { accountRoutes } from './account.ts';
import { authenticateClient, type ClientCredentials, presentedCredentials } from './client-auth.ts';
import { fields, param } from './grants/grant.ts';
import { grants } from './grants/index.ts';
import { loginRoutes } from './login/routes.ts';
import { metadataRoutes } from './metadata.ts';
import { invalidRequest, unsupportedGrantType } from './oauth-errors.ts';
import { FAILURE_POLICY, type FailureLimiter, failureLimiter } from './rate-limit.ts';
import { schemas } from './schema.ts';
import { revokeIssued } from './tokens.ts';
import { twoFactorRoutes } from './two-factor.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The failure limiters of the token and revocation endpoints and of the login form. */
    authFailures: { token: FailureLimiter; login: FailureLimiter };
  }
}

/**
 * Registers the routes of the module's table on `app`, with failed client authentications,
 * grants and sign-ins limited (`authFailures`, decorated on `app`; records in memory on SQLite, in
 * the `rate_limits` table on PostgreSQL).
 */
export function authRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const onError = (error: unknown) => app.log.error({ err: error }, 'failure-limit sweep failed');
  const counts = (prefix: string) =>
    isPostgres(db) ? databaseFailureCounts(db, { forgetMs: FAILURE_POLICY.forgetMs, prefix }, onError) : memoryFailureCounts({ entries: 20_000, forgetMs: FAILURE_POLICY.forgetMs });
  const tokenFailures = failureLimiter(counts('failure:token:'), 'failure:token:');
  const loginFailures = failureLimiter(counts('failure:login:'), 'failure:login:');
  app.decorate('authFailures', { token: tokenFailures, login: loginFailures });

  /**
   * Runs `work`, limited: a 400/401 it throws is a failure of the client id from this address,
   * and also of the client id everywhere when `work` reported a wrong client secret.
   */
  async function limited<T>(request: FastifyRequest, credentials: ClientCredentials | undefined, work: (secretChecked: (matched: boolean) => void) => Promise<T>): Promise<T> {
    const attempt = await tokenFailures.attempt(credentials?.id ?? '', request.ip, { secret: credentials?.secret !== undefined });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let wrongSecret = false;
    try {
      const result = await work((matched) => (wrongSecret = !matched));
      await attempt.succeeded();
      return result;
    } catch (error) {
      if (!(error instanceof ApiError && (error.status === 400 || error.status === 401))) await attempt.cancelled();
      else if (!wrongSecret) await attempt.failedHere();
      else await attempt.failed();
      throw error;
    }
  }

  app.post('/v1/oauth/token', { schema: schemas.token }, async (request, reply) => {
    const body = fields(request.body);
    const credentials = presentedCredentials(request, body);
    const tokens = await limited(request, credentials, async (secretChecked) => {
      const grantType = param(body, 'grant_type');
      if (!grantType) throw invalidRequest('grant_type is required.', 'grant_type');
      const grant = grants.get(grantType);
      if (!grant) throw unsupportedGrantType(grantType);
      const client = await authenticateClient(db, credentials, { allowPublic: grant.allowPublicClients, secretChecked });
      return grant.handler({ db, config, client, body, now: Date.now() });
    });
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return tokens;
  });

  app.post('/v1/oauth/revoke', { schema: schemas.revoke }, async (request, reply) => {
    const body = fields(request.body);
    const credentials = presentedCredentials(request, body);
    await limited(request, credentials, async (secretChecked) => {
      const client = await authenticateClient(db, credentials, { allowPublic: true, secretChecked });
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

  accountRoutes(app, { db, config, failures: loginFailures });
  const twoFactorClock = { now: Date.now };
  twoFactorRoutes(app, { db, config, failures: loginFailures, clock: twoFactorClock });
  app.register(loginRoutes, { db, config, failures: loginFailures, twoFactorClock });
  metadataRoutes(app, { config });
}
