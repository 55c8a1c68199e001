/**
 * Table types of the database, shared by SQLite and PostgreSQL through Kysely. Column names are
 * snake_case in SQL and camelCase here (CamelCasePlugin). Booleans are stored as integers 0/1
 * and times of records as ISO 8601 text; times the code compares (schedules, expiry, item
 * dates) are integers in ms since the epoch.
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** The common record fields (docs/api.md#common-record-fields; without `_id`, `contractId` and `active`). */
interface Audited {
  created: string;
  createdBy: string;
  lastModified: string;
  lastModifiedBy: string;
}

export interface ContractTable extends Audited {
  id: string;
  name: string;
  slug: string;
  filterId: string | null;
  active: number;
  /** 1: members acting with a user's token must have two-factor sign-in enabled (migration 2026-12-09-two-factor). */
  requireTwoFactor: ColumnType<number, number | undefined, number>;
}

export interface CollectionTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  slug: string;
  type: string;
  filterId: string | null;
  active: number;
  /** Bumped with every item insert or moderation in the collection (migration queue-reads). */
  version: Generated<number>;
  /** What happens to a duplicate: `off`, `url` or `url+text` (docs/api.md#duplicates; migration dedupe). */
  dedupe: ColumnType<string, string | undefined, string>;
  /** Items expire this many days after they arrived and were dated; null keeps them (docs/api.md#retention; migration retention). */
  retentionDays: ColumnType<number | null, number | null | undefined, number | null>;
  /** At most this many items are kept, the newest by date; null: no limit. */
  retentionMaxItems: ColumnType<number | null, number | null | undefined, number | null>;
  /** The publication settings as JSON text, null when none (docs/api.md#publication-settings; migration publication-settings). */
  publication: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the collection's event screens show: `live`, `paused` or `blank` (docs/api.md#display-controls; migration display-state). */
  displayState: ColumnType<string, string | undefined, string>;
}

/** A canonical-URL hash of a card (docs/api.md#duplicates): unique per collection. */
export interface ItemUrlTable {
  collectionId: string;
  urlHash: string;
  itemId: string;
}

/** One 16-bit band of a card's SimHash fingerprint (src/lib/simhash.ts `bandRows`), with the card's date in ms. */
export interface ItemPrintTable {
  collectionId: string;
  /** The band number × 65 536 + the band's value. */
  bandKey: number;
  itemId: string;
  dateMs: number;
  /** The fingerprint's other three bands, 48 bits. */
  rest: number;
}

/** An item merged into a card (`cardId`), kept whole so it can be split back out. */
export interface ItemDuplicateTable {
  collectionId: string;
  id: string;
  cardId: string;
  inputId: string;
  /** The content item as JSON text, without `state`. */
  body: string;
  createdAt: number;
}

export interface ConsumerTable {
  id: string;
  /** `user` or `client` (`consumer_type` of docs/api.md#me). */
  type: string;
  name: string;
  email: string | null;
  language: string | null;
  username: string | null;
  passwordHash: string | null;
  clientId: string | null;
  secretHash: string | null;
  /** JSON array of registered redirect URIs. */
  redirectUris: string;
  created: string;
  /** 1 when the operator disabled the consumer: its tokens and sessions stop working at once. */
  disabled: Generated<number>;
  /** A client's registered scopes (RFC 6749 §3.3), space-separated: what its tokens may carry; null for users. */
  scopes: string | null;
  /** Ms of the last sign-in (password, accepted invitation, client_credentials token); null until then (docs/api.md#team). */
  lastSignInAt: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface GrantTable {
  consumerId: string;
  contractId: string;
  created: string;
  /** `owner`, `admin`, `editor`, `moderator` or `viewer` (docs/api.md#roles-and-scopes). */
  role: string;
}

export interface TokenTable {
  /** SHA-256 of the token, hex; the token itself is never stored. */
  tokenHash: string;
  /** `access` or `refresh`. */
  kind: string;
  consumerId: string;
  /** Tokens issued from one grant share a family; reuse of a rotated refresh token revokes it. */
  family: string;
  expiresAt: number;
  revoked: number;
  createdAt: number;
  /** Consumer id of the client the token was issued to (the machine itself for its own grants). */
  clientId: string | null;
  /** The token's scope (RFC 6749 §3.3), space-separated scope names; empty: none. */
  scope: string;
}

/** A password-reset link issued for a member (docs/api.md#password-reset; migration 2026-12-08-password-resets). */
export interface PasswordResetTable {
  id: string;
  /** The user whose password the link sets. */
  consumerId: string;
  /** The contract through which an admin issued it. */
  contractId: string;
  /** SHA-256 hex of the link's token; the token itself is never stored. */
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  /** The issuing consumer (null: the operator) and its name. */
  issuedBy: string | null;
  issuedByName: string;
  /** When used (ms); null while unused. */
  usedAt: number | null;
}

/** An invitation to join a contract in a role (docs/api.md#invitations; migration 2026-12-05-team). */
export interface InvitationTable {
  id: string;
  contractId: string;
  /** The invitee's name and e-mail address, as the inviter gave them. */
  name: string;
  email: string;
  /** The role the invitee gets (`GRANT_ROLES`). */
  role: string;
  /** SHA-256 hex of the link's token; the token itself is never stored. */
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  /** The inviting consumer (null: the operator) and its name. */
  invitedBy: string | null;
  invitedByName: string;
  /** When accepted (ms) and the consumer it made; null while pending. */
  acceptedAt: number | null;
  acceptedBy: string | null;
  /** When withdrawn (ms); null unless withdrawn. */
  withdrawnAt: number | null;
}

/** A signed-in browser (login session cookie), by SHA-256 of the cookie value. */
export interface LoginSessionTable {
  sessionHash: string;
  consumerId: string;
  expiresAt: number;
  createdAt: number;
}

/** A sign-in through the OpenID Connect provider under way (`store/oidc-sign-ins.ts`), by the SHA-256 of its state and browser binding. */
export interface OidcSignInTable {
  stateHash: string;
  /** The PKCE code verifier (RFC 7636) of the request to the provider. */
  codeVerifier: string;
  /** The nonce the ID token must carry (OpenID Connect Core 1.0 §3.1.2.1). */
  nonce: string;
  /** The query string of the `/v1/authorize` request the sign-in resumes. */
  authorizationRequest: string;
  /** ms since the epoch. */
  expiresAt: number;
}

/** A user's TOTP secret (RFC 6238), sealed with the secret key; pending while `enabledAt` is null (migration 2026-12-09-two-factor). */
export interface TwoFactorTable {
  consumerId: string;
  secret: string;
  keyId: string;
  enabledAt: number | null;
  /** The TOTP time step of the last code accepted (no replay). */
  lastStep: ColumnType<number, number | undefined, number>;
  createdAt: number;
}

/** A single-use recovery code of a user, as an argon2id hash. */
export interface RecoveryCodeTable {
  id: string;
  consumerId: string;
  codeHash: string;
  createdAt: number;
  usedAt: number | null;
}

/** The pending second step of a browser sign-in, by the SHA-256 of its cookie value. */
export interface TwoFactorChallengeTable {
  challengeHash: string;
  consumerId: string;
  failures: ColumnType<number, number | undefined, number>;
  expiresAt: number;
  createdAt: number;
}

/** An authorization code (RFC 6749 §4.1), by SHA-256; single use, bound to client, redirect URI and PKCE. */
export interface AuthorizationCodeTable {
  codeHash: string;
  /** Consumer id of the client the code was issued to. */
  clientId: string;
  /** The user who consented. */
  consumerId: string;
  redirectUri: string;
  /** BASE64URL(SHA-256(code_verifier)) (RFC 7636 §4.2, S256). */
  codeChallenge: string;
  /** Token family of the tokens issued for this code, revoked when the code is replayed. */
  family: string;
  expiresAt: number;
  used: number;
  createdAt: number;
}

export interface InputTable extends Audited {
  id: string;
  contractId: string;
  collectionId: string;
  service: string;
  type: string;
  input: string;
  filterId: string | null;
  latitude: number | null;
  longitude: number | null;
  radius: number | null;
  display: number;
  active: number;
  /** JSON object the connector keeps between polls (validators, cursors). */
  sourceState: string;
  lastRun: string | null;
  lastSuccess: string | null;
  lastError: string | null;
  nextRunAt: number;
  failures: number;
  collected: number;
  rejected: number;
  /** JSON array of the last successful poll's warnings (`{code, count, message}`); `[]` by default. */
  warnings: ColumnType<string, string | undefined, string>;
  /** The credential the input names (same contract and service), or null: the contract's default (migration credentials). */
  credentialId: ColumnType<string | null, string | null | undefined, string | null>;
  /** How the input is fed: `poll`, `push` (WebSub) or `stream` (migration feeds, docs/api.md#input-status). */
  feedMode: ColumnType<FeedMode, FeedMode | undefined, FeedMode>;
  /** Since when it is fed so (ms since the epoch), or null: since it was created, by polls. */
  feedSince: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the last pushed or streamed event for it arrived (ms), or null. */
  lastEventAt: ColumnType<number | null, number | null | undefined, number | null>;
  /** The input's own seconds between polls (`interval`, docs/api.md#inputs), or null: the service's (migration input-interval). */
  pollInterval: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * Until when (ms) a collector process holds the input's poll, and with it one of its politeness
   * key's slots (migration input-slots, `store/inputs.ts` `claimDueInputs`), or null: not claimed.
   */
  claimedUntil: ColumnType<number | null, number | null | undefined, number | null>;
  /** The feed's or account's own title as its last successful poll read it, or null: not known yet (migration input-title). */
  sourceTitle: ColumnType<string | null, string | null | undefined, string | null>;
  /** When `POST /collection/inputs/{id}/poll` last took the input's turn (ms), or null (migration input-title). */
  pollNowAt: ColumnType<number | null, number | null | undefined, number | null>;
}

/** How an input is fed (docs/api.md#input-status). */
export type FeedMode = 'poll' | 'push' | 'stream';

/** A stream held by one process at a time (migration feeds, docs/services.md#push-and-streams). */
export interface StreamTable {
  name: string;
  holder: string;
  expiresAt: number;
  cursor: string | null;
}

/** A WebSub subscription of an input (migration websub, docs/services.md#websub). */
export interface WebsubSubscriptionTable {
  /** The callback's last segment: 32 random hex digits. */
  id: string;
  inputId: string;
  contractId: string;
  /** The input's service: `rss` (the feed's hub) or `youtube` (YouTube's hub). */
  service: string;
  hub: string;
  topic: string;
  /** `hub.secret` sealed by `lib/secret-box.ts`. */
  secret: string;
  /** The id of the key that sealed `secret`. */
  keyId: string;
  state: WebsubState;
  /** The `hub.mode` sent to the hub and not yet verified, or null. */
  pending: ColumnType<'subscribe' | 'unsubscribe' | null, 'subscribe' | 'unsubscribe' | null | undefined, 'subscribe' | 'unsubscribe' | null>;
  /** End of the lease the hub granted (ms), or null before the first verification. */
  expiresAt: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the subscriber acts on the row next: send, renew or retry (ms). */
  nextActionAt: number;
  /** Consecutive failed requests to the hub. */
  attempts: ColumnType<number, number | undefined, number>;
  lastError: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: number;
}

/** Where a WebSub subscription stands (docs/services.md#websub). */
export type WebsubState = 'subscribing' | 'active' | 'unsubscribing';

/** A service credential of a contract (docs/api.md#credentials). */
export interface CredentialTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  service: string;
  /** 1: the contract's default credential for its service (at most one per contract and service). */
  isDefault: number;
  /** JSON object of the non-secret fields (e.g. `{"userId": "…"}`). */
  settings: string;
  /** The secret fields as one JSON object sealed by `lib/secret-box.ts`. */
  secret: string;
  /** The id of the key that sealed `secret`. */
  keyId: string;
  /** JSON object: per secret field, a masked hint (`…abcd`). */
  hints: string;
  /** The consumer who connected it (its name is `createdBy`). */
  connectedById: string;
  /** `ok` or `failed` (a permanent error of the service, in `lastError`). */
  status: string;
  lastUsed: string | null;
  lastError: string | null;
  active: number;
  /** When the access token expires (ISO 8601), null when it does not or is not known. */
  expiresAt: string | null;
}

/** A connect flow under way (docs/api.md#connecting-an-account), by the SHA-256 hash of its state. */
export interface ConnectStateTable {
  stateHash: string;
  service: string;
  contractId: string;
  /** The consumer who started the flow: the credential's `connectedBy`. */
  consumerId: string;
  /** The PKCE code verifier (RFC 7636), null for a service without PKCE. */
  codeVerifier: string | null;
  redirectUri: string;
  returnTo: string | null;
  name: string;
  /** The credential's `default` as asked at start (1, 0), null: the first of its service. */
  isDefault: number | null;
  /** Mastodon: the instance's origin. */
  instance: string | null;
  /** A reconnect: the credential whose tokens the flow replaces (else a new one is created). */
  credentialId: string | null;
  /** ms since the epoch. */
  expiresAt: number;
}

/** The app Sluice registered on a Mastodon instance for a redirect URI; the secret sealed. */
export interface MastodonAppTable {
  instance: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  created: string;
}

/** An outbound webhook of a contract (docs/api.md#webhooks). */
export interface WebhookTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  url: string;
  /** JSON array of the subscribed event types. */
  events: string;
  /** The signing secret (`whsec_…`) sealed by `lib/secret-box.ts`. */
  secret: string;
  /** The id of the key that sealed `secret`. */
  keyId: string;
  /** Why delivery disabled the webhook (its retries ran out), or null. */
  disabledReason: ColumnType<string | null, string | null | undefined, string | null>;
  disabledAt: ColumnType<string | null, string | null | undefined, string | null>;
  active: number;
}

/** One event to deliver to one webhook (store/outbox.ts). */
export interface WebhookOutboxTable {
  /** Orders the rows; the delivery's id in the API is it in 24 hex digits (store/outbox.ts). */
  seq: Generated<number>;
  webhookId: string;
  contractId: string;
  eventId: string;
  type: string;
  /** What delivery keeps in order: `item:<collectionId>:<itemId>`, `input:<id>`, `credential:<id>`. */
  subject: string;
  /** The request body: `{type, timestamp, data}` as JSON text. */
  payload: string;
  createdAt: number;
  /** `pending`, `delivered` or `failed` (its retries ran out). */
  status: string;
  attempts: ColumnType<number, number | undefined, number>;
  nextAttemptAt: number;
  firstAttemptAt: ColumnType<number | null, number | null | undefined, number | null>;
  /** Until when (ms) a delivering process holds it; 0 when none. */
  claimedUntil: ColumnType<number, number | undefined, number>;
  deliveredAt: ColumnType<number | null, number | null | undefined, number | null>;
}

/** One attempt to deliver an outbox row. */
export interface WebhookAttemptTable {
  /** The outbox row's `seq`. */
  deliverySeq: number;
  attempt: number;
  webhookId: string;
  at: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** At most the first 1 024 characters of the response body. */
  response: string | null;
  nextAttemptAt: number | null;
}

export interface ItemTable {
  collectionId: string;
  id: string;
  contractId: string;
  inputId: string;
  service: string;
  type: string;
  state: string;
  /** The item's `date` in ms since the epoch, for since/until and sorting. */
  dateMs: number;
  score: number;
  /** The trending score (src/lib/ranking.ts), written with `score` (migration trending). */
  trend: ColumnType<number, number | undefined, number>;
  /** When the kudos were last read from the source (ms), or null: as collected (docs/api.md#kudos). */
  kudosAt: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the item was last looked up to check it still exists (ms), or null: not since collected (store/reverify.ts, migration 2026-12-26-reverify). */
  verifiedAt: ColumnType<number | null, number | null | undefined, number | null>;
  language: string | null;
  /** The item's location in degrees, or null (filter `location`, docs/api.md#location-parameter). */
  latitude: number | null;
  longitude: number | null;
  /** The collection `version` that last published-on-arrival or moderated the item (streams read what changed); 0 for unpublished arrivals. */
  seq: Generated<number>;
  /** The content item (docs/api.md#content-item) as JSON text (jsonb on PostgreSQL: read with `itemBody`), without `state`. */
  body: string;
  createdAt: number;
  /** The item's place among the collection's pinned items (1 = first), or null: not pinned (migration 2026-12-07-pins-edits). */
  pinPosition: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON `{spotlight?, edit?}` a moderator set (store/item-moderation.ts `ItemModeration`), or null. */
  moderation: ColumnType<string | null, string | null | undefined, string | null>;
  /** When (ms) a moderator published the item against its filter, or null; filter applications leave it alone (migration 2026-12-15-filter-override). */
  filterOverride: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON `{set: {id, name}, rule, reason}` of the set that held the item for review, or null (migration 2026-12-22-hold). */
  held: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON `{at, reason, state}` of an item removed at the source (state `removed`; store/removals.ts), or null (migration 2026-12-25-removed-state). */
  removed: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface FilterListTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  /** `strings` or `patterns`. */
  type: string;
  /** JSON array of strings. */
  entries: string;
  active: number;
}

export interface FilterSetTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  /** JSON array of rule objects (docs/filters.md#rules). */
  rules: string;
  /** JSON rule object. */
  preCondition: string;
  /** The set's `or` flag, 0/1 (`or` is an SQL keyword). */
  anyRule: number;
  /** What the set does to an item its rules match: `reject` or `hold` (migration 2026-12-22-hold). */
  action: ColumnType<string, string | undefined, string>;
  active: number;
}

export interface FilterChainTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  /** JSON array of filter set ids, in order. */
  sets: string;
  active: number;
}

/** An item a filter rejected, once per input (migration rejections). */
export interface RejectionTable {
  inputId: string;
  itemId: string;
  contractId: string;
  url: string | null;
  title: string | null;
  setId: string;
  setName: string;
  /** Index of the rule in the set's `rules`. */
  rule: number;
  reason: string;
  /** ms since the epoch. */
  createdAt: number;
  /** The rejected content item as JSON, or null: recorded before migration 2026-12-15-filter-override. */
  item: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface CustomizationTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  /** `css` or `js`. */
  type: string;
  data: string;
  version: string;
  description: string | null;
  active: number;
  /** The collection whose walls it changes; null: every wall of the contract (migration 2026-12-19-customization-collection). */
  collectionId: string | null;
}

/** A customization as it was before an update (migration 2026-11-25-customization-versions). */
export interface CustomizationVersionTable {
  id: string;
  customizationId: string;
  contractId: string;
  name: string;
  type: string;
  data: string;
  version: string;
  description: string | null;
  active: number;
  lastModified: string;
  lastModifiedBy: string;
  /** When the update replaced this state (ISO 8601), and the consumer who sent it. */
  replaced: string;
  replacedBy: string;
  /** The collection it applied to then; null: the whole contract. */
  collectionId: string | null;
}

/** A rate-limit counter (store/rate-limits.ts): hits of the key's window, which ends at `resetAt` (ms). */
export interface RateLimitTable {
  key: string;
  hits: number;
  resetAt: number;
}

/** Units of a quota a subject (credential id or `environment`) used in a period (store/quotas.ts). */
export interface QuotaUsageTable {
  subject: string;
  quota: string;
  period: string;
  units: number;
}

/** A hashtag counted against an Instagram subject since `countedAt` (ms; store/quotas.ts). */
export interface QuotaHashtagTable {
  subject: string;
  hashtag: string;
  countedAt: number;
}

/** A change made through the APIs (docs/api.md#audit-trail; migration 2026-11-28-audit-jobs). */
export interface AuditEntryTable {
  id: string;
  contractId: string;
  /** When, ms since the epoch. */
  at: number;
  /** The consumer who made the change; null for the operator (CLI). */
  consumerId: string | null;
  consumerName: string;
  /** `collection`, `input`, `list`, `set`, `chain`, `customization`, `credential`, `webhook`, `contract`, `grant` or `item`. */
  resource: string;
  resourceId: string;
  /** `create`, `update`, `delete`, `moderate`, `split`, `apply`, `revert`, `disable` (a webhook, by Sluice). */
  action: string;
  /** JSON text of the state before and after (secrets never), or null. */
  before: string | null;
  after: string | null;
  /** The collection of a moderation's items. */
  collectionId: string | null;
  /** How many items a moderation changed (rows of audit_items). */
  itemCount: ColumnType<number, number | undefined, number>;
  /** The entry this one reverts, and the entry that reverted this one. */
  reverts: string | null;
  revertedBy: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An item a moderation entry changed, with its state before and after. */
export interface AuditItemTable {
  entryId: string;
  collectionId: string;
  itemId: string;
  before: string;
  after: string;
}

/** Hourly publication counts (docs/api.md#analytics; migration 2026-12-17-analytics). */
export interface AnalyticsCountTable {
  contractId: string;
  collectionId: string;
  /** The hour's start, ms since the epoch (UTC). */
  hour: number;
  /** `wall-view`, `display-view`, `impression`, `click` or `author-click`. */
  kind: string;
  /** A view's embedding origin ('' when none), an item id, or an author's name. */
  key: string;
  count: number;
}

/** Work run outside the request (docs/api.md#jobs). */
export interface JobTable {
  id: string;
  contractId: string;
  /** `filter-apply`. */
  kind: string;
  /** `queued`, `running`, `done` or `failed`. */
  state: string;
  done: ColumnType<number, number | undefined, number>;
  total: ColumnType<number, number | undefined, number>;
  /** JSON text: what the job was asked to do. */
  params: string;
  /** JSON text: its result (state `done`) or error object entries (state `failed`). */
  result: string | null;
  error: string | null;
  consumerId: string | null;
  consumerName: string;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** An article asked about or added (migration 2026-12-20-articles, docs/api.md#related-content). */
export interface ArticleTable {
  id: string;
  contractId: string;
  /** The article's address as asked (an http(s) URL, fragment removed). */
  url: string;
  /** The page's title and first words, once read; null before. */
  title: string | null;
  text: string | null;
  /** Related items in its latest answer. */
  count: ColumnType<number, number | undefined, number>;
  /** ms since the epoch. */
  createdAt: number;
  computedAt: number | null;
}

/** An item pinned for an article (migration 2026-12-20-articles). */
export interface ArticlePinTable {
  articleId: string;
  collectionId: string;
  itemId: string;
  /** ms since the epoch; pins come in this order. */
  pinnedAt: number;
}

/** An author a contract erased and does not collect again (migration 2026-12-21-blocked-authors, docs/api.md#erasure). */
export interface BlockedAuthorTable {
  id: string;
  contractId: string;
  service: string;
  /** Which author field names them: `userid`, `username` or `name`. */
  field: string;
  value: string;
  /** The audit entry of the erasure that blocked them. */
  erasureId: string | null;
  /** ms since the epoch. */
  createdAt: number;
}

/**
 * An item an erasure deleted, kept an hour without content so that the content and queue streams
 * send `remove` for it (migration 2026-12-27-erased-items, docs/api.md#erasure, store/erasures.ts).
 */
export interface ErasedItemTable {
  collectionId: string;
  itemId: string;
  contractId: string;
  /** The collection version the erasure stamped. */
  seq: number;
  /** The item's state before: `published`, `unpublished` or `removed`. */
  state: string;
  /** ms since the epoch. */
  erasedAt: number;
  /** Why it left: `erased` (store/erasures.ts) or `expired` (store/retention.ts); migration 2026-12-28-erased-reason. */
  reason: string;
}

/** The image screening job's queue (migration 2026-12-24-image-screening, docs/filters.md#image-screening). */
export interface ImageScreeningTable {
  collectionId: string;
  itemId: string;
  contractId: string;
  inputId: string;
  /** `pending`, or `unscreenable` (kept as the record, with `reason`). */
  state: ColumnType<string, string | undefined, string>;
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** ms since the epoch. */
  queuedAt: number;
  /** ms since the epoch: a process's lease on a pending row; 0 when free. */
  claimedUntil: ColumnType<number, number | undefined, number>;
}

export interface Database {
  contracts: ContractTable;
  collections: CollectionTable;
  consumers: ConsumerTable;
  grants: GrantTable;
  invitations: InvitationTable;
  passwordResets: PasswordResetTable;
  tokens: TokenTable;
  loginSessions: LoginSessionTable;
  oidcSignIns: OidcSignInTable;
  twoFactor: TwoFactorTable;
  recoveryCodes: RecoveryCodeTable;
  twoFactorChallenges: TwoFactorChallengeTable;
  authorizationCodes: AuthorizationCodeTable;
  inputs: InputTable;
  items: ItemTable;
  filterLists: FilterListTable;
  filterSets: FilterSetTable;
  filterChains: FilterChainTable;
  customizations: CustomizationTable;
  customizationVersions: CustomizationVersionTable;
  rejections: RejectionTable;
  rateLimits: RateLimitTable;
  credentials: CredentialTable;
  connectStates: ConnectStateTable;
  mastodonApps: MastodonAppTable;
  itemUrls: ItemUrlTable;
  itemPrints: ItemPrintTable;
  itemDuplicates: ItemDuplicateTable;
  quotaUsage: QuotaUsageTable;
  quotaHashtags: QuotaHashtagTable;
  auditEntries: AuditEntryTable;
  auditItems: AuditItemTable;
  jobs: JobTable;
  analyticsCounts: AnalyticsCountTable;
  articles: ArticleTable;
  articlePins: ArticlePinTable;
  blockedAuthors: BlockedAuthorTable;
  erasedItems: ErasedItemTable;
  imageScreenings: ImageScreeningTable;
  webhooks: WebhookTable;
  webhookOutbox: WebhookOutboxTable;
  webhookAttempts: WebhookAttemptTable;
  streams: StreamTable;
  websubSubscriptions: WebsubSubscriptionTable;
}

/**
 * Every table of `Database` with its columns untyped: for the few queries over a table chosen at
 * run time (batch inserts, contract export/import, draining a collection), which Kysely cannot
 * type. Table names stay checked; column names and values are the caller's to get right.
 */
export type LooseDatabase = { [T in keyof Database]: Record<string, unknown> };

export type ArticleRow = Selectable<ArticleTable>;
export type BlockedAuthorRow = Selectable<BlockedAuthorTable>;
export type ErasedItemRow = Selectable<ErasedItemTable>;
export type ContractRow = Selectable<ContractTable>;
export type CollectionRow = Selectable<CollectionTable>;
export type ConsumerRow = Selectable<ConsumerTable>;
export type TokenRow = Selectable<TokenTable>;
export type InvitationRow = Selectable<InvitationTable>;
export type PasswordResetRow = Selectable<PasswordResetTable>;
export type LoginSessionRow = Selectable<LoginSessionTable>;
export type OidcSignInRow = Selectable<OidcSignInTable>;
export type TwoFactorRow = Selectable<TwoFactorTable>;
export type AuthorizationCodeRow = Selectable<AuthorizationCodeTable>;
export type InputRow = Selectable<InputTable>;
export type WebsubSubscriptionRow = Selectable<WebsubSubscriptionTable>;
export type NewInput = Insertable<InputTable>;
export type InputUpdate = Updateable<InputTable>;
export type ItemRow = Selectable<ItemTable>;
export type ItemDuplicateRow = Selectable<ItemDuplicateTable>;
export type FilterListRow = Selectable<FilterListTable>;
export type FilterSetRow = Selectable<FilterSetTable>;
export type FilterChainRow = Selectable<FilterChainTable>;
export type CustomizationRow = Selectable<CustomizationTable>;
export type CustomizationVersionRow = Selectable<CustomizationVersionTable>;
export type RejectionRow = Selectable<RejectionTable>;
export type CredentialRow = Selectable<CredentialTable>;
export type ConnectStateRow = Selectable<ConnectStateTable>;
export type MastodonAppRow = Selectable<MastodonAppTable>;
export type AuditEntryRow = Selectable<AuditEntryTable>;
export type JobRow = Selectable<JobTable>;
export type WebhookRow = Selectable<WebhookTable>;
export type OutboxRow = Selectable<WebhookOutboxTable>;
export type AttemptRow = Selectable<WebhookAttemptTable>;
export type { Generated };
