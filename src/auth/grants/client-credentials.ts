/**
 * client_credentials (RFC 6749 §4.4, docs/api.md#token-endpoint): a confidential machine client
 * gets an access token and a refresh token (docs/api.md#authentication) for itself.
 */
import { clientScopes, recordSignIn } from '../../store/consumers.ts';
import { issueTokens } from '../tokens.ts';
import { type GrantContext, requestedScope } from './grant.ts';

export const grantType = 'client_credentials';
export const allowPublicClients = false;

/**
 * Tokens for the authenticated client itself (RFC 6749 §4.4): an access token of TOKEN_TTL
 * seconds and a refresh token (its last sign-in recorded), with the `scope` the request asks for (RFC 6749 §4.4.2), default
 * all the client was registered with; a scope beyond those is `invalid_scope`.
 */
export async function handler({ db, config, client, body, now }: GrantContext) {
  const allowed = clientScopes(client);
  const scope = requestedScope(body, allowed) ?? allowed;
  // A client's "sign-in" for the team's list (docs/api.md#team).
  await recordSignIn(db, client.id, now);
  return issueTokens(db, client.id, { ttlSeconds: config.tokenTtl, withRefresh: true, now, clientId: client.id, scope });
}
