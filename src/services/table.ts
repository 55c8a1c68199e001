/**
 * The services Sluice collects from, in one table (`docs/services.md`): per service, the input
 * types it offers, the base URLs and credentials it reads from the environment, and the check of
 * an input's `input` text beyond its schema. Configuration (`config.ts`), input validation
 * (`management/inputs/schema.ts`), read parameters (`queue/params.ts`) and the connectors
 * (`collect/connectors/`) all read this table; a new service is one row here and one connector.
 *
 * This module sits at the top of `src/` and imports nothing of Sluice, so every layer may use it.
 */

/** A base URL setting: its environment variable and default (everything before the API's own paths). */
type Url = readonly [variable: string, fallback: string];
/**
 * A credential: its environment variable, and whether it is a secret (masked by `sluice config`).
 * `optional`: the service works without it (an OAuth token beside an API key, a Mastodon token
 * for an instance's authenticated reads); it does not count for "configured" or as missing.
 */
type Credential = { readonly variable: string; readonly secret: boolean; readonly optional?: boolean };

export interface ServiceRow {
  /** The input types of the service, as `type` of an input (`docs/api.md`, inputs). */
  readonly types: readonly string[];
  /** Base URLs, by setting name; each has a default. */
  readonly urls: Readonly<Record<string, Url>>;
  /** Credentials, by setting name; none has a default (unset → undefined). */
  readonly credentials: Readonly<Record<string, Credential>>;
  /**
   * The problem with an input's `input` text for this service, or null when it is well formed.
   * `allowPrivateFetch`: ALLOW_PRIVATE_FETCH is on (local instances, tests), so forms naming a
   * local server (Mastodon's `http://host:port/…`) are accepted too.
   */
  readonly checkInput?: (input: string, options: { allowPrivateFetch: boolean }) => string | null;
}

const secret = (variable: string): Credential => ({ variable, secret: true });
const plain = (variable: string): Credential => ({ variable, secret: false });
const optional = (credential: Credential): Credential => ({ ...credential, optional: true });

/** An absolute http(s) URL with a host. */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** `tag@host`, `user@host` (optionally `#`/`@` first), or an https tag or profile URL of an instance. */
const MASTODON_INPUT = /^(?:[#@]?[\w.-]+@[a-z0-9.-]+\.[a-z]{2,}|https:\/\/[a-z0-9.-]+\.[a-z]{2,}\/(?:tags\/[\w.-]+|@[\w.-]+))$/i;
/** A tag or profile URL of an instance named by `http://` with a port (a local instance; only with ALLOW_PRIVATE_FETCH). */
const MASTODON_LOCAL_INPUT = /^http:\/\/(?:[a-z0-9.-]+|\[[0-9a-f:.]+\]):\d{1,5}\/(?:tags\/[\w.-]+|@[\w.-]+)$/i;

/**
 * The service table. Base URL defaults are the vendors' public API addresses (see each
 * connector's docstring for the vendor document); the Graph API version is pinned here.
 */
export const SERVICES = {
  twitter: {
    types: ['user', 'keyword', 'tag', 'location'],
    urls: { apiUrl: ['TWITTER_API_URL', 'https://api.x.com'] },
    credentials: { bearerToken: secret('TWITTER_BEARER_TOKEN') },
  },
  facebook: {
    types: ['page'],
    urls: { apiUrl: ['FACEBOOK_API_URL', 'https://graph.facebook.com/v25.0'] },
    credentials: { accessToken: secret('FACEBOOK_ACCESS_TOKEN') },
  },
  instagram: {
    types: ['user', 'tag', 'location'],
    urls: { apiUrl: ['INSTAGRAM_API_URL', 'https://graph.facebook.com/v25.0'] },
    credentials: { accessToken: secret('INSTAGRAM_ACCESS_TOKEN'), userId: plain('INSTAGRAM_USER_ID') },
  },
  youtube: {
    types: ['user', 'channel', 'playlist', 'keyword', 'location'],
    urls: {
      apiUrl: ['YOUTUBE_API_URL', 'https://www.googleapis.com/youtube/v3'],
      feedUrl: ['YOUTUBE_FEED_URL', 'https://www.youtube.com/feeds/videos.xml'],
    },
    // accessToken: a connected Google account's OAuth token, sent as Bearer instead of the key.
    credentials: { apiKey: secret('YOUTUBE_API_KEY'), accessToken: optional(secret('YOUTUBE_ACCESS_TOKEN')) },
  },
  tumblr: {
    types: ['user', 'tag'],
    urls: { apiUrl: ['TUMBLR_API_URL', 'https://api.tumblr.com/v2'] },
    // accessToken: a connected account's OAuth 2.0 token, sent as Bearer instead of api_key.
    credentials: { apiKey: secret('TUMBLR_API_KEY'), accessToken: optional(secret('TUMBLR_ACCESS_TOKEN')) },
  },
  vimeo: {
    types: ['user', 'album'],
    urls: { apiUrl: ['VIMEO_API_URL', 'https://api.vimeo.com'] },
    credentials: { accessToken: secret('VIMEO_ACCESS_TOKEN') },
  },
  flickr: {
    types: ['tag', 'user'],
    urls: {
      apiUrl: ['FLICKR_API_URL', 'https://api.flickr.com/services/rest'],
      feedUrl: ['FLICKR_FEED_URL', 'https://www.flickr.com/services/feeds/photos_public.gne'],
    },
    credentials: { apiKey: secret('FLICKR_API_KEY') },
  },
  vk: {
    types: ['user', 'group', 'tag'],
    urls: { apiUrl: ['VK_API_URL', 'https://api.vk.com/method'] },
    credentials: { accessToken: secret('VK_ACCESS_TOKEN') },
  },
  rss: {
    types: ['feed'],
    urls: {},
    credentials: {},
    checkInput: (input) => (isHttpUrl(input) ? null : 'input must be an absolute http(s) URL of a feed'),
  },
  mastodon: {
    types: ['tag', 'user'],
    // The instance is named in the input itself. A token is sent only to its own `instance`.
    urls: {},
    credentials: { accessToken: optional(secret('MASTODON_ACCESS_TOKEN')), instance: optional(plain('MASTODON_INSTANCE')) },
    checkInput: (input, { allowPrivateFetch }) =>
      MASTODON_INPUT.test(input) || (allowPrivateFetch && MASTODON_LOCAL_INPUT.test(input))
        ? null
        : `input must be tag@instance.host, user@instance.host, or an https tag or profile URL${allowPrivateFetch ? ' (or http://host:port/tags/x, http://host:port/@user)' : ''}`,
  },
  bluesky: {
    types: ['keyword', 'user'],
    urls: {
      apiUrl: ['BLUESKY_API_URL', 'https://public.api.bsky.app'],
      /** The PDS that issues sessions (com.atproto.server.createSession) and proxies search for them. */
      pdsUrl: ['BLUESKY_PDS_URL', 'https://bsky.social'],
    },
    credentials: { identifier: plain('BLUESKY_IDENTIFIER'), appPassword: secret('BLUESKY_APP_PASSWORD') },
  },
} as const satisfies Record<string, ServiceRow>;

export type Service = keyof typeof SERVICES;

/** The service names, in the table's order. */
export const SERVICE_NAMES = Object.keys(SERVICES) as Service[];

/** The row of `name`, or undefined for a name that is not a service. */
export function serviceRow(name: string): ServiceRow | undefined {
  return Object.hasOwn(SERVICES, name) ? SERVICES[name as Service] : undefined;
}

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
 *
 * Vendor documents: X "OAuth 2.0 Authorization Code Flow with PKCE"; Facebook "Manually Build a
 * Login Flow" and "Long-Lived Access Tokens"; Google "Using OAuth 2.0 for Web Server
 * Applications"; Vimeo "Authentication" (developer.vimeo.com/api/authentication); Tumblr API
 * "OAuth 2.0" (github.com/tumblr/docs/blob/master/api.md).
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
}

const FACEBOOK_LOGIN = {
  app: 'facebook',
  authorizeUrl: ['FACEBOOK_AUTHORIZE_URL', 'https://www.facebook.com/v25.0/dialog/oauth'],
  tokenUrl: ['FACEBOOK_TOKEN_URL', 'https://graph.facebook.com/v25.0/oauth/access_token'],
  scopeSeparator: ',',
  pkce: true,
  clientAuth: 'post',
  field: 'accessToken',
} as const;

export const OAUTH = {
  twitter: {
    app: 'twitter',
    authorizeUrl: ['TWITTER_AUTHORIZE_URL', 'https://x.com/i/oauth2/authorize'],
    tokenUrl: ['TWITTER_TOKEN_URL', 'https://api.x.com/2/oauth2/token'],
    scopes: ['tweet.read', 'users.read', 'offline.access'],
    pkce: true,
    clientAuth: 'basic',
    field: 'bearerToken',
  },
  facebook: { ...FACEBOOK_LOGIN, scopes: ['pages_show_list', 'pages_read_engagement'] },
  instagram: { ...FACEBOOK_LOGIN, scopes: ['instagram_basic', 'pages_show_list', 'pages_read_engagement'] },
  youtube: {
    app: 'youtube',
    authorizeUrl: ['YOUTUBE_AUTHORIZE_URL', 'https://accounts.google.com/o/oauth2/v2/auth'],
    tokenUrl: ['YOUTUBE_TOKEN_URL', 'https://oauth2.googleapis.com/token'],
    scopes: ['https://www.googleapis.com/auth/youtube.readonly'],
    pkce: true,
    clientAuth: 'post',
    field: 'accessToken',
    // A refresh token (offline) every time (consent), not only at the first connect.
    extra: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  },
  vimeo: {
    app: 'vimeo',
    authorizeUrl: ['VIMEO_AUTHORIZE_URL', 'https://api.vimeo.com/oauth/authorize'],
    tokenUrl: ['VIMEO_TOKEN_URL', 'https://api.vimeo.com/oauth/access_token'],
    scopes: ['public'],
    pkce: false,
    clientAuth: 'basic',
    field: 'accessToken',
  },
  tumblr: {
    app: 'tumblr',
    authorizeUrl: ['TUMBLR_AUTHORIZE_URL', 'https://www.tumblr.com/oauth2/authorize'],
    tokenUrl: ['TUMBLR_TOKEN_URL', 'https://api.tumblr.com/v2/oauth2/token'],
    scopes: ['basic', 'offline_access'],
    pkce: false,
    clientAuth: 'post',
    field: 'accessToken',
  },
} as const satisfies Partial<Record<Service, OAuthRow>>;

/** The services with a configured-app OAuth flow (mastodon's is per instance). */
export type OAuthService = keyof typeof OAUTH;
/** The apps the operator configures (`<APP>_CLIENT_ID`, …): one per `OAUTH[…].app`. */
export type OAuthApp = (typeof OAUTH)[OAuthService]['app'];
