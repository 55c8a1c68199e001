/**
 * The service table (`docs/services.md`): per service, the input types it offers, the base URLs
 * and credentials it reads from the environment, and the check of an input's `input` text beyond
 * its schema; each row lives in its service's folder (`<name>/row.ts`). Configuration
 * (`config.ts`), input validation (`management/inputs/schema.ts`) and read parameters
 * (`queue/params.ts`) read this table; what a service does (its connector, quota, push, connect
 * flow) is its module, listed in `index.ts` (docs/architecture.md#services).
 *
 * This module and the rows import nothing of Sluice above them, so every layer may use them.
 */
import type { OwnsEntries } from '../lib/item-keys.ts';
import type { ServiceRow, Url } from './kit/row.ts';
import { row as twitter } from './twitter/row.ts';
import { row as facebook } from './facebook/row.ts';
import { row as instagram } from './instagram/row.ts';
import { row as youtube } from './youtube/row.ts';
import { row as tumblr } from './tumblr/row.ts';
import { row as vimeo } from './vimeo/row.ts';
import { row as flickr } from './flickr/row.ts';
import { row as vk } from './vk/row.ts';
import { row as rss } from './rss/row.ts';
import { row as mastodon } from './mastodon/row.ts';
import { row as bluesky } from './bluesky/row.ts';
import { row as pixelfed } from './pixelfed/row.ts';
import { row as lemmy } from './lemmy/row.ts';
import { row as reddit } from './reddit/row.ts';
import { row as tiktok } from './tiktok/row.ts';
import { row as linkedin } from './linkedin/row.ts';
import { row as twitch } from './twitch/row.ts';
import { row as threads } from './threads/row.ts';

export type { ServiceRow } from './kit/row.ts';

/**
 * The service table: each service's row, from its folder. Base URL defaults are the vendors'
 * public API addresses (see each connector's docstring for the vendor document).
 */
export const SERVICES = { twitter, facebook, instagram, youtube, tumblr, vimeo, flickr, vk, rss, mastodon, bluesky, pixelfed, lemmy, reddit, tiktok, linkedin, twitch, threads } as const satisfies Record<string, ServiceRow>;

export type Service = keyof typeof SERVICES;

/** The service names, in the table's order. */
export const SERVICE_NAMES = Object.keys(SERVICES) as Service[];

/** The row of `name`, or undefined for a name that is not a service. */
export function serviceRow(name: string): ServiceRow | undefined {
  return Object.hasOwn(SERVICES, name) ? SERVICES[name as Service] : undefined;
}

/** Whether `service`'s items are its own entries (its row's `ownEntries`: feeds), for de-duplication's URL keys (lib/item-keys.ts `OwnsEntries`). */
export const ownsEntries: OwnsEntries = (service) => Boolean(serviceRow(service)?.ownEntries);

/** Services whose items carry no author id or username: their authors are named by `name` (the row's `authorsByName`; docs/api.md#erasure). */
export const NAME_ONLY_SERVICES: readonly string[] = SERVICE_NAMES.filter((name) => (SERVICES[name] as ServiceRow).authorsByName);

/**
 * The settings of every service as configuration holds them: `{twitter: {apiUrl, bearerToken}, …}`;
 * base URLs are always set, unset credentials are undefined.
 */
export type ServiceSettings = {
  [S in Service]: { [K in keyof (typeof SERVICES)[S]['urls']]: string } & {
    [K in keyof (typeof SERVICES)[S]['credentials']]: string | undefined;
  };
};

/**
 * The services a contract connects through OAuth 2.0 (RFC 6749, authorization code grant;
 * docs/api.md#connecting-an-account), beside the service table. Mastodon is not here: its
 * authorization server is the user's instance, where Sluice registers an app on the fly.
 *
 * - `app`: the service whose app (`<APP>_CLIENT_ID`, `<APP>_CLIENT_SECRET`) and URLs the flow
 *   uses: instagram signs in with the Facebook app.
 * - `authorizeUrl`, `tokenUrl`: environment variable and default (the vendor's endpoint).
 * - `pkce`: send a PKCE S256 challenge (RFC 7636) where the vendor documents it.
 * - `clientAuth`: how the token request carries the app secret (RFC 6749 §2.3.1: `basic` header
 *   or `post` body), as the vendor documents it.
 * - `field`: the credential field the access token is stored in.
 * - `extra`: more authorization request parameters.
 * - `clientIdParameter`: the vendor's name for `client_id` (TikTok's `client_key`).
 *
 * A token response without `token_type` (LinkedIn's; Threads documents `{access_token, user_id}`)
 * is read as `Bearer` for every service (lib/oauth-client.ts; RFC 6749 §5.1 requires the field).
 *
 * Vendor documents: X "OAuth 2.0 Authorization Code Flow with PKCE"; Facebook "Manually Build a
 * Login Flow" and "Long-Lived Access Tokens"; Google "Using OAuth 2.0 for Web Server
 * Applications"; Vimeo "Authentication" (developer.vimeo.com/api/authentication); Tumblr API
 * "OAuth 2.0" (github.com/tumblr/docs/blob/master/api.md); TikTok "Login Kit for Web" and "Manage
 * User Access Tokens" (developers.tiktok.com/doc/login-kit-web,
 * developers.tiktok.com/doc/oauth-user-access-token-management); LinkedIn "Authorization Code
 * Flow" and "Refresh Tokens with OAuth 2.0" (learn.microsoft.com/linkedin/shared/authentication).
 */
export interface OAuthRow {
  readonly app: Service;
  readonly authorizeUrl: Url;
  readonly tokenUrl: Url;
  readonly scopes: readonly string[];
  /** The separator of `scope` (Facebook takes commas, the others spaces). */
  readonly scopeSeparator?: string;
  readonly pkce: boolean;
  readonly clientAuth: 'basic' | 'post';
  readonly field: string;
  readonly extra?: Readonly<Record<string, string>>;
  /** The vendor's name of `client_id` in the authorization and token requests (TikTok: `client_key`). */
  readonly clientIdParameter?: string;
}

/**
 * The row of a service that signs in with its own app (`app` is the service): its endpoints read
 * from `<APP>_AUTHORIZE_URL` and `<APP>_TOKEN_URL`, defaulting to `authorizeUrl` and `tokenUrl`
 * (the vendor's); no PKCE, the app's secret in the token request's body (`post`) and the access
 * token stored in `accessToken`, unless `more` says otherwise.
 */
function ownApp<const A extends Service>(app: A, authorizeUrl: string, tokenUrl: string, scopes: readonly string[], more: Partial<Omit<OAuthRow, 'app'>> = {}): OAuthRow & { readonly app: A } {
  const variable = app.toUpperCase();
  return {
    app,
    authorizeUrl: [`${variable}_AUTHORIZE_URL`, authorizeUrl],
    tokenUrl: [`${variable}_TOKEN_URL`, tokenUrl],
    scopes,
    pkce: false,
    clientAuth: 'post',
    field: 'accessToken',
    ...more,
  };
}

/** Facebook Login with `scopes`: the Facebook app's flow, which instagram signs in with too. */
const facebookLogin = (scopes: readonly string[]) =>
  ownApp('facebook', 'https://www.facebook.com/v25.0/dialog/oauth', 'https://graph.facebook.com/v25.0/oauth/access_token', scopes, { pkce: true, scopeSeparator: ',' });

export const OAUTH = {
  twitter: ownApp('twitter', 'https://x.com/i/oauth2/authorize', 'https://api.x.com/2/oauth2/token', ['tweet.read', 'users.read', 'offline.access'], { pkce: true, clientAuth: 'basic', field: 'bearerToken' }),
  facebook: facebookLogin(['pages_show_list', 'pages_read_engagement']),
  instagram: facebookLogin(['instagram_basic', 'pages_show_list', 'pages_read_engagement']),
  youtube: ownApp('youtube', 'https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token', ['https://www.googleapis.com/auth/youtube.readonly'], {
    pkce: true,
    // A refresh token (offline) every time (consent), not only at the first connect.
    extra: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  }),
  vimeo: ownApp('vimeo', 'https://api.vimeo.com/oauth/authorize', 'https://api.vimeo.com/oauth/access_token', ['public'], { clientAuth: 'basic' }),
  tumblr: ownApp('tumblr', 'https://www.tumblr.com/oauth2/authorize', 'https://api.tumblr.com/v2/oauth2/token', ['basic', 'offline_access']),
  // No PKCE: Login Kit for Web documents none; the token request's code_verifier is "for mobile
  // and desktop apps only", whose challenge is a hex SHA-256, not RFC 7636's base64url.
  tiktok: ownApp('tiktok', 'https://www.tiktok.com/v2/auth/authorize/', 'https://open.tiktokapis.com/v2/oauth/token/', ['user.info.basic', 'video.list'], { scopeSeparator: ',', clientIdParameter: 'client_key' }),
  linkedin: ownApp('linkedin', 'https://www.linkedin.com/oauth/v2/authorization', 'https://www.linkedin.com/oauth/v2/accessToken', ['r_organization_social']),
  // Threads "Get Access Tokens and Permissions" (developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions).
  threads: ownApp('threads', 'https://threads.net/oauth/authorize', 'https://graph.threads.net/oauth/access_token', ['threads_basic', 'threads_keyword_search', 'threads_manage_mentions'], { scopeSeparator: ',' }),
} as const satisfies Partial<Record<Service, OAuthRow>>;

/** The `clientIdParameter` of an OAuth row, when it renames `client_id`, as an endpoint's property. */
export function idParameter(flow: OAuthRow): { clientIdParameter?: string } {
  return flow.clientIdParameter ? { clientIdParameter: flow.clientIdParameter } : {};
}

/** The services with a configured-app OAuth flow (mastodon's is per instance). */
export type OAuthService = keyof typeof OAUTH;
/** The apps the operator configures (`<APP>_CLIENT_ID`, …): one per `OAUTH[…].app`. */
export type OAuthApp = (typeof OAUTH)[OAuthService]['app'];
