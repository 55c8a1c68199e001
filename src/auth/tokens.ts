/**
 * Issuing and checking OAuth 2.0 bearer tokens (RFC 6749 §1.4–1.5, docs/api.md#authentication).
 * Access tokens live `TOKEN_TTL` seconds; refresh tokens (machine clients only) 30 days and rotate
 * on every use: a rotated refresh token presented again revokes its whole family (RFC 9700 §4.14).
 */
import type { Db } from '../store/db.ts';
import { clientScopes, findConsumer } from '../store/consumers.ts';
import { findToken, formatScope, insertTokens, parseScope, revokeFamily, revokeToken, type Scope, SCOPES, tokenHash } from '../store/tokens.ts';
import type { TokenRow } from '../store/tables.ts';
import { randomToken } from './secrets.ts';

export const REFRESH_TTL_MS = 30 * 24 * 3600 * 1000;

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
  refresh_token?: string;
  /** The token's scope, space-separated (RFC 6749 §5.1, §3.3); empty when it has none. */
  scope: string;
}

/**
 * The scope of a token issued to `clientId` (a consumer id; none: a token the operator or a test
 * makes) when the request names none: all the client was registered with (RFC 6749 §3.3, the
 * documented default of docs/api.md#roles-and-scopes); all scopes without a client.
 */
export async function defaultScope(db: Db, clientId: string | null): Promise<Scope[]> {
  if (!clientId) return [...SCOPES];
  const client = await findConsumer(db, clientId);
  return client ? clientScopes(client) : [];
}

/**
 * Issues an access token (and a refresh token when `withRefresh`) for the consumer, in `family`
 * (a new one when omitted). `ttlSeconds` is the access token lifetime; `scope` the tokens' scope
 * (default `defaultScope` of the client).
 */
export async function issueTokens(
  db: Db,
  consumerId: string,
  options: { ttlSeconds: number; withRefresh: boolean; family?: string; now?: number; clientId?: string | null; scope?: readonly Scope[] },
): Promise<IssuedTokens> {
  const now = options.now ?? Date.now();
  const family = options.family ?? randomToken();
  const clientId = options.clientId ?? null;
  const scope = formatScope(options.scope ?? (await defaultScope(db, clientId)));
  const access = randomToken();
  const rows: TokenRow[] = [
    { tokenHash: tokenHash(access), kind: 'access', consumerId, family, expiresAt: now + options.ttlSeconds * 1000, revoked: 0, createdAt: now, clientId, scope },
  ];
  const issued: IssuedTokens = { access_token: access, token_type: 'Bearer', expires_in: options.ttlSeconds, scope };
  if (options.withRefresh) {
    const refresh = randomToken();
    rows.push({ tokenHash: tokenHash(refresh), kind: 'refresh', consumerId, family, expiresAt: now + REFRESH_TTL_MS, revoked: 0, createdAt: now, clientId, scope });
    issued.refresh_token = refresh;
  }
  await insertTokens(db, rows);
  return issued;
}

/**
 * Exchanges a refresh token for a new pair (rotation). Returns undefined when the token is
 * unknown, expired, of another consumer, or already used — in the last case the whole family is
 * revoked, since a rotated token coming back means it leaked. The new pair keeps the refresh
 * token's scope, or `narrowTo` when given (RFC 6749 §6: never wider; the caller checks
 * `narrowTo` against `refreshScope` first).
 */
export async function rotateRefreshToken(
  db: Db,
  refreshToken: string,
  consumerId: string,
  ttlSeconds: number,
  now = Date.now(),
  narrowTo?: readonly Scope[],
): Promise<IssuedTokens | undefined> {
  const row = await findToken(db, tokenHash(refreshToken));
  if (!row || row.kind !== 'refresh' || row.consumerId !== consumerId) return undefined;
  if (row.revoked) {
    await revokeFamily(db, row.family);
    return undefined;
  }
  if (row.expiresAt <= now) return undefined;
  if (!(await revokeToken(db, row.tokenHash))) {
    await revokeFamily(db, row.family);
    return undefined;
  }
  const kept = parseScope(row.scope).scopes;
  const scope = narrowTo ? kept.filter((name) => narrowTo.includes(name)) : kept;
  return issueTokens(db, consumerId, { ttlSeconds, withRefresh: true, family: row.family, now, clientId: row.clientId, scope });
}

/** The scope of the refresh token `refreshToken` of `consumerId`, or undefined when it is not one (unknown, another's, an access token). */
export async function refreshScope(db: Db, refreshToken: string, consumerId: string): Promise<Scope[] | undefined> {
  const row = await findToken(db, tokenHash(refreshToken));
  if (!row || row.kind !== 'refresh' || row.consumerId !== consumerId) return undefined;
  return parseScope(row.scope).scopes;
}

/**
 * Token revocation (RFC 7009 §2.1): revokes `token` when it was issued to the client (or is the
 * client's own). A refresh token takes its whole family with it (the access tokens issued from the
 * same grant, RFC 7009 §2.1 "SHOULD"); an access token only itself. Unknown tokens, tokens of other
 * clients and already revoked ones are left alone: the endpoint answers 200 either way (§2.2).
 */
export async function revokeIssued(db: Db, token: string, clientConsumerId: string): Promise<void> {
  const row = await findToken(db, tokenHash(token));
  if (!row || (row.clientId ?? row.consumerId) !== clientConsumerId) return;
  if (row.kind === 'refresh') await revokeFamily(db, row.family);
  else await revokeToken(db, row.tokenHash);
}
