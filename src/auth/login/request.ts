/**
 * The authorization request of `/v1/authorize` (RFC 6749 §4.1.1, §4.2.1; RFC 7636 §4.3;
 * docs/api.md#browser-sign-in), checked in the RFC's order:
 *
 * 1. `client_id` must name an enabled client and `redirect_uri` be exactly (string equality,
 *    RFC 9700 §4.1.3) one of its registered URIs (a registered path is relative to API_URL,
 *    `first-party.ts`). Otherwise the user agent must not be sent
 *    anywhere: an error page (RFC 6749 §4.1.2.1, §4.2.2.1).
 * 2. Once the redirect URI is trusted, other faults go back to the client as `error=` on the
 *    redirect: `response_type` missing (`invalid_request`) or not `token`/`code`
 *    (`unsupported_response_type`); for `code`, a missing or malformed `code_challenge` or a
 *    `code_challenge_method` other than S256 (`invalid_request`).
 */
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { findClient, redirectUrisOf } from '../../store/consumers.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { resolveRedirectUris } from '../../first-party.ts';
import { PKCE_VALUE } from '../pkce.ts';
import { errorRedirect } from './redirect.ts';

export interface AuthorizationRequest {
  responseType: 'token' | 'code';
  client: ConsumerRow;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string | undefined;
}

export type Checked =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'page'; title: string; message: string }
  | { kind: 'redirect'; location: string };

/** The parameters that describe an authorization request, carried through the login and consent forms. */
export const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method'] as const;

function single(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Checks the authorization request `params` in the order of the module's list: `ok` with the
 * request, a `page` to show (no redirect URI to trust), or a `redirect` carrying the OAuth error.
 */
export async function checkAuthorizationRequest(db: Db, config: Pick<Config, 'apiUrl'>, params: Record<string, unknown>): Promise<Checked> {
  const clientId = single(params, 'client_id');
  const client = clientId ? await findClient(db, clientId) : undefined;
  if (!client || client.disabled) {
    return { kind: 'page', title: 'Unknown application', message: 'The application that sent you here is not registered with this service, so you cannot sign in to it. Contact its developer.' };
  }
  const redirectUri = single(params, 'redirect_uri');
  if (!redirectUri || !resolveRedirectUris(redirectUrisOf(client), config).includes(redirectUri)) {
    return {
      kind: 'page',
      title: 'Unregistered return address',
      message: `${client.name} asked to send you back to an address that is not registered for it. For your safety, sign-in stopped here.`,
    };
  }
  const state = single(params, 'state');
  const responseType = params.response_type;
  const back = (error: string, description: string) => ({
    kind: 'redirect' as const,
    location: errorRedirect(redirectUri, responseType === 'token' ? 'token' : 'code', error, description, state),
  });
  if (responseType === undefined || responseType === '') return back('invalid_request', 'response_type is required.');
  if (responseType !== 'token' && responseType !== 'code') return back('unsupported_response_type', 'response_type must be token or code.');
  let codeChallenge: string | undefined;
  if (responseType === 'code') {
    codeChallenge = single(params, 'code_challenge');
    if (!codeChallenge || !PKCE_VALUE.test(codeChallenge)) return back('invalid_request', 'code_challenge (PKCE, RFC 7636) is required: 43 to 128 characters.');
    if (params.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.');
  }
  return { kind: 'ok', request: { responseType, client, redirectUri, state, codeChallenge } };
}

/** The request's parameters as hidden form fields (name, value) for the login and consent forms. */
export function hiddenFields(request: AuthorizationRequest): [string, string][] {
  const fields: [string, string][] = [
    ['response_type', request.responseType],
    ['client_id', request.client.clientId!],
    ['redirect_uri', request.redirectUri],
  ];
  if (request.state !== undefined) fields.push(['state', request.state]);
  if (request.codeChallenge) fields.push(['code_challenge', request.codeChallenge], ['code_challenge_method', 'S256']);
  return fields;
}
