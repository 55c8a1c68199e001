/**
 * The Authorization API's token endpoints (interface §4.1, decisions §3):
 *
 *   POST /v1/oauth/token       client_credentials and refresh_token grants (RFC 6749 §4.4, §6)
 *   GET  /v1/oauth/token/info  token information (interface §2.10)
 *   GET  /v1/oauth/me          consumer details (interface §2.11)
 *
 * Errors carry the error object of interface §7 and, on the token endpoint, the RFC 6749 §5.2
 * fields `error` and `error_description`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, VALIDATION_CODES } from '../errors.ts';
import { authenticate } from '../http/authenticate.ts';
import { lookupAccessToken, issueTokens, rotateRefreshToken } from './tokens.ts';
import { bearerToken } from '../http/authenticate.ts';
import { iso } from '../lib/time.ts';
import type { Db } from '../store/db.ts';
import { findClient } from '../store/consumers.ts';
import type { ConsumerRow } from '../store/tables.ts';
import { verifySecret } from './secrets.ts';

function oauthError(status: number, error: string, description: string, entry: { name: string; code: number; propertyName?: string }, headers?: Record<string, string>): ApiError {
  return new ApiError(status, [{ ...entry, message: description }], { oauth: { error, error_description: description }, ...(headers ? { headers } : {}) });
}

const invalidClient = () =>
  oauthError(401, 'invalid_client', 'Client authentication failed.', { name: 'AuthenticationError', code: 2001 }, {
    'www-authenticate': 'Basic realm="sluice", charset="UTF-8"',
  });

/** Client id and secret from HTTP Basic (each URL-encoded, RFC 6749 §2.3.1) or the body. */
function clientCredentials(request: FastifyRequest, body: Record<string, unknown>): { id: string; secret: string } | undefined {
  const header = request.headers.authorization;
  const basic = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    try {
      return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
    } catch {
      return undefined;
    }
  }
  if (typeof body.client_id === 'string' && typeof body.client_secret === 'string') return { id: body.client_id, secret: body.client_secret };
  return undefined;
}

async function authenticateClient(db: Db, request: FastifyRequest, body: Record<string, unknown>): Promise<ConsumerRow> {
  const credentials = clientCredentials(request, body);
  if (!credentials) throw invalidClient();
  const client = await findClient(db, credentials.id);
  if (!client?.secretHash || !(await verifySecret(credentials.secret, client.secretHash))) throw invalidClient();
  return client;
}

export function authRoutes(app: FastifyInstance, { db, config }: { db: Db; config: Config }): void {
  app.post('/v1/oauth/token', async (request, reply) => {
    const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
    const grantType = body.grant_type;
    if (typeof grantType !== 'string' || !grantType) {
      throw oauthError(400, 'invalid_request', 'grant_type is required.', { name: 'ValidationError', code: VALIDATION_CODES.required, propertyName: 'grant_type' });
    }
    if (grantType !== 'client_credentials' && grantType !== 'refresh_token') {
      throw oauthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported here.`, {
        name: 'ValidationError',
        code: VALIDATION_CODES.enum,
        propertyName: 'grant_type',
      });
    }
    const client = await authenticateClient(db, request, body);
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (grantType === 'client_credentials') {
      return issueTokens(db, client.id, { ttlSeconds: config.tokenTtl, withRefresh: true });
    }
    if (typeof body.refresh_token !== 'string' || !body.refresh_token) {
      throw oauthError(400, 'invalid_request', 'refresh_token is required.', { name: 'ValidationError', code: VALIDATION_CODES.required, propertyName: 'refresh_token' });
    }
    const issued = await rotateRefreshToken(db, body.refresh_token, client.id, config.tokenTtl);
    if (!issued) {
      throw oauthError(400, 'invalid_grant', 'The refresh token is invalid, expired or already used.', {
        name: 'ValidationError',
        code: VALIDATION_CODES.format,
        propertyName: 'refresh_token',
      });
    }
    return issued;
  });

  app.get('/v1/oauth/token/info', async (request) => {
    const token = bearerToken(request);
    const row = token ? await lookupAccessToken(db, token) : undefined;
    if (!row) await authenticate(db, request); // throws the right 401
    const ttl = Math.max(0, row!.expiresAt - Date.now());
    return { active: ttl > 0, expired: ttl === 0, expires: iso(row!.expiresAt), ttl };
  });

  app.get('/v1/oauth/me', async (request) => {
    const { consumer } = await authenticate(db, request);
    const me: Record<string, unknown> = {
      privileges: consumer.type === 'user' ? ['MY_ACCOUNT'] : [],
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      consumer_type: consumer.type,
      consumer_email: consumer.email,
    };
    if (consumer.type === 'user' && consumer.language) me.language = consumer.language;
    return me;
  });
}
