/**
 * refresh_token (RFC 6749 §6, docs/api.md#token-endpoint): rotates the machine client's refresh
 * token; a rotated token presented again revokes its whole family (RFC 9700 §4.14,
 * `rotateRefreshToken`).
 */
import { invalidGrant, invalidRequest } from '../oauth-errors.ts';
import { refreshScope, rotateRefreshToken } from '../tokens.ts';
import { type GrantContext, param, requestedScope } from './grant.ts';

export const grantType = 'refresh_token';
export const allowPublicClients = false;

/**
 * New tokens for a refresh token of this client (RFC 6749 §6), which is used up (rotation, RFC
 * 9700 §4.14.2; `rotateRefreshToken`). Throws `invalid_request` without one, `invalid_grant`
 * when it is unknown, expired, another consumer's or used before (which also revokes its family).
 * The new tokens keep the refresh token's scope; a `scope` parameter may narrow it, never widen
 * it (RFC 6749 §6: `invalid_scope`, the refresh token left unused).
 */
export async function handler({ db, config, client, body, now }: GrantContext) {
  const refreshToken = param(body, 'refresh_token');
  if (!refreshToken) throw invalidRequest('refresh_token is required.', 'refresh_token');
  const kept = await refreshScope(db, refreshToken, client.id);
  const narrowTo = kept ? requestedScope(body, kept) : undefined;
  const issued = await rotateRefreshToken(db, refreshToken, client.id, config.tokenTtl, now, narrowTo);
  if (!issued) throw invalidGrant('The refresh token is invalid, expired or already used.', 'refresh_token');
  return issued;
}
