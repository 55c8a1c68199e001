/**
 * refresh_token (RFC 6749 §6, docs/api.md#token-endpoint): rotates the machine client's refresh
 * token; a rotated token presented again revokes its whole family (RFC 9700 §4.14,
 * `rotateRefreshToken`).
 */
import { invalidGrant, invalidRequest } from '../oauth-errors.ts';
import { rotateRefreshToken } from '../tokens.ts';
import { type GrantContext, param } from './grant.ts';

export const grantType = 'refresh_token';
export const allowPublicClients = false;

/**
 * New tokens for a refresh token of this client (RFC 6749 §6), which is used up (rotation, RFC
 * 9700 §4.14.2; `rotateRefreshToken`). Throws `invalid_request` without one, `invalid_grant`
 * when it is unknown, expired, another consumer's or used before (which also revokes its family).
 */
export async function handler({ db, config, client, body, now }: GrantContext) {
  const refreshToken = param(body, 'refresh_token');
  if (!refreshToken) throw invalidRequest('refresh_token is required.', 'refresh_token');
  const issued = await rotateRefreshToken(db, refreshToken, client.id, config.tokenTtl, now);
  if (!issued) throw invalidGrant('The refresh token is invalid, expired or already used.', 'refresh_token');
  return issued;
}
