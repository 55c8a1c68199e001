/**
 * The shape every connector has (one module per service of the service table, `table.ts`,
 * listed in `connectors/index.ts`).
 *
 * A connector turns one input's query into content items (docs/api.md#content-item). It keeps
 * whatever it needs between polls (HTTP validators, cursors) in `state`, an opaque JSON object that
 * the store saves with the input and hands back on the next poll.
 */
import type { Service, ServiceSettings } from './table.ts';
import type { ContentItem } from '../item.ts';

/** What a connector knows of the input it collects for (docs/api.md#inputs). */
export interface SourceInput {
  id: string;
  service: string;
  type: string;
  input: string;
  latitude?: number | null;
  longitude?: number | null;
  radius?: number | null;
  /** How the input is fed now (docs/api.md#input-status); absent means `poll`. */
  feedMode?: 'poll' | 'push' | 'stream';
}

/** A response read by the guarded fetcher (`collect/fetch.ts`); header names are lower-case. */
export interface SourceResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  /** The final URL after redirects. */
  url: string;
}

/** A request body: only the few API calls that must POST (e.g. a Bluesky session) send one. */
export interface SourceRequest {
  method?: 'GET' | 'POST';
  body?: string;
}

/** Outbound HTTP as the collector allows it: guarded, time- and size-limited (docs/services.md#outbound-requests). GET unless `request` says POST. */
export type SourceFetch = (url: string, headers?: Record<string, string>, request?: SourceRequest) => Promise<SourceResponse>;

/** Why an outbound request failed (`FetchError`). */
export type FetchErrorKind = 'blocked' | 'timeout' | 'too_large' | 'redirects' | 'network' | 'protocol';

/**
 * A failed outbound request of the collector's guarded fetch (`collect/fetch.ts`). `kind` says why:
 * - `blocked`: the host is, or resolves to, a non-public address (and private fetches are off);
 * - `timeout`: the whole request, body included, took longer than the time limit;
 * - `too_large`: the body is larger than the size limit;
 * - `redirects`: more redirects than allowed;
 * - `protocol`: a URL or redirect target that is not http(s), not parseable, or carries
 *   credentials; or a malformed response (bad HTTP framing, undecodable content coding);
 * - `network`: anything else on the way (DNS failure, refused or reset connection, TLS).
 *
 * The message names only the URL's host (never the path, query or resolved address); the
 * underlying error, if any, is in `cause`.
 */
export class FetchError extends Error {
  readonly kind: FetchErrorKind;
  constructor(kind: FetchErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'FetchError';
    this.kind = kind;
  }
}

/** A stream opened by {@link OpenStream}: status, headers with lower-case names, the body to read, the final URL. */
export interface OpenedStream {
  status: number;
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array> | null;
  url: string;
}

/**
 * A long-lived guarded GET (Server-Sent Events, docs/services.md#push-and-streams; the fetcher's
 * `open`, `collect/fetch.ts`): the same
 * address check as every request (on each connection and redirect hop), the time limit applies
 * to the response headers only, and the body is a stream read until it ends or `signal` aborts
 * (no size limit: the reader decides). Resolves with the response whatever its status.
 * @throws {FetchError} as the fetcher does (`blocked`, `timeout` for the headers, `network`, …).
 */
export type OpenStream = (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<OpenedStream>;

export interface CollectContext {
  fetch: SourceFetch;
  /** Base URLs and credentials of every service (docs/configuration.md#services); a connector reads its own. */
  services: ServiceSettings;
  /** The time of the poll, ms since the epoch. */
  now: number;
}

/**
 * What a poll had to do to a source's entries, shown in the input's status
 * (docs/api.md#input-status): `dropped` entries were left out, `undated` ones got a made-up date.
 */
export interface PollWarning {
  code: 'dropped' | 'undated';
  /** How many entries, in this poll. */
  count: number;
  /** The count and the reason, in English. */
  message: string;
}

export interface CollectResult {
  items: ContentItem[];
  /** Entries dropped or changed on the way (feeds: `connectors/feed.ts`); none when absent. */
  warnings?: PollWarning[];
  /** Saved with the input and passed to the next `collect` call. */
  state: Record<string, unknown>;
  /** Earliest next poll, ms since the epoch (e.g. a rate-limit reset); the interval applies otherwise. */
  nextRunAt?: number;
  /**
   * The source's own wait before the next poll, ms after this poll ends (YouTube live chat's
   * `pollingIntervalMillis`): it replaces the input's interval, no sooner than
   * `SOURCE_POLL_MIN_MS` (docs/services.md#polling); `nextRunAt` still holds it back. None: the interval.
   */
  pollAfterMs?: number;
  /** The source's own title (a feed's title), plain text, when the response told it; stored as the input's `title` (docs/api.md#inputs). */
  title?: string;
  /**
   * Ids of items the source says it deleted (a feed's Atom tombstones, RFC 6721): removed from
   * what the inputs of this very source collected (`refresh.ts`, docs/services.md#rss); none when absent.
   */
  deleted?: string[];
}

/**
 * Reads items already collected again, in batches of at most `batch` items of one input, with the
 * service's batch lookup: the kudos refresh (docs/services.md#kudos-refresh) keeps their counters,
 * the re-verification (docs/services.md#re-verification) removes those the source says are gone
 * and updates those whose content changed.
 */
export interface Lookup {
  batch: number;
  /**
   * The lookup reads a public API and needs no credential (Bluesky's AppView): it runs for an
   * input whose contract has none, as a poll of such an input does; others wait for one.
   */
  anonymous?: boolean;
  /**
   * The lookup reads one item a request (Tumblr, Flickr): used by the re-verification only, never by
   * the kudos refresh, whose ~50 reads of an item over its first 48 hours would spend the source's
   * daily limit (docs/services.md#kudos-refresh).
   */
  reverifyOnly?: boolean;
  /**
   * The lookup needs the stored items of the ids it is asked (Tumblr: a `tag` input's item ids do
   * not name their blog, the stored item's `url` and `author` do): the runner reads them (the
   * input's, in its contract) and passes them as `stored`. Other lookups are given none.
   */
  readsStored?: boolean;
  /**
   * The items (whole, as `collect` would make them) of those of `itemIds` (Sluice item ids of
   * `input`'s service) the source still shows, and those it positively says are gone. An item in
   * neither is unknown (asked for nothing, or the source was silent). Throws `SourceError` (with
   * `retryAfterMs` for a rate limit) like `collect`: a failed request says nothing is gone.
   * `stored` (only with `readsStored`): item id → the item as stored, for those of `itemIds` found.
   */
  lookup(input: SourceInput, itemIds: string[], ctx: CollectContext, stored?: ReadonlyMap<string, ContentItem>): Promise<LookupResult>;
}

/**
 * Why the source says an item is gone (docs/services.md#re-verification): `deleted` (X's "Not Found
 * Error", Meta's missing ids), `protected` (X's "Authorization Error": the author made their posts
 * private, or is suspended), `withheld` (X's `withheld`), `gone` (asked for and left out of an
 * answer that lists what exists: YouTube's `videos.list`, Bluesky's `getPosts`).
 */
export type GoneReason = 'deleted' | 'protected' | 'withheld' | 'gone';

/** What a lookup read: the items by id, the gone ones by id, and the earliest next lookup when the source's rate limit is spent. */
export interface LookupResult {
  items: Map<string, ContentItem>;
  gone: Map<string, GoneReason>;
  /** Earliest next lookup of this service with this credential, ms since the epoch. */
  nextAt?: number;
}

/** A lookup's result that read nothing (nothing asked, or a partial answer's rest). */
export const nothingLooked = (): LookupResult => ({ items: new Map(), gone: new Map() });

/**
 * What a lookup asks its source for: the source's own ids (`pattern`'s first group) of those
 * `itemIds` that `pattern` matches. Ids of other kinds are left out: one the source cannot read
 * could fail the whole batch.
 */
export function askedIds(itemIds: string[], pattern: RegExp): string[] {
  return itemIds.map((id) => pattern.exec(id)?.[1]).filter((id) => id !== undefined);
}

/**
 * The items of a lookup's answer: of `read`, the items the source answered as the connector's
 * `collect` reads them (null where it could not), those whose id `itemIds` asked for; anything
 * else the source sent along is ignored.
 */
export function askedItems(itemIds: string[], read: Iterable<ContentItem | null>): LookupResult['items'] {
  const asked = new Set(itemIds);
  const found: LookupResult['items'] = new Map();
  for (const item of read) if (item && asked.has(item.id)) found.set(item.id, item);
  return found;
}

/**
 * The items of `asked` (item ids the request named) that an answer listing every one that exists
 * left out: `gone` (docs/services.md#re-verification). Only for lookups whose source documents
 * that it omits what no longer exists (YouTube `videos.list`, Bluesky `getPosts`).
 */
export function leftOut(asked: string[], found: LookupResult['items']): LookupResult['gone'] {
  return new Map(asked.filter((id) => !found.has(id)).map((id) => [id, 'gone' as const]));
}

/** A connector collects for every input type its row in the service table lists. */
export interface Connector {
  service: Service;
  collect(input: SourceInput, state: Record<string, unknown>, ctx: CollectContext): Promise<CollectResult>;
  /** Present where the service's API reads many items at once by id (docs/services.md#re-verification). */
  lookup?: Lookup;
}

/**
 * A failure of the source (HTTP error, rate limit, unreadable document). The collector records
 * `message` in the input's status and backs off; `retryAfterMs` (from `Retry-After`,
 * `x-rate-limit-reset` and the like) sets the earliest next poll (docs/services.md#rate-limits). A
 * `permanent` failure (bad or missing credentials, unknown user, removed API) stops polling the
 * input until it is changed. `credential` says whether a permanent failure is the credential's
 * fault: `false` for one the input alone causes (a name not found, a private listing), whose
 * message carries the input's text and may hold words that read as a credential's failure
 * (`password`, `expired`); undefined leaves it to the message (`collect/credentials.ts`).
 */
export class SourceError extends Error {
  readonly retryAfterMs: number | undefined;
  readonly permanent: boolean;
  readonly credential: boolean | undefined;
  constructor(message: string, options: { retryAfterMs?: number; permanent?: boolean; credential?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SourceError';
    this.retryAfterMs = options.retryAfterMs;
    this.permanent = options.permanent ?? false;
    this.credential = options.credential;
  }
}
