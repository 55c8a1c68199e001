/**
 * Bearer tokens on token-bearing endpoints (docs/api.md#authentication): the token comes as the
 * query parameter `access_token` or as `Authorization: Bearer …`. Missing, unknown, revoked or
 * expired → 401 AuthenticationError; so is a token whose consumer, or whose client, the operator
 * disabled (`admin client disable`): it stops working at once. Contract access
 * (docs/api.md#contract-access): a consumer may act on a contract only when the operator granted
 * it; otherwise 403 ForbiddenError, with no data.
 */
import type { FastifyRequest } from 'fastify';
import { authenticationError, forbiddenError } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { findConsumer } from '../store/consumers.ts';
import { hasGrant } from '../store/contracts.ts';
import { lookupAccessToken } from '../store/tokens.ts';
import type { ConsumerRow, TokenRow } from '../store/tables.ts';

export interface Principal {
  consumer: ConsumerRow;
  token: TokenRow;
}

/** The token sent with the request, from the query or the Authorization header. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const query = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof query === 'string' && query) return query;
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * The known, unrevoked access token `token` (expired or not) with its consumer, or undefined when
 * the token is unknown, revoked, or its consumer or client is disabled.
 */
export async function resolveAccessToken(db: Db, token: string): Promise<Principal | undefined> {
  const row = await lookupAccessToken(db, token);
  if (!row) return undefined;
  const consumer = await findConsumer(db, row.consumerId);
  if (!consumer || consumer.disabled) return undefined;
  if (row.clientId && row.clientId !== consumer.id) {
    const client = await findConsumer(db, row.clientId);
    if (!client || client.disabled) return undefined;
  }
  return { consumer, token: row };
}

/** The lookup of each request's token, made once: the rate limiter keys on its consumer before the handler authenticates. */
const lookups = new WeakMap<FastifyRequest, { token: string; principal: Promise<Principal | undefined> }>();

/**
 * `resolveAccessToken` of the request's token, looked up at most once per request (the rate
 * limiter, `http/rate-limit.ts`, and then the handler both ask); undefined without a token.
 */
export function requestPrincipal(db: Db, request: FastifyRequest): Promise<Principal | undefined> | undefined {
  const token = bearerToken(request);
  if (!token) return undefined;
  const known = lookups.get(request);
  if (known?.token === token) return known.principal;
  const principal = resolveAccessToken(db, token);
  lookups.set(request, { token, principal });
  return principal;
}

/** The consumer behind the request's access token; throws 401 when there is none valid. */
export async function authenticate(db: Db, request: FastifyRequest, now = Date.now()): Promise<Principal> {
  const lookup = requestPrincipal(db, request);
  if (!lookup) throw authenticationError('An access token is required (query access_token or Authorization: Bearer).', 'access_token');
  const principal = await lookup;
  if (!principal) throw authenticationError('The access token is unknown or revoked.', 'access_token');
  if (principal.token.expiresAt <= now) throw authenticationError('The access token has expired.', 'access_token');
  return principal;
}

/**
 * Throws 403 ForbiddenError unless the principal was granted the contract; `propertyName` names the
 * field that named it. The message is fixed and names only the field: a refusal tells nothing of
 * the contract, not even its id, which a slug in the path would otherwise resolve to
 * (docs/api.md#errors).
 */
export async function requireContractAccess(db: Db, principal: Principal, contractId: string, propertyName = 'contractId'): Promise<void> {
  if (!(await hasGrant(db, principal.consumer.id, contractId))) {
    throw forbiddenError(`No access to the contract named by ${propertyName}.`, propertyName);
  }
}
