/**
 * Signing in to the console: OAuth 2.0 authorization code grant with PKCE S256 (RFC 6749 §4.1,
 * RFC 7636) as the public client `sluice-console`, against Sluice's own authorization API.
 *
 * - `signIn(returnTo)` stores `{state, verifier, returnTo}` in sessionStorage and sends the
 *   browser to `/v1/authorize`; Sluice shows its sign-in page when there is no sign-in session,
 *   and never a consent page for the console, so with a session the browser comes straight back.
 * - `completeSignIn()` (at start-up) takes `?code&state` (or `?error`) off the address, checks
 *   `state`, exchanges the code with the verifier and puts the browser back on `returnTo`.
 * - The access token lives in this module's memory and in this tab's sessionStorage
 *   (`sluice.token`, gone when the tab closes, never shared with other tabs): a reload or a link
 *   opened in the same tab uses it while it is valid (for 10 s more at least) instead of signing
 *   in again through two page loads (issue 33, "Fast": about a third of a screen's first
 *   showing). Without it, or expired, a reload signs in again (silently while the sign-in session
 *   lasts); a 401 does too. Sign-out removes it. Unsaved input survives in sessionStorage
 *   (`drafts.ts`).
 * - `signOut()` revokes the token (RFC 7009, `client_id` for a public client) and ends the
 *   sign-in session (`POST /v1/oauth/logout`), so the next sign-in asks for the password.
 * - More than 3 sign-ins within 30 s without a successful request in between stop with an
 *   error instead of looping (a clock or cookie problem would otherwise bounce forever).
 */
import type { ErrorObject } from './api.gen.ts';
import { config } from './config.ts';
import type { TokenAnswer } from './resources.ts';

const PENDING = 'sluice.signin';
const ATTEMPTS = 'sluice.signin.attempts';
const SIGNED_OUT = 'sluice.signedOut';

const TOKEN = 'sluice.token';
/** A kept token is used only while it stays valid this long (ms) more. */
const TOKEN_MARGIN_MS = 10_000;

let token: { value: string; expiresAt: number } | undefined;

/** Keeps `value` in memory and in this tab's sessionStorage (module description). */
function keep(value: { value: string; expiresAt: number } | undefined): void {
  token = value;
  if (value) sessionStorage.setItem(TOKEN, JSON.stringify(value));
  else sessionStorage.removeItem(TOKEN);
}

/** The token this tab kept, when it is still valid for `TOKEN_MARGIN_MS`. */
function kept(): { value: string; expiresAt: number } | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(TOKEN) ?? 'null') as { value?: unknown; expiresAt?: unknown } | null;
    if (value && typeof value.value === 'string' && typeof value.expiresAt === 'number' && value.expiresAt - Date.now() > TOKEN_MARGIN_MS) return { value: value.value, expiresAt: value.expiresAt };
  } catch {
    // Unreadable: sign in again.
  }
  return undefined;
}

/** The access token, or undefined before sign-in. */
export function accessToken(): string | undefined {
  return token?.value;
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(length: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(length)));
}

async function challengeOf(verifier: string): Promise<string> {
  if (!crypto.subtle) throw new Error('The console must be served over https (or from localhost): the browser offers SHA-256 only there.');
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

/** Where the browser is now, inside the console: path, query (and hash). */
export function here(): string {
  return location.pathname + location.search + location.hash;
}

/** Set once this page has started a sign-in: requests refused at once (several 401s) start only one. */
let leaving: Promise<never> | undefined;

/**
 * Sends the browser to the sign-in; resolves never (the page goes away). Throws when looping.
 * A second call while the first is under way joins it (counted once).
 */
export function signIn(returnTo = here()): Promise<never> {
  leaving ??= startSignIn(returnTo).catch((error: unknown) => {
    leaving = undefined;
    throw error;
  });
  return leaving;
}

async function startSignIn(returnTo: string): Promise<never> {
  const now = Date.now();
  const attempts = (JSON.parse(sessionStorage.getItem(ATTEMPTS) ?? '[]') as number[]).filter((at) => now - at < 30_000);
  if (attempts.length >= 3) {
    sessionStorage.removeItem(ATTEMPTS);
    throw new Error('Signing in keeps failing: the server does not accept the new access tokens. Check the computer\'s clock, then reload the page.');
  }
  sessionStorage.setItem(ATTEMPTS, JSON.stringify([...attempts, now]));
  sessionStorage.removeItem(SIGNED_OUT);
  // The token kept (if any) was refused or is too old: never used again.
  keep(undefined);
  const verifier = random(48);
  const state = random(16);
  sessionStorage.setItem(PENDING, JSON.stringify({ state, verifier, returnTo }));
  const url = new URL(`${config.authUrl}/v1/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
  return new Promise<never>(() => {});
}

/** A request worked with the token: the sign-in is not looping. */
export function signInWorked(): void {
  sessionStorage.removeItem(ATTEMPTS);
}

export type Start = { kind: 'signed-in' } | { kind: 'signed-out' } | { kind: 'sign-in' } | { kind: 'error'; message: string };

/**
 * At start-up: finishes a sign-in that comes back on the address (`code`/`error` with `state`).
 * `signed-in`: the token is in memory and the address is the screen to show; `signed-out`: the
 * user signed out in this tab; `sign-in`: no token (start one); `error`: show the message.
 */
export async function completeSignIn(): Promise<Start> {
  const params = new URLSearchParams(location.search);
  const state = params.get('state');
  const pendingText = sessionStorage.getItem(PENDING);
  if (!state || !(params.has('code') || params.has('error'))) {
    if (sessionStorage.getItem(SIGNED_OUT)) return { kind: 'signed-out' };
    token = kept();
    return token ? { kind: 'signed-in' } : { kind: 'sign-in' };
  }
  sessionStorage.removeItem(PENDING);
  const pending = pendingText ? (JSON.parse(pendingText) as { state: string; verifier: string; returnTo: string }) : undefined;
  // Off the address at once: a code is single use, and a reload must not present it again.
  history.replaceState(null, '', pending?.state === state ? pending.returnTo : `${location.pathname}`);
  if (!pending || pending.state !== state) return { kind: 'sign-in' };
  if (params.has('error')) {
    return { kind: 'error', message: params.get('error_description') ?? `Sign-in failed (${params.get('error')}).` };
  }
  const response = await fetch(`${config.authUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: config.redirectUri, client_id: config.clientId, code_verifier: pending.verifier }),
  });
  const body = (await response.json().catch(() => ({}))) as Partial<TokenAnswer> & Pick<ErrorObject, 'error_description'>;
  if (!response.ok || !body.access_token) return { kind: 'error', message: body.error_description ?? `Sign-in failed (HTTP ${response.status}).` };
  keep({ value: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 0) * 1000 });
  return { kind: 'signed-in' };
}

/**
 * Signs out: revokes the access token (RFC 7009) and ends the sign-in session with a form post to
 * `/v1/oauth/logout`, which sends the browser back to the console (showing "signed out").
 */
export async function signOut(): Promise<void> {
  const value = token?.value;
  keep(undefined);
  // Unsaved input stays with the person who typed it: not left in the tab for the next one.
  for (const key of Object.keys(sessionStorage)) if (key.startsWith('sluice.draft:')) sessionStorage.removeItem(key);
  sessionStorage.setItem(SIGNED_OUT, '1');
  if (!value) return location.assign(config.redirectUri);
  await fetch(`${config.authUrl}/v1/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: value, token_type_hint: 'access_token', client_id: config.clientId }),
  }).catch(() => undefined);
  const form = document.createElement('form');
  form.method = 'post';
  form.action = `${config.authUrl}/v1/oauth/logout`;
  for (const [name, v] of Object.entries({ client_id: config.clientId, token: value, post_logout_redirect_uri: config.redirectUri })) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = v;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}
