/**
 * client_credentials (RFC 6749 §4.4, docs/api.md#token-endpoint): a confidential machine client
 * gets an access token and a refresh token (docs/api.md#authentication) for itself.
 */
import { issueTokens } from '../tokens.ts';
import type { GrantContext } from './grant.ts';

export const grantType = 'client_credentials';
export const allowPublicClients = false;

/** Tokens for the authenticated client itself (RFC 6749 §4.4): an access token of TOKEN_TTL seconds and a refresh token. */
export async function handler({ db, config, client, now }: GrantContext) {
  return issueTokens(db, client.id, { ttlSeconds: config.tokenTtl, withRefresh: true, now, clientId: client.id });
}
