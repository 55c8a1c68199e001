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
/** A credential: its environment variable, and whether it is a secret (masked by `sluice config`). */
type Credential = { readonly variable: string; readonly secret: boolean };

export interface ServiceRow {
  /** The input types of the service, as `type` of an input (`docs/api.md`, inputs). */
  readonly types: readonly string[];
  /** Base URLs, by setting name; each has a default. */
  readonly urls: Readonly<Record<string, Url>>;
  /** Credentials, by setting name; none has a default (unset → undefined). */
  readonly credentials: Readonly<Record<string, Credential>>;
  /** The problem with an input's `input` text for this service, or null when it is well formed. */
  readonly checkInput?: (input: string) => string | null;
}

const secret = (variable: string): Credential => ({ variable, secret: true });
const plain = (variable: string): Credential => ({ variable, secret: false });

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
    credentials: { apiKey: secret('YOUTUBE_API_KEY') },
  },
  tumblr: {
    types: ['user', 'tag'],
    urls: { apiUrl: ['TUMBLR_API_URL', 'https://api.tumblr.com/v2'] },
    credentials: { apiKey: secret('TUMBLR_API_KEY') },
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
    // The instance is named in the input itself.
    urls: {},
    credentials: {},
    checkInput: (input) =>
      MASTODON_INPUT.test(input) ? null : 'input must be tag@instance.host, user@instance.host, or an https tag or profile URL',
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
