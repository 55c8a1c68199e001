/**
 * The first-party client of every installation: the console (README "Five minutes with the console"), a
 * public OAuth client created by a migration with client id `sluice-console`.
 *
 * - Registered redirect URIs that are paths (`/console/`, only a migration can register one: the
 *   CLI wants absolute URIs) are relative to API_URL: `<API_URL>/console/`. Matching stays exact
 *   string equality (RFC 9700 §4.1.3) against the resolved URI.
 * - The consent page is skipped for this client alone, for the authorization code grant with
 *   PKCE: the console is part of Sluice, so asking whether Sluice may use Sluice would be noise.
 *   The sign-in page is still shown when there is no sign-in session.
 * - Its tokens carry every scope (the migration registered it with all of them, and a browser
 *   sign-in's token gets its client's scopes): what a console user may do is their role's on each
 *   contract (docs/api.md#roles-and-scopes).
 */
import type { Config } from './config.ts';

export const CONSOLE_CLIENT_ID = 'sluice-console';
export const CONSOLE_PATH = '/console/';

/** `<API_URL>/console/`: where the console is served and its registered redirect URI. */
export function consoleUrl(config: Pick<Config, 'apiUrl'>): string {
  return `${config.apiUrl}${CONSOLE_PATH}`;
}

/** The client's registered redirect URIs with paths resolved against API_URL. */
export function resolveRedirectUris(uris: string[], config: Pick<Config, 'apiUrl'>): string[] {
  return uris.map((uri) => (uri.startsWith('/') ? `${config.apiUrl}${uri}` : uri));
}

/** Whether the consent page is skipped for this client (the console only). */
export function skipsConsent(client: { clientId: string | null }): boolean {
  return client.clientId === CONSOLE_CLIENT_ID;
}
