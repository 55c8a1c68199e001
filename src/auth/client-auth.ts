/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3, §3.2.1):
 *
 * - confidential clients: HTTP Basic with the URL-encoded id and secret (RFC 6749 §2.3.1,
 *   docs/api.md#token-endpoint), or `client_id` + `client_secret` in the body;
 * - public clients (registered without a secret, `admin client create --public`): `client_id`
 *   in the body, accepted only where the caller allows it (the authorization_code grant, whose
 *   PKCE verifier proves possession, and revocation).
 *
 * A disabled client fails like an unknown one. Secrets are compared as argon2id hashes.
 */
import type { FastifyRequest } from 'fastify';
import type { Db } from '../store/db.ts';
import { findClient } from '../store/consumers.ts';
import type { ConsumerRow } from '../store/tables.ts';
import { invalidClient } from './oauth-errors.ts';
import { verifySecret } from './secrets.ts';

export interface ClientCredentials {
  id: string;
  /** Absent for a public client identifying itself with client_id only. */
  secret?: string;
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** The credentials the request presents (Basic header first, then the body), or undefined. */
export function presentedCredentials(request: FastifyRequest, body: Record<string, unknown>): ClientCredentials | undefined {
  const header = request.headers.authorization;
  const basic = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    try {
      return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
    } catch {
      return undefined;
    }
  }
  if (typeof body.client_id !== 'string' || !body.client_id) return undefined;
  return { id: body.client_id, ...(typeof body.client_secret === 'string' ? { secret: body.client_secret } : {}) };
}

/**
 * The authenticated client; throws 401 invalid_client. `allowPublic` lets a client registered
 * without a secret in with its id alone; a client that has a secret must always present it.
 * `secretChecked` hears whether a presented secret matched, when it was judged: compared with a
 * client's secret, or presented for a client id that does not exist (a guess all the same); the
 * failure limits count a mismatch against the client id everywhere (rate-limit.ts).
 */
export async function authenticateClient(
  db: Db,
  credentials: ClientCredentials | undefined,
  { allowPublic, secretChecked = () => {} }: { allowPublic: boolean; secretChecked?: (matched: boolean) => void },
): Promise<ConsumerRow> {
  if (!credentials) throw invalidClient();
  const client = await findClient(db, credentials.id);
  if (!client && credentials.secret !== undefined) secretChecked(false);
  if (!client || client.disabled) throw invalidClient();
  if (!client.secretHash) {
    if (allowPublic && credentials.secret === undefined) return client;
    throw invalidClient(allowPublic ? 'A public client sends no secret.' : 'A public client cannot use this grant; use authorization_code with PKCE.');
  }
  if (credentials.secret === undefined) throw invalidClient();
  const matched = await verifySecret(credentials.secret, client.secretHash);
  secretChecked(matched);
  if (!matched) throw invalidClient();
  return client;
}
