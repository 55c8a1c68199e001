/**
 * The API's records as the console reads them, one name each for every screen: aliases of the
 * types generated from the OpenAPI document the API serves (`api.gen.ts`, made by
 * `src/console/api-types.ts`; docs/architecture.md#the-console), never copies, so that a field the
 * API adds, renames or drops reaches every screen through `tsc -p src/console/app`.
 */
import type { ConsumerDetails, ContentItem, Paths } from './api.gen.ts';

/** The JSON body of the success answer `status` (default 200) of `method` `path`. */
export type Answer<P extends keyof Paths, M extends keyof Paths[P], S extends string = '200'> = Paths[P][M] extends { responses: Record<S, infer T> } ? T : never;

/** The JSON body that `method` `path` takes. */
export type RequestBody<P extends keyof Paths, M extends keyof Paths[P]> = Paths[P][M] extends { requestBody: infer T } ? T : never;

/** Who is signed in (`GET /v1/oauth/me`, docs/api.md#me). */
export type Me = ConsumerDetails;

/** A contract the signed-in consumer may use (`GET /v1/customer/contracts/me`). */
export type Contract = Answer<'/v1/customer/contracts/me', 'get'>[number];

/** A collection (`GET /collection/collections`, docs/api.md#collections). */
export type Collection = Answer<'/collection/collections/{id}', 'get'>;

/** An input (`GET /collection/inputs`, docs/api.md#inputs), with its status (docs/api.md#input-status). */
export type Input = Answer<'/collection/inputs/{id}', 'get'>;

/** A warning of an input's last successful poll (`status.warnings`). */
export type Warning = Input['status']['warnings'][number];

/** How an input is fed (`status.feed`): its mode, since when, the last pushed or streamed event. */
export type Feed = Input['status']['feed'];

/** The answer of a poll now (`POST /collection/inputs/{id}/poll`, docs/api.md#poll-now): ok or the source's error, new items, the source's title, the input after. */
export type PollResult = Answer<'/collection/inputs/{id}/poll', 'post'>;

/** An item a filter turned away from an input (`GET /collection/inputs/{id}/rejections`). */
export type Rejection = Answer<'/collection/inputs/{id}/rejections', 'get'>[number];

/**
 * A credential (`GET /collection/credentials`, docs/api.md#credentials): a contract's own account
 * at a service. Secrets are never returned: `hints` has a masked hint per secret field.
 */
export type Credential = Answer<'/collection/credentials/{id}', 'get'>;

/**
 * A quota (docs/api.md#quotas): what was used of `limit` in the current period, which ends at
 * `resetsAt` (ISO 8601, or null when nothing counts).
 */
export type Quota = NonNullable<Credential['quota']>;

/** An entry of `GET /collection/services` (docs/api.md#services). */
export type ServiceEntry = Answer<'/collection/services', 'get'>[number];

/** The answer of a connect flow's start asked for JSON (`GET /collection/credentials/connect/{service}`). */
export type ConnectAnswer = Answer<'/collection/credentials/connect/{service}', 'get'>;

/** A field of a service's credential (`secret`: required on create, never shown again). */
export type CredentialField = ServiceEntry['credentialFields'][number];

/** The operators, fields and list types of filter rules (`GET /collection/filters/operators`). */
export type RuleTable = Answer<'/collection/filters/operators', 'get'>;

/** A filter list (`GET /collection/lists`, docs/filters.md). */
export type FilterList = Answer<'/collection/lists/{id}', 'get'>;

/** A filter set (`GET /collection/sets`, docs/filters.md). */
export type FilterSet = Answer<'/collection/sets/{id}', 'get'>;

/** A rule of a filter set as the API stores it. */
export type ApiRule = FilterSet['rules'][number];

/** A filter chain (`GET /collection/chains`, docs/filters.md). */
export type FilterChain = Answer<'/collection/chains/{id}', 'get'>;

/** A dry run of a filter or a draft set over items (`POST /collection/filters/test`). */
export type DryRun = Answer<'/collection/filters/test', 'post'>;

/** `POST /collection/filters/apply`: what an application did, or (with `dryRun`) would do; a job when large. */
export type ApplyAnswer = Answer<'/collection/filters/apply', 'post'> | Answer<'/collection/filters/apply', 'post', '202'>;

/** A publication customization (`GET /publication/customizations`, docs/api.md#customizations). */
export type Customization = Answer<'/publication/customizations/{id}', 'get'>;

/** An earlier version of a customization (`GET /publication/customizations/{id}/versions`). */
export type CustomizationVersion = Answer<'/publication/customizations/{id}/versions', 'get'>[number];

/** A content item as the queue answers it (docs/api.md#content-item). */
export type Item = ContentItem;

/** How many items of a collection's queue are in each state (`GET /v1/queue/{contract}/count`). */
export type QueueCount = Answer<'/v1/queue/{contract}/count', 'get'>;

/** An access token as the token endpoint answers it (`POST /v1/oauth/token`, docs/api.md#token-endpoint). */
export type TokenAnswer = Answer<'/v1/oauth/token', 'post'>;

/** An entry of an item's `duplicates` (docs/api.md#duplicates), oldest first. */
export type Duplicate = NonNullable<Item['duplicates']>[number];

/** A step of an item's moderation history (`GET /v1/queue/{contract}/history`, docs/api.md#item-history), newest first. */
export type HistoryStep = Answer<'/v1/queue/{contract}/history', 'get'>[number];
