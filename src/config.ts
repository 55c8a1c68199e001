/**
 * The one configuration object (docs/configuration.md). It is read once from the environment (and
 * an optional `.env` file, loaded by the entry points) and validated; nothing else reads
 * `process.env`. An invalid value throws `ConfigError` naming the variable, which stops start-up.
 */
import { parseSecretKey } from './lib/secret-box.ts';
import type { QuotaSettings, WebsubSettings } from './services/module.ts';
import { OAUTH, type OAuthService, SERVICE_NAMES, SERVICES, type ServiceRow, type ServiceSettings } from './services/table.ts';

/**
 * The operator's app at a service with a connect flow (docs/configuration.md#connect-flows): its
 * client id and secret (`<APP>_CLIENT_ID`, `<APP>_CLIENT_SECRET`; unset → the flow answers 400)
 * and the authorization and token endpoints (`<SERVICE>_AUTHORIZE_URL`, `<SERVICE>_TOKEN_URL`).
 */
export interface OAuthAppSettings {
  clientId: string | undefined;
  clientSecret: string | undefined;
  authorizeUrl: string;
  tokenUrl: string;
}

export interface Config {
  /** TCP port of the HTTP server (PORT, default 8080). */
  port: number;
  /** Address the HTTP server binds (HOST, default 127.0.0.1; set 0.0.0.0 to expose it). */
  host: string;
  /** `sqlite:<path>` (default `sqlite:./data/sluice.db`) or `postgres://…` (DATABASE_URL). */
  databaseUrl: string;
  /** Folder for the default database and the bootstrap credentials (DATA_DIR, default ./data). */
  dataDir: string;
  /** Public base addresses used in generated links (docs/api.md#conventions); no trailing slash. */
  authUrl: string;
  apiUrl: string;
  queueUrl: string;
  /** Seconds between two polls of one input (POLL_INTERVAL, default 300). */
  pollInterval: number;
  /** Seconds between safety-net polls of an input fed by push or stream (PUSH_POLL_INTERVAL, default 3600; docs/services.md#push-and-streams). */
  pushPollInterval: number;
  /** Seconds between kudos refreshes of a young item of a ranked collection (KUDOS_REFRESH, default 900; docs/services.md#kudos-refresh). */
  kudosRefresh: number;
  /** Seconds after its date that an item's kudos are still refreshed (KUDOS_WINDOW, default 172 800: 48 h). */
  kudosWindow: number;
  /**
   * Re-verification per service with a batch lookup (docs/services.md#re-verification):
   * `hours` between two checks of an item (REVERIFY_<SERVICE>_HOURS; 0 turns the service's off),
   * `days`: only items dated within that many days are checked (REVERIFY_<SERVICE>_DAYS; 0: every
   * stored item).
   */
  reverify: Record<string, { hours: number; days: number }>;
  /**
   * WebSub (docs/services.md#websub): subscribe to the hubs feeds name and YouTube channels to
   * YouTube's hub (WEBSUB, default true); the lease asked for, seconds (WEBSUB_LEASE_SECONDS,
   * default 864 000: 10 days; the hub decides); YouTube's hub (WEBSUB_YOUTUBE_HUB, default
   * https://pubsubhubbub.appspot.com/; WEBSUB_YOUTUBE=false leaves YouTube channels polled); the
   * seconds between two looks of the subscriber for subscriptions to send, renew or end
   * (WEBSUB_CHECK_INTERVAL, default 60). The hub calls back `{API_URL}/websub/<id>`: API_URL
   * must be reachable from it.
   */
  websub: WebsubSettings;
  /**
   * Polls under way at once in one collector process (COLLECT_CONCURRENCY, default 64): a slot is
   * refilled as soon as its poll ends, so this is sized for network latency, not CPU: a process
   * makes about COLLECT_CONCURRENCY ÷ (mean poll time in s) polls a second (docs/services.md#polling).
   */
  collectConcurrency: number;
  /**
   * Polls under way at once of one politeness key (a feed's host, an API account: lib/politeness.ts)
   * across the installation, and requests to one origin from one process (COLLECT_HOST_CONCURRENCY,
   * default 2): politeness, so a thousand feeds on one host do not hammer it (docs/services.md#polling).
   */
  collectHostConcurrency: number;
  /** The shortest and longest `interval` (s) an input may ask for (POLL_INTERVAL_MIN, default 60; POLL_INTERVAL_MAX, default 86 400). */
  pollIntervalMin: number;
  pollIntervalMax: number;
  /**
   * Seconds a collector process may hold an input it took (COLLECT_LEASE, default 120; PostgreSQL
   * only): if it dies mid-poll, the other collectors take the input over after about this long.
   * Must exceed the longest poll (a fetch times out after 15 s).
   */
  collectLease: number;
  /** Allow outbound requests to loopback and private addresses (ALLOW_PRIVATE_FETCH, default false). */
  allowPrivateFetch: boolean;
  /**
   * Image screening (IMAGE_SCREENING, `on` or `off`, default `on`; docs/filters.md#image-screening):
   * the collector classifies every image of a new item with nsfwjs's bundled model in worker
   * threads, off the poll's path. Off: items are still queued for screening (and screened once it
   * is turned on); an item a `media.nsfw` rule holds stays held until then.
   */
  imageScreening: boolean;
  /** Worker threads of image screening per collector process, each with its model (about 100 MB each) (IMAGE_SCREENING_THREADS, default 1). */
  imageScreeningThreads: number;
  /**
   * The Bluesky Jetstream WebSocket (`subscribe` endpoint) that serves every bluesky input, or null
   * when off (JETSTREAM_URL, default `wss://jetstream2.us-east.bsky.network/subscribe`, `off` turns
   * it off; docs/services.md#bluesky-jetstream).
   */
  jetstreamUrl: string | null;
  /** Seconds a collector process holds the Jetstream connection's lease without renewing it (JETSTREAM_LEASE, default 6): when it dies, another takes over after about this long. */
  jetstreamLease: number;
  /** Time limit of one webhook delivery request, ms (WEBHOOK_TIMEOUT_MS, default 10 000). */
  webhookTimeoutMs: number;
  /** Deliveries of one webhook under way at once (WEBHOOK_CONCURRENCY, default 4; docs/api.md#webhook-delivery). */
  webhookConcurrency: number;
  /** Wait before the first retry of a failed webhook delivery, ms, doubled per retry with jitter (WEBHOOK_RETRY_MS, default 5000). */
  webhookRetryMs: number;
  /** Seconds after its first attempt that a failing delivery is retried before its webhook is disabled (WEBHOOK_RETRY_WINDOW, default 86400). */
  webhookRetryWindow: number;
  /** Access token lifetime in seconds (TOKEN_TTL, default 3600). */
  tokenTtl: number;
  /**
   * Lifetime of a browser sign-in session in seconds (SESSION_TTL, default 28800: a working day).
   * While it lasts, an application (the console) gets a new token without the password; signing
   * out ends it.
   */
  sessionTtl: number;
  /**
   * Requests one consumer may make to the token-bearing endpoints per rate-limit window
   * (RATE_LIMIT_CONSUMER, default 600; 0 turns the limit off). Beyond it: 429 RateLimitError
   * (`docs/api.md#rate-limits`).
   */
  rateLimitConsumer: number;
  /** Requests one client address may make to the public reads per window (RATE_LIMIT_PUBLIC, default 6000; 0 turns it off). */
  rateLimitPublic: number;
  /** Analytics beacons one client address may send per window, counted in memory (RATE_LIMIT_BEACON, default 600; 0 turns it off; docs/api.md#analytics-beacon). */
  rateLimitBeacon: number;
  /** The rate-limit window in seconds (RATE_LIMIT_WINDOW, default 60). */
  rateLimitWindow: number;
  /** `max-age` of public reads in seconds (CONTENT_MAX_AGE, default 5). */
  contentMaxAge: number;
  /** Seconds the related content of one article address is kept before it is computed again (RELATED_MAX_AGE, default 600; docs/api.md#related-content). */
  relatedMaxAge: number;
  /** Articles not already answered Sluice fetches per contract per minute (RELATED_FETCHES_PER_MINUTE, default 30); beyond: 429. */
  relatedFetchesPerMinute: number;
  /**
   * The media proxy (MEDIA_PROXY, docs/api.md#media-proxy): `wall` (default) serves the wall's
   * images through `/v1/media/…`; `api` rewrites the content API's media URLs too; `off` changes
   * nothing (the route still answers signed URLs already given out).
   */
  mediaProxy: 'off' | 'wall' | 'api';
  /** Disk bound of the media proxy's cache in DATA_DIR/media-cache, MiB (MEDIA_CACHE_MB, default 256). */
  mediaCacheMb: number;
  /** Create the demo contract, collection, client and user on an empty database (SLUICE_BOOTSTRAP, default true). */
  bootstrap: boolean;
  /** pino log level (LOG_LEVEL, default info; `silent` turns logging off). */
  logLevel: string;
  /** Seconds between polls per service (POLL_INTERVAL_<SERVICE>, e.g. POLL_INTERVAL_TWITTER); else `pollInterval`. */
  pollIntervals: Record<string, number>;
  /**
   * The key that encrypts stored service credentials (SLUICE_SECRET_KEY: 32 bytes as base64 or 64
   * hex characters; validated here). Unset → a key file in DATA_DIR (`lib/secret-box.ts`).
   */
  secretKey: string | undefined;
  /**
   * Whether inputs of a contract without its own credential for a service use the
   * installation-wide one of the environment (SHARED_CREDENTIALS, default true). Set false when
   * several customers share the installation: each contract must connect its own
   * (docs/configuration.md#credentials).
   */
  sharedCredentials: boolean;
  /** The key `sluice admin rotate-key` re-encrypts with (SLUICE_NEW_SECRET_KEY, as SLUICE_SECRET_KEY); unset → a new random one. */
  newSecretKey: string | undefined;
  /**
   * Quotas counted per service credential (docs/configuration.md#quotas): YouTube Data API units
   * per Pacific day (YOUTUBE_DAILY_QUOTA, default 10 000, the default quota of a Google Cloud
   * project) and X posts read per UTC month (TWITTER_MONTHLY_READ_CAP, default 0: not counted);
   * 0 turns either off. Instagram's 30 hashtags a week is Meta's fixed rule.
   */
  quotas: QuotaSettings;
  /**
   * `GET /metrics` (docs/operations.md#metrics). `metricsToken` (METRICS_TOKEN, at least 16
   * characters): the Bearer token a scraper must send; set, it serves /metrics on the main port.
   * `metricsPort` (METRICS_PORT): a separate listener serving only /metrics, on `metricsHost`
   * (METRICS_HOST, default 127.0.0.1), which requires the token too when one is set. Neither →
   * no /metrics at all (404).
   */
  metricsToken: string | undefined;
  metricsPort: number | undefined;
  metricsHost: string;
  /**
   * Team e-mail (docs/configuration.md#e-mail): invitation and password-reset links sent through
   * an SMTP server — SMTP_URL (`smtp://[user:pass@]host[:port]` or `smtps://…`), SMTP_FROM (the
   * From address, required with SMTP_URL), SMTP_TIMEOUT_MS (each phase and the whole send, default
   * 10 000). Null when SMTP_URL is unset: links are only returned.
   */
  smtp: { url: string; from: string; timeoutMs: number } | null;
  /** Base URLs and credentials of the external services (`docs/services.md`), as the service table (`services/table.ts`) lists them. */
  services: ServiceSettings;
  /** The apps of the connect flows, per service (`OAUTH` of `services/table.ts`; instagram has facebook's app). */
  oauth: Record<OAuthService, OAuthAppSettings>;
  /** Sign-in through an external OpenID Connect provider (docs/configuration.md#openid-connect-sign-in), or undefined when off. */
  oidc: OidcSettings | undefined;
}

/**
 * The OpenID Connect provider of the optional sign-in (docs/configuration.md#openid-connect-sign-in):
 * its Issuer Identifier (OIDC_ISSUER, exactly as the provider's discovery document writes it;
 * https, or http on a loopback host only), the client Sluice is registered as (OIDC_CLIENT_ID,
 * OIDC_CLIENT_SECRET) and the provider's name on the login page's button (OIDC_NAME, default the
 * issuer's host name).
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  name: string;
}

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

const MEDIA_PROXY_MODES = ['off', 'wall', 'api'] as const;

function mediaProxy(env: Env): Config['mediaProxy'] {
  const raw = env.MEDIA_PROXY?.trim().toLowerCase() || 'wall';
  if (!(MEDIA_PROXY_MODES as readonly string[]).includes(raw)) throw new ConfigError('MEDIA_PROXY', `must be one of ${MEDIA_PROXY_MODES.join(', ')}, got "${env.MEDIA_PROXY}"`);
  return raw as Config['mediaProxy'];
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

/** A ws(s) URL (no query: the caller adds its own), or null for `off`. */
function webSocketUrl(env: Env, name: string, fallback: string): string | null {
  const raw = env[name] || fallback;
  if (raw === 'off') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute ws(s) URL or off, got "${raw}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new ConfigError(name, `must be a ws or wss URL or off, got "${raw}"`);
  if (url.search || url.hash) throw new ConfigError(name, 'must have no query or fragment (Sluice adds its own)');
  return url.href;
}

/** A service's WebSocket address as written (checked as `webSocketUrl` checks it; trailing slashes dropped), or `off`. */
function webSocketBase(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  return webSocketUrl(env, name, fallback) === null ? 'off' : raw.replace(/\/+$/, '');
}

function databaseUrl(env: Env, dataDir: string): string {
  const raw = env.DATABASE_URL || `sqlite:${dataDir}/sluice.db`;
  if (/^sqlite:.+/.test(raw) || /^postgres(ql)?:\/\/.+/.test(raw)) return raw;
  throw new ConfigError('DATABASE_URL', 'must be sqlite:<path> or postgres://…');
}

/**
 * Re-verification's defaults (docs/services.md#re-verification): X every item of the last 30 days
 * once a day (X Developer Policy, content compliance: within 24 hours); YouTube every item, whatever
 * its age, once a day (YouTube API Services Developer Policies III.E.4: data refreshed or deleted
 * within 30 days); the others once a day over 30 days.
 */
export const REVERIFY_DEFAULTS: Readonly<Record<string, { hours: number; days: number }>> = Object.freeze({
  twitter: { hours: 24, days: 30 },
  youtube: { hours: 24, days: 0 },
  facebook: { hours: 24, days: 30 },
  mastodon: { hours: 24, days: 30 },
  bluesky: { hours: 24, days: 30 },
  vimeo: { hours: 24, days: 30 },
  vk: { hours: 24, days: 30 },
  tumblr: { hours: 24, days: 30 },
  flickr: { hours: 24, days: 30 },
  reddit: { hours: 24, days: 30 },
  tiktok: { hours: 24, days: 30 },
});

/** REVERIFY_<SERVICE>_HOURS (0–720) and REVERIFY_<SERVICE>_DAYS (0–3650) over `REVERIFY_DEFAULTS`. */
function reverify(env: Env): Config['reverify'] {
  return Object.fromEntries(Object.entries(REVERIFY_DEFAULTS).map(([service, fallback]) => {
    const name = `REVERIFY_${service.toUpperCase()}`;
    return [service, { hours: integer(env, `${name}_HOURS`, fallback.hours, 0, 720), days: integer(env, `${name}_DAYS`, fallback.days, 0, 3650) }];
  }));
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
    pushPollInterval: integer(env, 'PUSH_POLL_INTERVAL', 3600, 1, 86_400),
    kudosRefresh: integer(env, 'KUDOS_REFRESH', 900, 1, 86_400),
    kudosWindow: integer(env, 'KUDOS_WINDOW', 172_800, 0, 2_592_000),
    reverify: reverify(env),
    websub: {
      enabled: boolean(env, 'WEBSUB', true),
      leaseSeconds: integer(env, 'WEBSUB_LEASE_SECONDS', 864_000, 60, 31_536_000),
      youtube: boolean(env, 'WEBSUB_YOUTUBE', true),
      youtubeHub: baseUrl(env, 'WEBSUB_YOUTUBE_HUB', 'https://pubsubhubbub.appspot.com/'),
      checkInterval: integer(env, 'WEBSUB_CHECK_INTERVAL', 60, 1, 3600),
    },
    collectConcurrency: integer(env, 'COLLECT_CONCURRENCY', 64, 1, 1024),
    collectHostConcurrency: integer(env, 'COLLECT_HOST_CONCURRENCY', 2, 1, 64),
    ...pollIntervalLimits(env),
    collectLease: integer(env, 'COLLECT_LEASE', 120, 2, 3600),
    allowPrivateFetch: boolean(env, 'ALLOW_PRIVATE_FETCH', false),
    imageScreening: boolean(env, 'IMAGE_SCREENING', true),
    imageScreeningThreads: integer(env, 'IMAGE_SCREENING_THREADS', 1, 1, 8),
    jetstreamUrl: webSocketUrl(env, 'JETSTREAM_URL', 'wss://jetstream2.us-east.bsky.network/subscribe'),
    jetstreamLease: integer(env, 'JETSTREAM_LEASE', 6, 2, 300),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 4, 1, 64),
    webhookRetryMs: integer(env, 'WEBHOOK_RETRY_MS', 5000, 10, 3_600_000),
    webhookRetryWindow: integer(env, 'WEBHOOK_RETRY_WINDOW', 86_400, 1, 604_800),
    tokenTtl: integer(env, 'TOKEN_TTL', 3600, 1, 86_400),
    sessionTtl: integer(env, 'SESSION_TTL', 28_800, 60, 604_800),
    rateLimitConsumer: integer(env, 'RATE_LIMIT_CONSUMER', 600, 0, 1_000_000_000),
    rateLimitPublic: integer(env, 'RATE_LIMIT_PUBLIC', 6000, 0, 1_000_000_000),
    rateLimitBeacon: integer(env, 'RATE_LIMIT_BEACON', 600, 0, 1_000_000_000),
    rateLimitWindow: integer(env, 'RATE_LIMIT_WINDOW', 60, 1, 86_400),
    contentMaxAge: integer(env, 'CONTENT_MAX_AGE', 5, 0, 86_400),
    relatedMaxAge: integer(env, 'RELATED_MAX_AGE', 600, 1, 86_400),
    relatedFetchesPerMinute: integer(env, 'RELATED_FETCHES_PER_MINUTE', 30, 1, 10_000),
    mediaProxy: mediaProxy(env),
    mediaCacheMb: integer(env, 'MEDIA_CACHE_MB', 256, 1, 1_048_576),
    bootstrap: boolean(env, 'SLUICE_BOOTSTRAP', true),
    logLevel,
    pollIntervals: Object.fromEntries(
      SERVICE_NAMES
        .filter((service) => env[`POLL_INTERVAL_${service.toUpperCase()}`])
        .map((service) => [service, integer(env, `POLL_INTERVAL_${service.toUpperCase()}`, 300, 1, 86_400)]),
    ),
    secretKey: secretKey(env, 'SLUICE_SECRET_KEY'),
    newSecretKey: secretKey(env, 'SLUICE_NEW_SECRET_KEY'),
    sharedCredentials: boolean(env, 'SHARED_CREDENTIALS', true),
    quotas: {
      youtubeDailyUnits: integer(env, 'YOUTUBE_DAILY_QUOTA', 10_000, 0, 1_000_000_000),
      twitterMonthlyPosts: integer(env, 'TWITTER_MONTHLY_READ_CAP', 0, 0, 1_000_000_000),
      threadsDailySearches: integer(env, 'THREADS_DAILY_SEARCHES', 1_100, 0, 1_000_000),
    },
    metricsToken: metricsToken(env),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    smtp: smtpSettings(env),
    services: serviceSettings(env),
    oauth: oauthSettings(env),
    oidc: oidcSettings(env),
  };
}

const OIDC_REQUIRED = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** OIDC_*: all three of `OIDC_REQUIRED` or none (OIDC_NAME alone counts as some); the issuer an https URL (http on loopback). */
function oidcSettings(env: Env): OidcSettings | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (![...OIDC_REQUIRED, 'OIDC_NAME'].some(value)) return undefined;
  const missing = OIDC_REQUIRED.find((name) => !value(name));
  if (missing) throw new ConfigError(missing, `is required when any OIDC_ variable is set (${OIDC_REQUIRED.join(', ')} together turn on the OpenID Connect sign-in)`);
  const issuer = value('OIDC_ISSUER')!;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError('OIDC_ISSUER', `must be the provider's Issuer Identifier, an absolute https URL, got "${issuer}"`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname))) {
    throw new ConfigError('OIDC_ISSUER', `must be an https URL (http only on a loopback host), got "${issuer}"`);
  }
  if (url.search || url.hash) throw new ConfigError('OIDC_ISSUER', 'must have no query or fragment (OpenID Connect Discovery 1.0 §2)');
  return { issuer, clientId: value('OIDC_CLIENT_ID')!, clientSecret: value('OIDC_CLIENT_SECRET')!, name: value('OIDC_NAME') ?? url.hostname };
}

/** A From address: `addr@domain` or `Display Name <addr@domain>`, on one line. */
const FROM = /^(?:[^\u0000-\u001f<>"]*<[^\s@<>]+@[^\s@<>]+>|"[^\u0000-\u001f"]*"\s*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/** SMTP_URL (smtp: or smtps: with a host), SMTP_FROM (required with it), SMTP_TIMEOUT_MS; null without SMTP_URL. */
function smtpSettings(env: Env): Config['smtp'] {
  const raw = env.SMTP_URL?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL', 'must be smtp://[user:password@]host[:port] or smtps://…');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', `must be an smtp:// or smtps:// URL, got ${url.protocol}//…`);
  if (!url.hostname) throw new ConfigError('SMTP_URL', 'must name the SMTP server host');
  const from = env.SMTP_FROM?.trim();
  if (!from) throw new ConfigError('SMTP_FROM', 'must be set with SMTP_URL: the From address of invitation and password-reset messages (e.g. "Sluice <sluice@example.com>")');
  if (!FROM.test(from)) throw new ConfigError('SMTP_FROM', `must be an address or "Name <address>" on one line, got "${from}"`);
  return { url: raw, from, timeoutMs: integer(env, 'SMTP_TIMEOUT_MS', 10_000, 100, 120_000) };
}

/** POLL_INTERVAL_MIN ≤ POLL_INTERVAL_MAX, each 1–86 400 s (the range of POLL_INTERVAL). */
function pollIntervalLimits(env: Env): { pollIntervalMin: number; pollIntervalMax: number } {
  const pollIntervalMin = integer(env, 'POLL_INTERVAL_MIN', 60, 1, 86_400);
  const pollIntervalMax = integer(env, 'POLL_INTERVAL_MAX', 86_400, 1, 86_400);
  if (pollIntervalMin > pollIntervalMax) throw new ConfigError('POLL_INTERVAL_MAX', `must be at least POLL_INTERVAL_MIN (${pollIntervalMin}), got ${pollIntervalMax}`);
  return { pollIntervalMin, pollIntervalMax };
}

function oauthSettings(env: Env): Record<OAuthService, OAuthAppSettings> {
  const out: Partial<Record<OAuthService, OAuthAppSettings>> = {};
  for (const [service, row] of Object.entries(OAUTH) as [OAuthService, (typeof OAUTH)[OAuthService]][]) {
    const app = row.app.toUpperCase();
    out[service] = {
      clientId: env[`${app}_CLIENT_ID`] || undefined,
      clientSecret: env[`${app}_CLIENT_SECRET`] || undefined,
      authorizeUrl: baseUrl(env, row.authorizeUrl[0], row.authorizeUrl[1]),
      tokenUrl: baseUrl(env, row.tokenUrl[0], row.tokenUrl[1]),
    };
  }
  return out as Record<OAuthService, OAuthAppSettings>;
}

function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN?.trim();
  if (!raw) return undefined;
  if (raw.length < 16) throw new ConfigError('METRICS_TOKEN', `must be at least 16 characters, got ${raw.length}`);
  return raw;
}

function secretKey(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  try {
    parseSecretKey(raw);
  } catch (error) {
    throw new ConfigError(name, (error as Error).message);
  }
  return raw;
}

function serviceSettings(env: Env): ServiceSettings {
  const out: Record<string, Record<string, string | undefined>> = {};
  for (const service of SERVICE_NAMES) {
    const { urls, credentials } = SERVICES[service] as ServiceRow;
    out[service] = {};
    // A WebSocket address (its default is ws: or wss:, Twitch's chat) is one, or `off`.
    for (const [key, [variable, fallback]] of Object.entries(urls)) out[service][key] = /^wss?:/.test(fallback) ? webSocketBase(env, variable, fallback) : baseUrl(env, variable, fallback);
    for (const [key, { variable }] of Object.entries(credentials)) out[service][key] = env[variable] || undefined;
  }
  return out as ServiceSettings;
}

/** The configuration with secrets masked (credentials the service table marks secret, the password of a database URL), for `sluice config`. */
export function maskedConfig(config: Config): Config {
  const services = Object.fromEntries(
    Object.entries(config.services).map(([service, settings]) => {
      const { credentials } = SERVICES[service as keyof typeof SERVICES] as ServiceRow;
      return [
        service,
        Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, credentials[key]?.secret && value ? '***' : value])),
      ];
    }),
  ) as ServiceSettings;
  const oauth = Object.fromEntries(Object.entries(config.oauth).map(([service, app]) => [service, { ...app, clientSecret: app.clientSecret ? '***' : undefined }])) as Config['oauth'];
  const oidc = config.oidc && { ...config.oidc, clientSecret: '***' };
  const smtp = config.smtp && { ...config.smtp, url: config.smtp.url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@') };
  return { ...config, oauth, oidc, smtp, ...(config.secretKey ? { secretKey: '***' } : {}), ...(config.newSecretKey ? { newSecretKey: '***' } : {}), ...(config.metricsToken ? { metricsToken: '***' } : {}), databaseUrl: config.databaseUrl.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@'), services };
}
