/**
 * Where the browser goes back to the client (RFC 6749 §4.1.2, §4.2.2, §4.1.2.1, §4.2.2.1): for
 * `response_type=token` the parameters go in the fragment (`#access_token=…&token_type=Bearer
 * &expires_in=…&state=…`), for `code` in the query (`?code=…&state=…`), appended to any query the
 * registered URI already has. Values are form-encoded (application/x-www-form-urlencoded).
 */

export type Mode = 'token' | 'code';

/** `redirectUri` with `params` (undefined values left out) in the fragment or query. */
export function redirectWith(redirectUri: string, mode: Mode, params: Record<string, string | undefined>): string {
  const encoded = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  if (mode === 'token') return `${redirectUri}#${encoded}`;
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${encoded}`;
}

/** The error redirect of RFC 6749 §4.1.2.1 / §4.2.2.1. */
export function errorRedirect(redirectUri: string, mode: Mode, error: string, description: string | undefined, state: string | undefined): string {
  return redirectWith(redirectUri, mode, { error, error_description: description, state });
}
