/**
 * authorization_code with PKCE S256 (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6,
 * docs/api.md#token-endpoint): the browser client exchanges the code from `/v1/authorize` for an
 * access token of the user. The code is single use, lives `CODE_TTL_MS`, and is bound to the
 * client, the redirect URI and the code challenge. It is marked used before anything else is
 * checked, atomically; a second use fails and revokes every token issued from the code (RFC 6749
 * §4.1.2). Users get no refresh token (docs/api.md#authentication: an expired user token needs the
 * browser flow again).
 */
import { revokeFamily, tokenHash } from '../../store/tokens.ts';
import { consumeCode, findCode } from '../../store/codes.ts';
import { findConsumer } from '../../store/consumers.ts';
import { invalidGrant, invalidRequest } from '../oauth-errors.ts';
import { verifyS256 } from '../pkce.ts';
import { issueTokens } from '../tokens.ts';
import { type GrantContext, param } from './grant.ts';

export const grantType = 'authorization_code';
export const allowPublicClients = true;

/** Lifetime of an authorization code: one minute (RFC 6749 §4.1.2 recommends at most ten). */
export const CODE_TTL_MS = 60_000;

/**
 * Exchanges an authorization code for an access token of its user (RFC 6749 §4.1.3, with PKCE:
 * RFC 7636 §4.6): the code must be this client's, unexpired and unused, for the same
 * `redirect_uri`, match the `code_verifier`, and its user still able to sign in. A code used a
 * second time revokes the tokens issued from it (RFC 6749 §4.1.2). Throws `invalid_request`
 * naming a missing parameter, `invalid_grant` naming the one at fault otherwise.
 */
export async function handler({ db, config, client, body, now }: GrantContext) {
  const code = param(body, 'code');
  if (!code) throw invalidRequest('code is required.', 'code');
  const redirectUri = param(body, 'redirect_uri');
  if (!redirectUri) throw invalidRequest('redirect_uri is required.', 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  if (!verifier) throw invalidRequest('code_verifier is required (PKCE, RFC 7636).', 'code_verifier');

  const row = await findCode(db, tokenHash(code));
  if (!row || row.clientId !== client.id) throw invalidGrant('The authorization code is invalid.', 'code');
  if (!(await consumeCode(db, row.codeHash))) {
    await revokeFamily(db, row.family);
    throw invalidGrant('The authorization code was already used; the tokens issued from it are revoked.', 'code');
  }
  if (row.expiresAt <= now) throw invalidGrant('The authorization code has expired.', 'code');
  if (row.redirectUri !== redirectUri) throw invalidGrant('redirect_uri differs from the one of the authorization request.', 'redirect_uri');
  if (!verifyS256(verifier, row.codeChallenge)) throw invalidGrant('code_verifier does not match the code challenge.', 'code_verifier');
  const user = await findConsumer(db, row.consumerId);
  if (!user || user.disabled) throw invalidGrant('The user of this code can no longer sign in.', 'code');
  return issueTokens(db, user.id, { ttlSeconds: config.tokenTtl, withRefresh: false, family: row.family, now, clientId: client.id });
}
