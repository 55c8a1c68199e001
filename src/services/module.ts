/**
 * The shape of a service's module (docs/architecture.md#services): what the rest of Sluice asks
 * of a service, beside its row of the table (`table.ts`). Each service's folder exports one
 * `ServiceModule` from its `index.ts`; `index.ts` here lists them, and every other layer
 * dispatches through that list instead of naming a service.
 *
 * The parts are pure, or do their own HTTP through the `fetch` they are handed: the database,
 * the collector's machinery and the routes stay in their layers, which call these parts.
 */
import type { ContentItem } from '../item.ts';
import type { Period } from '../lib/quota-windows.ts';
import type { HttpFetch, OAuthEndpoint, TokenSet } from '../lib/oauth-client.ts';
import type { Connector } from './connector.ts';
import type { ServiceRow } from './kit/row.ts';
import type { WebsubTarget } from './kit/websub-hub.ts';
import type { ServiceSettings } from './table.ts';

/** The configured quota limits (docs/configuration.md#quotas; `config.quotas`); 0 turns a quota off. */
export interface QuotaSettings {
  /** YouTube Data API units per Pacific day and credential (YOUTUBE_DAILY_QUOTA, default 10 000). */
  youtubeDailyUnits: number;
  /** X posts read per UTC month and credential (TWITTER_MONTHLY_READ_CAP, default 0: off). */
  twitterMonthlyPosts: number;
  /** Threads keyword searches per UTC day and credential (THREADS_DAILY_SEARCHES, default 1 100: half Meta's 2 200 in a rolling 24 hours). */
  threadsDailySearches: number;
}

/** The WebSub settings (docs/services.md#websub; `config.websub`, where each is described). */
export interface WebsubSettings {
  enabled: boolean;
  leaseSeconds: number;
  youtube: boolean;
  youtubeHub: string;
  checkInterval: number;
}

/**
 * A quota counted in units a poll spends (docs/api.md#quotas): YouTube Data API units, X posts
 * read. Before a poll the gate takes `take` units; the calls of the poll are metered by `cost`,
 * and the quota is then set to what they cost (`collect/quotas.ts`).
 */
export interface UnitQuota {
  readonly kind: 'units';
  /** The quota's name in reads and statuses (`youtube-units`). */
  readonly name: string;
  /** What is counted, in the input's status (`units`, `posts read`). */
  readonly unit: string;
  /** The window, in the input's status (`today (Pacific time)`). */
  readonly when: string;
  /** The environment variable of the installation's credential, named when the quota is its. */
  readonly variable: string;
  /** The limit per credential and window; 0: the quota is off. */
  limit(settings: QuotaSettings): number;
  /** The window holding `now` (ms). */
  period(now: number): Period;
  /** The units a poll of `input` (its source state as JSON) takes before it runs, or undefined when its calls cost nothing (YouTube's keyless feed). */
  take(input: { type: string; input: string; sourceState: string }, services: ServiceSettings): number | undefined;
  /** What one call to `url` answered with `body` costs (0: not metered). */
  cost(url: string, body: Uint8Array, services: ServiceSettings): number;
  /** Whether a call that failed on the way is counted too (Google counts it). */
  readonly chargesFailedCalls: boolean;
  /** More of the status of an input that waits, after the quota (e.g. what one poll takes), or ''. */
  needs(input: { type: string }, taken: number): string;
}

/**
 * A quota of unique hashtags looked up per account in a sliding window (Instagram: 30 in 7 days,
 * developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-hashtag-search),
 * counted when an input is stored and when its poll would look the hashtag up.
 */
export interface HashtagQuota {
  readonly kind: 'hashtags';
  readonly name: string;
  /** The environment variable of the installation's credential. */
  readonly variable: string;
  /** Who holds the installation's credential, in the refusal of an input (`the installation's Instagram account`). */
  readonly installation: string;
  /** The service's vendor, in the refusal of an input (`Instagram`). */
  readonly vendor: string;
  /** Whether the installation's own credential of the service is set (with SHARED_CREDENTIALS, inputs without a credential count against it). */
  hasInstallationCredential(services: ServiceSettings): boolean;
  /** The hashtag `input` counts, or undefined when it counts none (not a tag input). */
  hashtagOf(input: { type: string; input: string }): string | undefined;
  /** The hashtag a poll of `input` would look up (undefined: none, or not configured, or its id is kept in its source state, JSON). */
  pollHashtag(input: { type: string; input: string; sourceState: string }, services: ServiceSettings): string | undefined;
}

export type QuotaRule = UnitQuota | HashtagQuota;

/** The unit-counted quota of `rule` at `now` (ms; YouTube units, X posts): its name, limit and window, or undefined when it is off (limit 0). */
export function unitQuota(rule: UnitQuota, settings: QuotaSettings, now: number) {
  const limit = rule.limit(settings);
  return limit > 0 ? { kind: 'units' as const, quota: rule.name, limit, period: rule.period(now), unit: rule.unit, when: rule.when } : undefined;
}

/**
 * A service's quota at `now` (ms) as the store counts it (`store/quotas.ts` `quotaOf`): the
 * hashtag rule itself, or the unit quota's limit and window; undefined without a rule or when it is off.
 */
export function quotaAt(rule: QuotaRule | undefined, settings: QuotaSettings, now: number): HashtagQuota | ReturnType<typeof unitQuota> {
  return rule?.kind === 'units' ? unitQuota(rule, settings, now) : rule;
}

/**
 * Push through WebSub (W3C WebSub, docs/services.md#websub): which inputs a hub may feed, their
 * hub and topic, and the items of a pushed body.
 */
export interface PushRule {
  /** Whether push is on for the service under these settings. */
  enabled(settings: WebsubSettings): boolean;
  /** The inputs that may be pushed, as the store selects them: of these types (all when absent), whose source state contains this text (all when absent). */
  readonly inputs: { readonly types?: readonly string[]; readonly stateContains?: string };
  /** The hub and topic `input` (its source state parsed) should be subscribed to, or undefined. */
  targetOf(input: { type: string; input: string }, state: Record<string, unknown>, settings: WebsubSettings): WebsubTarget | undefined;
  /**
   * The items of a pushed body, and the ids of the items it says were deleted (Atom tombstones,
   * RFC 6721: `deleted`, none when absent). @throws SourceError when the body is not what the topic serves.
   */
  itemsOf(body: Uint8Array, contentType: string | undefined, topic: string, now: number): Promise<PushedItems>;
  /**
   * How far the deletions a pushed body names reach: the items the inputs following this very
   * source collected (`source`: a feed's tombstone `ref` means something only within its feed),
   * or every item of the service with that id (`service`: a YouTube video id names the video).
   */
  readonly deletions: 'source' | 'service';
}

/** What a pushed body holds (`PushRule.itemsOf`). */
export interface PushedItems {
  items: ContentItem[];
  deleted?: string[];
}

/** A connect flow that failed after its state was checked: the OAuth error code (RFC 6749 §4.1.2.1) or `connect_failed`, and why. */
export class ConnectFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** What a connected account becomes: its credential's secret and plain fields, and when its token expires (ISO 8601). */
export interface ConnectedCredential {
  secret: Record<string, string>;
  plain: Record<string, string>;
  expiresAt: string | null;
}

/**
 * What a service's connect flow (docs/api.md#connecting-an-account) does beyond the OAuth 2.0
 * authorization code grant the flow runs for every service.
 */
export interface ConnectRule {
  /**
   * Where the authorization server is: `app`, the operator's configured app (`OAUTH` of
   * `table.ts`, `config.oauth`); `instance`, the user's own instance, named by the flow's
   * `instance` parameter, where Sluice registers an app at the first connect.
   */
  readonly server: 'app' | 'instance';
  /** The scopes asked for on an instance (the `app` flows take theirs from `OAUTH`). */
  readonly scopes?: readonly string[];
  /** Registers Sluice's app on `instance` for `redirectUri`. @throws Error saying why (the caller names `instance`). */
  register?(instance: string, redirectUri: string, website: string, fetch: HttpFetch): Promise<{ clientId: string; clientSecret: string }>;
  /**
   * The credential the callback's `tokens` become (the token exchanged, an account looked up);
   * absent: the token in the credential field of `OAUTH`, with its refresh token.
   * @throws ConnectFailure when the account cannot be connected.
   */
  credentialOf?(tokens: TokenSet, flow: { endpoint: OAuthEndpoint; instance: string | null; fetch: HttpFetch; services: ServiceSettings; now: number }): Promise<ConnectedCredential>;
  /**
   * The service's own refresh of a connected token, where it is not the refresh grant (RFC 6749
   * §6) of a refresh token: the collector runs it instead (`collect/token-refresh.ts`), `marginMs`
   * before the token expires (instead of the collector's 5 minutes).
   */
  readonly refresh?: TokenRefresh;
}

/** A service's own token refresh (`ConnectRule.refresh`; Threads' `th_refresh_token`). */
export interface TokenRefresh {
  /** How long (ms) before its expiry a token is refreshed. */
  readonly marginMs: number;
  /**
   * The new tokens for the credential's `values` (its secret fields), through the
   * app's `endpoint`. @throws OAuthRefusal `invalid_grant` when the service says the token will
   * not refresh again (expired, revoked); anything else for a failure that may pass.
   */
  token(values: Readonly<Record<string, string>>, flow: { endpoint: OAuthEndpoint; fetch: HttpFetch; now: number }): Promise<TokenSet>;
}

/** A service's module: its row, its connector, and the optional parts the service has. */
export interface ServiceModule<S extends string = string> {
  readonly name: S;
  readonly row: ServiceRow;
  readonly connector: Connector;
  readonly quota?: QuotaRule;
  readonly push?: PushRule;
  readonly connect?: ConnectRule;
  /**
   * How the service names one source, for duplicates (docs/api.md#inputs, "Duplicates"): the
   * text two inputs of `type` reading the same source share. Absent: the service matches handles
   * and tags without case, so a leading `@` or `#` is dropped and case ignored (`sourceForm`).
   * Pure; never throws.
   */
  readonly sourceForm?: (type: string, text: string) => string;
}

/** The default `sourceForm`: without case, a leading `@` or `#` dropped. */
export function handleForm(text: string): string {
  return text.replace(/^[#@]/, '').toLowerCase();
}
