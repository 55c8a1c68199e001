/**
 * Issuing and checking OAuth 2.0 bearer tokens (RFC 6749 §1.4–1.5, docs/api.md#authentication).
 * Access tokens live `TOKEN_TTL` seconds; refresh tokens (machine clients only) 30 days and rotate
 * on every use: a rotated refresh token presented again revokes its whole family (RFC 9700 §4.14).
 */
import type { Db } from '../store/db.ts';
import { findToken, insertTokens, revokeFamily, revokeToken, tokenHash } from '../store/tokens.ts';
import type { TokenRow } from '../store/tables.ts';
import { randomToken } from './secrets.ts';

export const REFRESH_TTL_MS = 30 * 24 * 3600 * 1000;

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
  refresh_token?: string;
}

/**
 * Issues an access token (and a refresh token when `withRefresh`) for the consumer, in `family`
 * (a new one when omitted). `ttlSeconds` is the access token lifetime.
 */
export async function issueTokens(
  db: Db,
  consumerId: string,
  options: { ttlSeconds: number; withRefresh: boolean; family?: string; now?: number; clientId?: string | null },
): Promise<IssuedTokens> {
  const now = options.now ?? Date.now();
  const family = options.family ?? randomToken();
  const clientId = options.clientId ?? null;
  const access = randomToken();
  const rows: TokenRow[] = [
    { tokenHash: tokenHash(access), kind: 'access', consumerId, family, expiresAt: now + options.ttlSeconds * 1000, revoked: 0, createdAt: now, clientId },
  ];
  const issued: IssuedTokens = { access_token: access, token_type: 'Bearer', expires_in: options.ttlSeconds };
  if (options.withRefresh) {
    const refresh = randomToken();
    rows.push({ tokenHash: tokenHash(refresh), kind: 'refresh', consumerId, family, expiresAt: now + REFRESH_TTL_MS, revoked: 0, createdAt: now, clientId });
    issued.refresh_token = refresh;
  }
  await insertTokens(db, rows);
  return issued;
}

/**
 * Exchanges a refresh token for a new pair (rotation). Returns undefined when the token is
 * unknown, expired, of another consumer, or already used — in the last case the whole family is
 * revoked, since a rotated token coming back means it leaked.
 */
export async function rotateRefreshToken(
  db: Db,
  refreshToken: string,
  consumerId: string,
  ttlSeconds: number,
  now = Date.now(),
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
  return issueTokens(db, consumerId, { ttlSeconds, withRefresh: true, family: row.family, now, clientId: row.clientId });
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
