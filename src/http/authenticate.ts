/**
 * Bearer tokens on token-bearing endpoints (docs/api.md#authentication): the token comes as the
 * query parameter `access_token` or as `Authorization: Bearer …`. Missing, unknown, revoked or
 * expired → 401 AuthenticationError; so is a token whose consumer, or whose client, the operator
 * disabled (`admin client disable`): it stops working at once. Contract access
 * (docs/api.md#contract-access): a consumer may act on a contract only when it was granted it;
 * otherwise 403 ForbiddenError, with no data.
 *
 * Roles and scopes (docs/api.md#roles-and-scopes), from the permission table
 * (`permissions.ts`), enforced here for every route by its operation id (`installPermissions`):
 * a route without an entry fails the start; a token without the operation's scope → 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope"` (RFC 6750 §3.1) before the handler runs;
 * a consumer whose role on the request's contract is below the operation's → 403 naming the
 * operation and the role it needs, where the contract becomes known (`requireContractAccess`);
 * there too, a user without two-factor sign-in on a contract that requires it → 403 naming
 * `twoFactor` (machine clients are not affected).
 * A contract operation that answers success without that check is answered 500 instead: no
 * handler can forget it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, authenticationError, forbiddenError } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { findConsumer } from '../store/consumers.ts';
import { type GrantRole, grantRole } from '../store/contracts.ts';
import { lookupAccessToken, parseScope } from '../store/tokens.ts';
import { lacksRequiredTwoFactor } from '../store/two-factor.ts';
import type { ConsumerRow, TokenRow } from '../store/tables.ts';
import { allows, operationId, type Permission, permissionOf } from './permissions.ts';
import { ref } from './openapi.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's operation id (`permissions.ts`), set at registration by `installPermissions`. */
    operation?: string;
    /** The route's entry of the permission table, set at registration by `installPermissions`. */
    permission?: Permission;
  }
}

/** A valid access token and its consumer. */
export interface TokenHolder {
  consumer: ConsumerRow;
  token: TokenRow;
}

/** The token holder acting in a request, with the request's operation (`permissions.ts`). */
export interface Principal extends TokenHolder {
  /** The operation id of the request's route (`GET /collection/inputs/{id}`). */
  operation: string;
  /** Its entry of the permission table; undefined only for a route outside the table (refused). */
  permission: Permission | undefined;
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
export async function resolveAccessToken(db: Db, token: string): Promise<TokenHolder | undefined> {
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
const lookups = new WeakMap<FastifyRequest, { token: string; principal: Promise<TokenHolder | undefined> }>();

/**
 * `resolveAccessToken` of the request's token, looked up at most once per request (the rate
 * limiter, `http/rate-limit.ts`, and then the handler both ask); undefined without a token.
 */
export function requestPrincipal(db: Db, request: FastifyRequest): Promise<TokenHolder | undefined> | undefined {
  const token = bearerToken(request);
  if (!token) return undefined;
  const known = lookups.get(request);
  if (known?.token === token) return known.principal;
  const principal = resolveAccessToken(db, token);
  lookups.set(request, { token, principal });
  return principal;
}

/** The requests whose contract was checked against the operation's role (`requireContractAccess`). */
const contractChecked = new WeakSet<object>();
/** The request of each principal `authenticate` made, for `requireContractAccess` to mark. */
const requestOf = new WeakMap<Principal, FastifyRequest>();

/**
 * The consumer behind the request's access token, with the request's operation; throws 401 when
 * there is none valid.
 */
export async function authenticate(db: Db, request: FastifyRequest, now = Date.now()): Promise<Principal> {
  const lookup = requestPrincipal(db, request);
  if (!lookup) throw authenticationError('An access token is required (query access_token or Authorization: Bearer).', 'access_token');
  const holder = await lookup;
  if (!holder) throw authenticationError('The access token is unknown or revoked.', 'access_token');
  if (holder.token.expiresAt <= now) throw authenticationError('The access token has expired.', 'access_token');
  const config = request.routeOptions.config;
  const principal: Principal = { ...holder, operation: config.operation ?? operationId(request.method, request.routeOptions.url ?? request.url), permission: config.permission };
  requestOf.set(principal, request);
  return principal;
}

/**
 * The one contract check (docs/api.md#contract-access, #roles-and-scopes): throws 403 unless the
 * principal was granted the contract in a role that allows the request's operation. Without a
 * grant the error names `propertyName` and says "No access to `subject`" (default: the contract
 * named by `propertyName`; the record named by it when the contract is the record's): a refusal
 * tells nothing of the contract or the record, not even an id. With a role below the operation's, it names
 * the operation and the role it needs (`roleError`); a user without two-factor sign-in on a
 * contract that requires it gets `twoFactorRequiredError`. Returns the principal's role.
 */
export async function requireContractAccess(db: Db, principal: Principal, contractId: string, propertyName = 'contractId', subject = `the contract named by ${propertyName}`): Promise<GrantRole> {
  const role = await grantRole(db, principal.consumer.id, contractId);
  if (!role) throw forbiddenError(`No access to ${subject}.`, propertyName);
  const { permission } = principal;
  if (!permission) throw forbiddenError(`${principal.operation} is not in the permission table; refused.`, propertyName);
  if (permission.access === 'contract' && !allows(permission, role, [permission.scope])) throw roleError(principal.operation, permission.role, role);
  // A contract that requires two-factor sign-in refuses its members' user tokens until they turn it on (machine clients are not affected).
  if (principal.consumer.type === 'user' && (await lacksRequiredTwoFactor(db, principal.consumer.id, contractId))) throw twoFactorRequiredError();
  const request = requestOf.get(principal);
  if (request) contractChecked.add(request);
  return role;
}

/**
 * Marks the principal's request as answered about a resource of no contract (the built-in filter
 * lists, docs/filters.md#built-in-lists): there is no contract to check, the token was
 * authenticated. Only for data every authenticated caller may read or be refused.
 */
export function noContractToCheck(principal: Principal): void {
  const request = requestOf.get(principal);
  if (request) contractChecked.add(request);
}

/**
 * 403 ForbiddenError for a member without two-factor sign-in on a contract that requires it
 * (docs/api.md#requiring-two-factor-sign-in): `propertyName` `twoFactor`; the message says how to
 * turn it on. Signing in still works, so that the member can.
 */
export function twoFactorRequiredError(): ApiError {
  return forbiddenError('This contract requires two-factor sign-in: turn it on for your account (Account in the console, or POST /v1/account/two-factor), then try again.', 'twoFactor');
}

/**
 * 403 ForbiddenError for a role below an operation's (docs/api.md#roles-and-scopes): the message
 * names the operation and the role it needs; `propertyName` is `role`, `propertyValue` the
 * consumer's role, `reason` the role needed.
 */
export function roleError(operation: string, needed: GrantRole, role: GrantRole): ApiError {
  return new ApiError(403, [
    {
      name: 'ForbiddenError',
      message: `${operation} needs the role ${needed} (or higher) on the contract; this consumer's role is ${role}.`,
      propertyName: 'role',
      propertyValue: role,
      reason: `needs role ${needed}`,
      code: 3001,
    },
  ]);
}

/**
 * 403 for a token without the scope an operation needs (RFC 6750 §3.1 `insufficient_scope`):
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>"` and the error object
 * naming the operation and the scope (`propertyName` `scope`, `propertyValue` the token's scope).
 */
export function insufficientScope(operation: string, needed: string, scope: string): ApiError {
  const message = `${operation} needs the scope ${needed}; the token's scope is "${scope}".`;
  return new ApiError(
    403,
    [{ name: 'ForbiddenError', message, propertyName: 'scope', propertyValue: scope, reason: 'insufficient_scope', code: 3001 }],
    { headers: { 'www-authenticate': `Bearer error="insufficient_scope", error_description="${message.replace(/["\\]/g, '')}", scope="${needed}"` } },
  );
}

/**
 * Enforces the permission table on `app` (call before registering routes):
 *
 * - at registration, every route gets its operation id (from its method and path, or the one its
 *   config names: a route whose path is configured) and entry in its config, and its OpenAPI
 *   description the 403 when the entry needs a role or a scope; a route without an entry throws
 *   (the app does not start);
 * - before each request's body is read, a valid token whose scope lacks the operation's → 403
 *   `insufficient_scope`; a route without an entry (none can be registered) → 403;
 * - a contract operation answering success without `requireContractAccess` having run → 500
 *   (logged): a handler that forgot the check fails closed.
 */
export function installPermissions(app: FastifyInstance, db: Db): void {
  app.addHook('onRoute', (route) => {
    // A route whose path is configured (the metadata under AUTH_URL's path) names its operation in its config.
    const named = route.config?.operation;
    const ids = named ? [named] : [...new Set([route.method].flat().map((method) => operationId(method, route.url)))];
    const entries = ids.map(permissionOf);
    const missing = ids.filter((_, i) => !entries[i]);
    if (missing.length) throw new Error(`No entry in the permission table (src/http/permissions.ts) for ${missing.join(', ')}.`);
    if (new Set(entries).size > 1) throw new Error(`Route ${route.url} has methods of different permissions (${ids.join(', ')}): register them apart.`);
    const permission = entries[0]!;
    route.config = { ...route.config, operation: ids[0]!, permission };
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (response && !response[403] && (permission.access === 'contract' || (permission.access === 'token' && permission.scope))) {
      route.schema = { ...route.schema, response: { ...response, 403: ref('ErrorObject', "ForbiddenError: the token lacks the operation's scope (insufficient_scope)") } };
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.is404) return;
    const { permission, operation } = request.routeOptions.config;
    if (!permission) throw forbiddenError(`${request.method} ${request.routeOptions.url} is not in the permission table; refused.`);
    if (permission.access === 'public' || !permission.scope) return;
    const holder = await requestPrincipal(db, request)?.catch(() => undefined);
    // No valid token: the handler answers 401.
    if (!holder || holder.token.expiresAt <= Date.now()) return;
    if (!parseScope(holder.token.scope).scopes.includes(permission.scope)) throw insufficientScope(operation!, permission.scope, holder.token.scope);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (request.routeOptions.config.permission?.access !== 'contract' || reply.statusCode >= 400 || contractChecked.has(request)) return payload;
    request.log.error({ operation: request.routeOptions.config.operation }, 'a contract operation answered without the contract check; refused');
    throw new ApiError(500, [{ name: 'InternalError', message: 'The contract of this request was not checked; refused.', code: 5001 }]);
  });
}
