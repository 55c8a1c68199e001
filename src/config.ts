/**
 * The one configuration object (decisions §11). It is read once from the environment (and an
 * optional `.env` file, loaded by the entry points) and validated; nothing else reads
 * `process.env`. An invalid value throws `ConfigError` naming the variable, which stops start-up.
 */

export interface Config {
  /** TCP port of the HTTP server (PORT, default 8080). */
  port: number;
  /** Address the HTTP server binds (HOST, default 127.0.0.1; set 0.0.0.0 to expose it). */
  host: string;
  /** `sqlite:<path>` (default `sqlite:./data/sluice.db`) or `postgres://…` (DATABASE_URL). */
  databaseUrl: string;
  /** Folder for the default database and the bootstrap credentials (DATA_DIR, default ./data). */
  dataDir: string;
  /** Public base addresses used in generated links (decisions §1); no trailing slash. */
  authUrl: string;
  apiUrl: string;
  queueUrl: string;
  /** Seconds between two polls of one input (POLL_INTERVAL, default 300). */
  pollInterval: number;
  /** Fetches under way at once across all inputs (COLLECT_CONCURRENCY, default 4). */
  collectConcurrency: number;
  /**
   * Seconds a collector process may hold an input it took (COLLECT_LEASE, default 120; PostgreSQL
   * only): if it dies mid-poll, the other collectors take the input over after about this long.
   * Must exceed the longest poll (a fetch times out after 15 s).
   */
  collectLease: number;
  /** Allow outbound requests to loopback and private addresses (ALLOW_PRIVATE_FETCH, default false). */
  allowPrivateFetch: boolean;
  /** Access token lifetime in seconds (TOKEN_TTL, default 3600). */
  tokenTtl: number;
  /**
   * Lifetime of a browser sign-in session in seconds (SESSION_TTL, default 28800: a working day).
   * While it lasts, an application (the console) gets a new token without the password; signing
   * out ends it.
   */
  sessionTtl: number;
  /** `max-age` of public reads in seconds (CONTENT_MAX_AGE, default 5). */
  contentMaxAge: number;
  /** Create the demo contract, collection, client and user on an empty database (SLUICE_BOOTSTRAP, default true). */
  bootstrap: boolean;
  /** pino log level (LOG_LEVEL, default info; `silent` turns logging off). */
  logLevel: string;
  /** Seconds between polls per service (POLL_INTERVAL_<SERVICE>, e.g. POLL_INTERVAL_TWITTER); else `pollInterval`. */
  pollIntervals: Record<string, number>;
  /** Base URLs and credentials of the external services (decisions §9); see `SERVICE_SETTINGS`. */
  services: ServiceSettings;
}

/**
 * Per service: each setting's environment variable and default (decisions §9). A base URL
 * variable holds everything before the API's own paths; credentials have no default.
 */
export const SERVICE_SETTINGS = {
  twitter: { apiUrl: ['TWITTER_API_URL', 'https://api.x.com'], bearerToken: ['TWITTER_BEARER_TOKEN'] },
  facebook: { apiUrl: ['FACEBOOK_API_URL', 'https://graph.facebook.com/v25.0'], accessToken: ['FACEBOOK_ACCESS_TOKEN'] },
  instagram: {
    apiUrl: ['INSTAGRAM_API_URL', 'https://graph.facebook.com/v25.0'],
    accessToken: ['INSTAGRAM_ACCESS_TOKEN'],
    userId: ['INSTAGRAM_USER_ID'],
  },
  youtube: {
    apiUrl: ['YOUTUBE_API_URL', 'https://www.googleapis.com/youtube/v3'],
    feedUrl: ['YOUTUBE_FEED_URL', 'https://www.youtube.com/feeds/videos.xml'],
    apiKey: ['YOUTUBE_API_KEY'],
  },
  tumblr: { apiUrl: ['TUMBLR_API_URL', 'https://api.tumblr.com/v2'], apiKey: ['TUMBLR_API_KEY'] },
  vimeo: { apiUrl: ['VIMEO_API_URL', 'https://api.vimeo.com'], accessToken: ['VIMEO_ACCESS_TOKEN'] },
  flickr: {
    apiUrl: ['FLICKR_API_URL', 'https://api.flickr.com/services/rest'],
    feedUrl: ['FLICKR_FEED_URL', 'https://www.flickr.com/services/feeds/photos_public.gne'],
    apiKey: ['FLICKR_API_KEY'],
  },
  vk: { apiUrl: ['VK_API_URL', 'https://api.vk.com/method'], accessToken: ['VK_ACCESS_TOKEN'] },
  mastodon: {},
  bluesky: {
    apiUrl: ['BLUESKY_API_URL', 'https://public.api.bsky.app'],
    /** The PDS that issues sessions (com.atproto.server.createSession) and proxies search for them. */
    pdsUrl: ['BLUESKY_PDS_URL', 'https://bsky.social'],
    identifier: ['BLUESKY_IDENTIFIER'],
    appPassword: ['BLUESKY_APP_PASSWORD'],
  },
  rss: {},
} as const satisfies Record<string, Record<string, readonly [string] | readonly [string, string]>>;

/** The settings of every service: `{twitter: {apiUrl, bearerToken}, …}`; unset credentials are undefined. */
export type ServiceSettings = {
  [S in keyof typeof SERVICE_SETTINGS]: { [K in keyof (typeof SERVICE_SETTINGS)[S]]: (typeof SERVICE_SETTINGS)[S][K] extends readonly [string, string] ? string : string | undefined };
};

/** Names of the settings that hold secrets (masked by `sluice config`). */
const SECRET_SETTINGS = new Set(['bearerToken', 'accessToken', 'apiKey', 'appPassword']);

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http or https URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function databaseUrl(env: Env, dataDir: string): string {
  const raw = env.DATABASE_URL || `sqlite:${dataDir}/sluice.db`;
  if (/^sqlite:.+/.test(raw) || /^postgres(ql)?:\/\/.+/.test(raw)) return raw;
  throw new ConfigError('DATABASE_URL', 'must be sqlite:<path> or postgres://…');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads and validates the configuration; throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const local = `http://localhost:${port}`;
  const dataDir = (env.DATA_DIR || './data').replace(/\/+$/, '');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: databaseUrl(env, dataDir),
    dataDir,
    authUrl: baseUrl(env, 'AUTH_URL', local),
    apiUrl: baseUrl(env, 'API_URL', local),
    queueUrl: baseUrl(env, 'QUEUE_URL', local),
    pollInterval: integer(env, 'POLL_INTERVAL', 300, 1, 86_400),
    collectConcurrency: integer(env, 'COLLECT_CONCURRENCY', 4, 1, 64),
    collectLease: integer(env, 'COLLECT_LEASE', 120, 2, 3600),
    allowPrivateFetch: boolean(env, 'ALLOW_PRIVATE_FETCH', false),
    tokenTtl: integer(env, 'TOKEN_TTL', 3600, 1, 86_400),
    sessionTtl: integer(env, 'SESSION_TTL', 28_800, 60, 604_800),
    contentMaxAge: integer(env, 'CONTENT_MAX_AGE', 5, 0, 86_400),
    bootstrap: boolean(env, 'SLUICE_BOOTSTRAP', true),
    logLevel,
    pollIntervals: Object.fromEntries(
      Object.keys(SERVICE_SETTINGS)
        .filter((service) => env[`POLL_INTERVAL_${service.toUpperCase()}`])
        .map((service) => [service, integer(env, `POLL_INTERVAL_${service.toUpperCase()}`, 300, 1, 86_400)]),
    ),
    services: serviceSettings(env),
  };
}

function serviceSettings(env: Env): ServiceSettings {
  const out: Record<string, Record<string, string | undefined>> = {};
  for (const [service, settings] of Object.entries(SERVICE_SETTINGS)) {
    out[service] = {};
    for (const [key, [variable, fallback]] of Object.entries(settings as Record<string, readonly [string, string?]>)) {
      out[service][key] = fallback !== undefined ? baseUrl(env, variable, fallback) : env[variable] || undefined;
    }
  }
  return out as ServiceSettings;
}

/** The configuration with secrets masked (the password of a database URL), for `sluice config`. */
export function maskedConfig(config: Config): Config {
  const services = Object.fromEntries(
    Object.entries(config.services).map(([service, settings]) => [
      service,
      Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, SECRET_SETTINGS.has(key) && value ? '***' : value])),
    ]),
  ) as ServiceSettings;
  return { ...config, databaseUrl: config.databaseUrl.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@'), services };
}
