/**
 * Every operation of `/openapi.json` over real HTTP (a listening server on 127.0.0.1, a real
 * database), issue 32's table-driven test (docs/api.md#roles-and-scopes):
 *
 * - every contract operation × every role (viewer … owner) and no grant: the recipe's success
 *   status when the policy (`expectedOf`, ./policy.ts) allows it, else 403 naming `role`; no
 *   grant: 403 naming the reference to the contract (`contract`, `contractId`, `contract_id`,
 *   `id`…), without the contract's id. The operations of any valid token, as a consumer granted
 *   nothing: their success status.
 * - every operation that needs a scope × an owner's token lacking each scope in turn: 403
 *   `insufficient_scope` naming the scope (RFC 6750 §3.1) where it is the one needed, the success
 *   status elsewhere; the operations that need none, with a token of no scope at all: success.
 * - every public operation without a token: its recipe's status.
 *
 * One request recipe per operation (`RECIPES`, keyed `METHOD /path`): how to fill the path with a
 * real record of the tenant (shared per world, or fresh per request for operations that consume
 * it), the query and a minimal valid body. An operation of `/openapi.json` without a recipe fails
 * the test: a new route must get one line here. Where the success needs an outside party that the
 * test does not run (an OpenID Connect provider, a WebSub hub), the recipe states the documented
 * status the route answers past any permission check, with why.
 */
import { type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '../../src/auth/secrets.ts';
import { issueTokens } from '../../src/auth/tokens.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { createJob } from '../../src/store/jobs.ts';
import { GRANT_ROLES, type GrantRole, grant } from '../../src/store/contracts.ts';
import { type Scope, SCOPES } from '../../src/store/tokens.ts';
import { build, buildItem, buildTenant, seedItems } from '../helper.ts';
import { Browser } from './browser-jar.ts';
import { expectedDecision, expectedOf } from './policy.ts';

/** A request as a recipe writes it: path and query, a JSON body or form fields, extra headers. */
interface Req {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  body?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

/** The caller of a request: a user granted the contract in a role (or nothing), with a token. */
interface Holder {
  token: string;
  consumerId: string;
  username: string;
  password: string;
}

/**
 * How to call one operation. `req` builds the request (it may create a fresh record first, as the
 * tenant's owner); `ok` is the status of success (default: the lowest 2xx the operation documents,
 * else its lowest 3xx); `own`: the call changes its caller's account (ends its sessions, turns on
 * two-factor sign-in), so each gets a fresh caller of the same role and scope.
 */
interface Recipe {
  req: (w: World, who: Holder, n: number) => Req | Promise<Req>;
  ok?: number;
  own?: true;
}

/** The password of every user of the test, hashed once (argon2id is slow by design; users are many). */
const PASSWORD = randomToken();
const PASSWORD_HASH = await hashSecret(PASSWORD);
const NAVIGATE = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'same-origin', accept: 'text/html' };
const REDIRECT = 'https://app.example.com/callback';
/** The code of an authenticator app `ahead` steps of 30 s after now (each code is taken once: later steps for later checks). */
const totp = (secret: string, ahead = 0) => new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + ahead * 30_000 });

type Kind = 'inputs' | 'lists' | 'sets' | 'chains' | 'collections' | 'customizations' | 'credentials' | 'webhooks';
/** Each management resource: its path and the body of a new record (filled by `resource`). */
const KINDS = {} as Record<Kind, { path: string; bodyOf: (w: World, n: number) => Record<string, unknown> }>;

let inputSerial = 0;

/** The recipes, one per operation of `/openapi.json` (a new route adds its line). */
const RECIPES: Record<string, Recipe> = {
  // Health, self-description.
  'GET /healthz': { req: () => ({ url: '/healthz' }) },
  'GET /readyz': { req: () => ({ url: '/readyz' }) },
  'GET /.well-known/oauth-authorization-server': { req: () => ({ url: '/.well-known/oauth-authorization-server' }) },
  'GET /v1/assets/sign-in.css': { req: () => ({ url: '/v1/assets/sign-in.css' }) },
  'GET /v1/embed.js': { req: () => ({ url: '/v1/embed.js' }) },
  'GET /v1/publication/assets/{name}': { req: () => ({ url: '/v1/publication/assets/wall.css' }) },
  // The media proxy without a valid signature: reached without a token, refused by the handler (docs/api.md#media-proxy).
  'GET /v1/media/{signature}/{url}': { ok: 403, req: () => ({ url: `/v1/media/AAAAAAAAAAAAAAAAAAAAAA/${Buffer.from('https://example.com/a.png').toString('base64url')}` }) },

  // OAuth and sign-in (public: they authenticate the client or the sign-in themselves).
  'POST /v1/oauth/token': { req: (w) => ({ method: 'POST', url: '/v1/oauth/token', form: { grant_type: 'client_credentials' }, headers: w.basic }) },
  'POST /v1/oauth/revoke': { req: async (w) => ({ method: 'POST', url: '/v1/oauth/revoke', form: { token: await w.clientToken() }, headers: w.basic }) },
  'GET /v1/oauth/token/info': { req: () => ({ url: '/v1/oauth/token/info' }) },
  'GET /v1/oauth/me': { req: () => ({ url: '/v1/oauth/me' }) },
  'GET /v1/authorize': { req: (w) => ({ url: w.authorizeUrl('/v1/authorize'), headers: NAVIGATE }) },
  'GET /v1/oauth/authorize': { req: (w) => ({ url: w.authorizeUrl('/v1/oauth/authorize'), headers: NAVIGATE }) },
  // Allow: back to the client with the token (303; the 200 is the page shown again after a mistake).
  'POST /v1/authorize': { ok: 303, req: (w) => w.consent('/v1/authorize') },
  'POST /v1/oauth/authorize': { ok: 303, req: (w) => w.consent('/v1/oauth/authorize') },
  'POST /v1/login': { req: async (w) => w.signIn(await w.user()) },
  'POST /v1/login/two-factor': { req: (w) => w.secondStep() },
  'POST /v1/logout': { req: async (w) => w.signedIn('/v1/logout', {}) },
  'POST /v1/oauth/logout': { req: async (w) => ({ method: 'POST', url: '/v1/oauth/logout', form: { client_id: w.publicClientId, token: await w.userToken(), post_logout_redirect_uri: REDIRECT } }) },
  // No OpenID Connect provider is configured here: the public routes answer 404 NotFoundError
  // (docs/api.md#browser-sign-in); oidc-login.test.ts runs them against a provider.
  'POST /v1/login/oidc': { req: async (w) => ({ ...(await w.signIn(await w.user())), url: '/v1/login/oidc' }), ok: 404 },
  'GET /v1/login/oidc/callback': { req: () => ({ url: '/v1/login/oidc/callback?code=x&state=y', headers: NAVIGATE }), ok: 404 },
  'GET /v1/invitations/{token}': { req: async (w) => ({ url: await w.invitation(), headers: { ...NAVIGATE, 'sec-fetch-site': 'none' } }) },
  'POST /v1/invitations/{token}': { req: async (w, _h, n) => w.linkForm(await w.invitation(), { username: `invitee-${n}`, password: 'correct horse battery' }) },
  'GET /v1/password-reset/{token}': { req: async (w) => ({ url: await w.resetLink(), headers: { ...NAVIGATE, 'sec-fetch-site': 'none' } }) },
  'POST /v1/password-reset/{token}': { req: async (w) => w.linkForm(await w.resetLink(), { password: 'correct horse battery staple' }) },

  // The caller's own account: any valid token.
  'POST /v1/account/password': { own: true, req: (_w, who) => ({ method: 'POST', url: '/v1/account/password', body: { currentPassword: who.password, newPassword: 'a new password of the test' } }) },
  'POST /v1/account/logout-all': { own: true, req: () => ({ method: 'POST', url: '/v1/account/logout-all' }) },
  'GET /v1/account/two-factor': { req: () => ({ url: '/v1/account/two-factor' }) },
  'POST /v1/account/two-factor': { own: true, req: () => ({ method: 'POST', url: '/v1/account/two-factor' }) },
  'POST /v1/account/two-factor/confirm': { own: true, req: async (w, who) => ({ method: 'POST', url: '/v1/account/two-factor/confirm', body: { code: totp(await w.enrol(who)) } }) },
  'POST /v1/account/two-factor/disable': { own: true, req: async (w, who) => ({ method: 'POST', url: '/v1/account/two-factor/disable', body: { code: totp(await w.enrol(who, true), 1) } }) },
  'POST /v1/account/two-factor/recovery-codes': { own: true, req: async (w, who) => ({ method: 'POST', url: '/v1/account/two-factor/recovery-codes', body: { code: totp(await w.enrol(who, true), 1) } }) },
  'GET /v1/customer/contracts/me': { req: () => ({ url: '/v1/customer/contracts/me' }) },

  // Queue API.
  'GET /v1/queue/{contract}': { req: (w) => ({ url: `/v1/queue/${w.slug}?q=${w.q}` }) },
  'PATCH /v1/queue/{contract}': { req: (w) => ({ method: 'PATCH', url: `/v1/queue/${w.slug}?q=${w.q}&id=rss_one`, body: { state: 'published' } }) },
  'POST /v1/queue/{contract}/split': { req: async (w, _h, n) => ({ method: 'POST', url: `/v1/queue/${w.slug}/split?q=${w.dq}&id=rss_story${n}`, body: { duplicateId: await w.duplicatePair(n) } }) },
  'GET /v1/queue/{contract}/history': { req: (w) => ({ url: `/v1/queue/${w.slug}/history?q=${w.q}&id=rss_one` }) },
  'GET /v1/queue/{contract}/count': { req: (w) => ({ url: `/v1/queue/${w.slug}/count?q=${w.q}` }) },
  'GET /v1/queue/{contract}/stream': { req: (w) => ({ url: `/v1/queue/${w.slug}/stream?q=${w.q}` }) },
  'POST /collection/audit/{id}/revert': { req: async (w, _h, n) => ({ method: 'POST', url: `/collection/audit/${await w.moderation(n)}/revert` }) },
  'POST /collection/collections/{id}/display': { req: (w) => ({ method: 'POST', url: `/collection/collections/${w.collectionId}/display`, body: { state: 'live' } }) },

  // Content API and walls (public).
  'GET /v1/content/{contract}': { req: (w) => ({ url: `/v1/content/${w.slug}?q=${w.q}` }) },
  'GET /v1/content/{contract}/stream': { req: (w) => ({ url: `/v1/content/${w.slug}/stream?q=${w.q}` }) },
  'GET /v1/count/{contract}': { req: (w) => ({ url: `/v1/count/${w.slug}?q=${w.q}` }) },
  'GET /v1/collections/{contract}': { req: (w) => ({ url: `/v1/collections/${w.slug}` }) },
  'GET /v1/publication/{contract}': { req: (w) => ({ url: `/v1/publication/${w.slug}?q=${w.q}` }) },
  'GET /v1/publication/{contract}/items': { req: (w) => ({ url: `/v1/publication/${w.slug}/items?q=${w.q}` }) },
  'POST /v1/publication/{contract}/beacon': { req: (w) => ({ method: 'POST', url: `/v1/publication/${w.slug}/beacon`, body: JSON.stringify({ q: w.q, page: 'wall', view: true }), headers: { 'content-type': 'text/plain' } }) },
  // Related content of an article on a private address: refused before any fetch, 422 (docs/api.md#related-content).
  'GET /v1/related/{contract}': { ok: 422, req: (w) => ({ url: `/v1/related/${w.slug}?q=${encodeURIComponent('http://127.0.0.1:9/story')}` }) },
  'GET /v1/articles/{contract}': { req: (w) => ({ url: `/v1/articles/${w.slug}` }) },
  'GET /v1/publication/{contract}/display': { req: (w) => ({ url: `/v1/publication/${w.slug}/display?q=${w.q}` }) },
  // WebSub callbacks: a hub's; no subscription of this id → 404 after the lookup (websub.test.ts runs a hub).
  'GET /websub/{id}': { req: () => ({ url: `/websub/${'f'.repeat(32)}?hub.mode=subscribe&hub.topic=x&hub.challenge=c` }), ok: 404 },
  'POST /websub/{id}': { req: () => ({ method: 'POST', url: `/websub/${'f'.repeat(32)}`, body: '<feed/>', headers: { 'content-type': 'application/atom+xml' } }), ok: 404 },

  // Management: the contract, services, filters, jobs, audit.
  'PATCH /collection/contracts/{id}': { req: (w) => ({ method: 'PATCH', url: `/collection/contracts/${w.contractId}`, body: { filterId: null } }) },
  'GET /collection/services': { req: () => ({ url: '/collection/services' }) },
  'GET /collection/filters/operators': { req: () => ({ url: '/collection/filters/operators' }) },
  'POST /collection/filters/test': { req: (w) => ({ method: 'POST', url: '/collection/filters/test', body: { contractId: w.contractId, filterId: w.ids.sets, items: [] } }) },
  'POST /collection/filters/apply': { req: (w) => ({ method: 'POST', url: '/collection/filters/apply', body: { contractId: w.contractId, filterId: w.ids.sets, collectionId: w.collectionId } }) },
  'GET /collection/jobs/{id}': { req: (w) => ({ url: `/collection/jobs/${w.ids.job}` }) },
  'GET /collection/articles': { req: (w) => ({ url: `/collection/articles?contract_id=${w.contractId}` }) },
  'POST /collection/articles': { ok: 201, req: (w, _h, n) => ({ method: 'POST', url: '/collection/articles', body: { contractId: w.contractId, url: `https://news.example.com/added-${n}` } }) },
  'DELETE /collection/articles/{id}': { req: async (w) => ({ method: 'DELETE', url: `/collection/articles/${await w.article()}` }) },
  // Erasure of an author who has no items: each a new name (docs/api.md#erasure).
  'POST /collection/erasures': { ok: 201, req: (w, _h, n) => ({ method: 'POST', url: '/collection/erasures', body: { contractId: w.contractId, service: 'rss', author: { name: `Nobody ${n}` } } }) },
  'GET /collection/blocked-authors': { req: (w) => ({ url: `/collection/blocked-authors?contract_id=${w.contractId}` }) },
  'DELETE /collection/blocked-authors/{id}': { ok: 204, req: async (w) => ({ method: 'DELETE', url: `/collection/blocked-authors/${await w.blockedAuthor()}` }) },
  'GET /collection/analytics': { req: (w) => ({ url: `/collection/analytics?collection_id=${w.collectionId}&from=0&to=86400` }) },
  'GET /collection/audit': { req: (w) => ({ url: `/collection/audit?contract_id=${w.contractId}` }) },
  'GET /collection/inputs/{id}/rejections': { req: (w) => ({ url: `/collection/inputs/${w.ids.inputs}/rejections` }) },
  'GET /publication/customizations/{id}/versions': { req: (w) => ({ url: `/publication/customizations/${w.ids.customizations}/versions` }) },
  'PUT /collection/inputs/{id}': { req: (w) => ({ method: 'PUT', url: `/collection/inputs/${w.ids.inputs}`, body: { service: 'twitter', type: 'tag', input: 'news' } }) },
  // Each input its own tag: a collection refuses a second input of the same source (docs/api.md#inputs).
  ...resource('inputs', '/collection/inputs', { service: 'twitter', type: 'tag' }, null, (w) => ({ collectionId: w.collectionId, input: `news${++inputSerial}` })),
  // Poll now: a fresh input each (one poll per input per 10 s); the twitter input has no credential, so the
  // poll's answer is 200 with status "error" (docs/api.md#poll-now), past the permission check.
  'POST /collection/inputs/{id}/poll': { req: async (w) => ({ method: 'POST', url: `/collection/inputs/${await w.fresh('inputs')}/poll` }) },
  // Publish anyway of an item the input never rejected: 404 naming itemId, after the permission
  // check (test/e2e/publish-anyway.test.ts publishes real rejections).
  'POST /collection/inputs/{id}/rejections/publish': { ok: 404, req: (w) => ({ method: 'POST', url: `/collection/inputs/${w.ids.inputs}/rejections/publish`, body: { itemId: 'rss_never_rejected' } }) },
  ...resource('lists', '/collection/lists', { type: 'strings', entries: ['spam'] }, { entries: ['spam', 'scam'] }),
  ...resource('sets', '/collection/sets', { rules: [], preCondition: { operator: 'exists', field: 'text', not: false } }, { or: true }),
  ...resource('chains', '/collection/chains', { sets: [] }, { sets: [] }),
  ...resource('collections', '/collection/collections', {}, { type: 'realtime' }),
  ...resource('customizations', '/publication/customizations', { type: 'css', data: 'body{color:#000}' }, { data: 'body{color:#111}' }),

  // Secrets and outbound connections: admins.
  ...resource('credentials', '/collection/credentials', { service: 'twitter', bearerToken: 'AAAA-bearer-token-of-the-test' }, { bearerToken: 'AAAA-bearer-token-renewed' }),
  ...resource('webhooks', '/collection/webhooks', { url: 'https://hooks.example.com/sluice', events: ['item.published'] }, { events: ['item.published', 'item.unpublished'] }),
  // The flow's start redirects the browser to the provider (a local address; nothing is fetched yet).
  'GET /collection/credentials/connect/{service}': { ok: 302, req: (w) => ({ url: `/collection/credentials/connect/twitter?contract_id=${w.contractId}` }) },
  // The provider's return of a flow the owner started, the user having denied it: back to the console saying so (303).
  'GET /collection/credentials/callback/{service}': { ok: 303, req: (w) => w.deniedConnection() },
  'GET /collection/webhooks/{id}/deliveries': { req: (w) => ({ url: `/collection/webhooks/${w.ids.webhooks}/deliveries` }) },
  'POST /collection/webhooks/{id}/deliveries/{deliveryId}/resend': { req: (w) => ({ method: 'POST', url: `/collection/webhooks/${w.ids.webhooks}/deliveries/${w.ids.delivery}/resend` }) },

  // The team.
  'GET /collection/contracts/{id}/members': { req: (w) => ({ url: `/collection/contracts/${w.contractId}/members` }) },
  'POST /collection/contracts/{id}/members': { req: async (w) => ({ method: 'POST', url: `/collection/contracts/${w.contractId}/members`, body: { consumerId: (await w.user()).consumerId, role: 'viewer' } }) },
  'PATCH /collection/contracts/{id}/members/{consumerId}': { req: async (w) => ({ method: 'PATCH', url: `/collection/contracts/${w.contractId}/members/${await w.member()}`, body: { role: 'viewer' } }) },
  'DELETE /collection/contracts/{id}/members/{consumerId}': { req: async (w) => ({ method: 'DELETE', url: `/collection/contracts/${w.contractId}/members/${await w.member()}` }) },
  'POST /collection/contracts/{id}/members/{consumerId}/password-reset': { req: async (w) => ({ method: 'POST', url: `/collection/contracts/${w.contractId}/members/${await w.member()}/password-reset` }) },
  'GET /collection/contracts/{id}/invitations': { req: (w) => ({ url: `/collection/contracts/${w.contractId}/invitations` }) },
  'POST /collection/contracts/{id}/invitations': { req: (w, _h, n) => ({ method: 'POST', url: `/collection/contracts/${w.contractId}/invitations`, body: { name: `Invitee ${n}`, email: `invitee-${n}@example.com`, role: 'viewer' } }) },
  'DELETE /collection/contracts/{id}/invitations/{invitationId}': { req: async (w) => ({ method: 'DELETE', url: `/collection/contracts/${w.contractId}/invitations/${(await w.invite())._id}` }) },
  'PUT /collection/contracts/{id}/two-factor': { req: (w) => ({ method: 'PUT', url: `/collection/contracts/${w.contractId}/two-factor`, body: { required: false } }) },
};

/**
 * The six record operations of a management resource (`management/resource.ts`): `create` the
 * body of a new record (a name and the contract added; `extra` for references), `patch` a change
 * of the shared one (null: the resource is updated by PUT, its own line); deletes act on a fresh one.
 */
function resource(kind: Kind, path: string, create: Record<string, unknown>, patch: Record<string, unknown> | null, extra?: (w: World) => Record<string, unknown>): Record<string, Recipe> {
  const bodyOf = (w: World, n: number) => ({ name: `${kind} ${n}`, contractId: w.contractId, ...create, ...extra?.(w) });
  KINDS[kind] = { path, bodyOf };
  return {
    [`POST ${path}`]: { req: (w, _h, n) => ({ method: 'POST', url: path, body: bodyOf(w, n) }) },
    [`GET ${path}`]: { req: (w) => ({ url: `${path}?contract_id=${w.contractId}` }) },
    [`DELETE ${path}`]: { req: async (w) => ({ method: 'DELETE', url: path, body: { ids: [await w.fresh(kind)] } }) },
    [`GET ${path}/{id}`]: { req: (w) => ({ url: `${path}/${w.ids[kind]}` }) },
    ...(patch ? { [`PATCH ${path}/{id}`]: { req: (w: World) => ({ method: 'PATCH' as const, url: `${path}/${w.ids[kind]}`, body: patch }) } } : {}),
    [`DELETE ${path}/{id}`]: { req: async (w) => ({ method: 'DELETE', url: `${path}/${await w.fresh(kind)}` }) },
  };
}

/** The app of one group of checks, listening on 127.0.0.1, with a tenant and a record of each kind. */
interface World {
  base: string;
  contractId: string;
  slug: string;
  /** The collection's slug (`q`), its id, and a second collection that merges duplicates (for splits). */
  q: string;
  collectionId: string;
  dq: string;
  /** A shared record of each kind, a job, a pending webhook delivery (of `ids.webhooks`). */
  ids: Record<Kind | 'job' | 'delivery', string>;
  /** The tenant's machine client (an owner): HTTP Basic client authentication, a new token of it. */
  basic: Record<string, string>;
  clientToken: () => Promise<string>;
  /** A public client that signs users in at REDIRECT. */
  publicClientId: string;
  /** Success status of each operation when its recipe names none. */
  documented: Record<string, number>;
  /** A user granted `role` (none: nothing) with a token of `scopes`. */
  holder: (role: GrantRole | undefined, scopes?: readonly Scope[]) => Promise<Holder>;
  user: () => Promise<Holder>;
  member: () => Promise<string>;
  userToken: () => Promise<string>;
  fresh: (kind: Kind) => Promise<string>;
  authorizeUrl: (path: string) => string;
  form: () => Promise<{ browser: Browser; body: string }>;
  signIn: (who: Holder) => Promise<Req>;
  signedIn: (action: string, extra: Record<string, string>) => Promise<Req>;
  consent: (action: string) => Promise<Req>;
  secondStep: () => Promise<Req>;
  invite: () => Promise<{ _id: string; link: string }>;
  invitation: () => Promise<string>;
  resetLink: () => Promise<string>;
  linkForm: (path: string, fields: Record<string, string>) => Promise<Req>;
  enrol: (who: Holder, confirm?: boolean) => Promise<string>;
  moderation: (n: number) => Promise<string>;
  deniedConnection: () => Promise<Req>;
  duplicatePair: (n: number) => Promise<string>;
  /** A new article of the contract (docs/api.md#articles), its id. */
  article: () => Promise<string>;
  /** A new blocked author of the contract (an erasure of an author without items), its id. */
  blockedAuthor: () => Promise<string>;
}

/** The form fields of `html`'s form posted to `action` (hidden inputs), or of its first form. */
function hiddenFields(html: string, action: string): Record<string, string> {
  const form = html.split(`action="${action}"`)[1]?.split('</form>')[0];
  if (form === undefined) throw new Error(`no form ${action} in ${html.slice(0, 300)}`);
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]));
}

const cookieOf = (browser: Browser) => [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ');

/** Service settings of the connect flow's start (no request leaves: the start only redirects). */
const CONNECT_ENV = { TWITTER_CLIENT_ID: 'twitter-client-id', TWITTER_CLIENT_SECRET: 'twitter-client-secret', TWITTER_AUTHORIZE_URL: 'http://127.0.0.1:9/authorize', TWITTER_TOKEN_URL: 'http://127.0.0.1:9/token' };

async function makeWorld(): Promise<World> {
  const { app, db } = await build(CONNECT_ENV);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const tenant = await buildTenant(db);
  const contractId = tenant.contract.id;
  const stories = await createCollection(db, contractId, { name: 'Stories', dedupe: 'url+text' }, 'test');
  await seedItems(db, tenant, [buildItem({ id: 'rss_one' })], 'unpublished');
  let serial = 0;
  /** A call of the tenant's owner client (the set-up's), asserting `status`. */
  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: object, status?: number) => {
    const res = await app.inject({ method, url, headers: { authorization: `Bearer ${tenant.token}` }, ...(body ? { payload: body } : {}) });
    if (status && res.statusCode !== status) throw new Error(`set-up ${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  };
  const publicClientId = randomToken().slice(0, 24);
  await createConsumer(db, { type: 'client', name: 'Desk', email: null, language: null, username: null, passwordHash: null, clientId: publicClientId, secretHash: null, redirectUris: [REDIRECT] });
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  const documented: Record<string, number> = {};
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const codes = Object.keys(op.responses).map(Number).filter((c) => c >= 200 && c < 400).sort();
      documented[`${method.toUpperCase()} ${path}`] = codes[0]!;
    }
  }
  const authorizeUrl = (path: string) => `${path}?${new URLSearchParams({ response_type: 'token', client_id: publicClientId, redirect_uri: REDIRECT, state: 's1' })}`;
  const form = async () => {
    const browser = new Browser(app);
    const page = await browser.get(authorizeUrl('/v1/authorize'), { ...NAVIGATE, 'sec-fetch-site': 'none' });
    if (page.statusCode !== 200) throw new Error(`sign-in page: ${page.statusCode}`);
    return { browser, body: page.body };
  };
  const asForm = (browser: Browser, action: string, fields: Record<string, string>): Req => ({ method: 'POST', url: action, form: fields, headers: { ...NAVIGATE, cookie: cookieOf(browser) } });
  const holder = async (role: GrantRole | undefined, scopes: readonly Scope[] = SCOPES): Promise<Holder> => {
    const username = `user-${randomToken().slice(0, 10)}`;
    const user = await createConsumer(db, { type: 'user', name: `The ${role ?? 'stranger'}`, email: `${username}@example.com`, language: null, username, passwordHash: PASSWORD_HASH, clientId: null, secretHash: null });
    if (role) await grant(db, user.id, contractId, undefined, role);
    const { access_token: token } = await issueTokens(db, user.id, { ttlSeconds: 3600, withRefresh: false, scope: scopes });
    return { token, consumerId: user.id, username, password: PASSWORD };
  };
  const call = (who: Holder, method: 'GET' | 'POST', url: string, body?: object) => app.inject({ method, url, headers: { authorization: `Bearer ${who.token}` }, ...(body ? { payload: body } : {}) });
  const enrol = async (who: Holder, confirm = false) => {
    const { secret } = (await call(who, 'POST', '/v1/account/two-factor')).json() as { secret: string };
    if (confirm) {
      const confirmed = await call(who, 'POST', '/v1/account/two-factor/confirm', { code: totp(secret) });
      if (confirmed.statusCode !== 200) throw new Error(`two-factor confirm: ${confirmed.body}`);
    }
    return secret;
  };
  const w: World = {
    base,
    contractId,
    slug: tenant.contract.slug,
    q: tenant.collection.slug,
    collectionId: tenant.collection.id,
    dq: stories.slug,
    ids: {} as World['ids'],
    basic: { authorization: `Basic ${Buffer.from(`${tenant.clientId}:${tenant.clientSecret}`).toString('base64')}` },
    clientToken: async () => (await issueTokens(db, tenant.consumer.id, { ttlSeconds: 3600, withRefresh: false })).access_token,
    publicClientId,
    documented,
    holder,
    user: () => holder(undefined),
    member: async () => {
      const member = await holder('viewer');
      return member.consumerId;
    },
    userToken: async () => {
      const user = await holder(undefined);
      return (await issueTokens(db, user.consumerId, { ttlSeconds: 3600, withRefresh: false, clientId: publicClientId })).access_token;
    },
    fresh: async (kind) => (await api('POST', KINDS[kind].path, KINDS[kind].bodyOf(w, ++serial), 201)).json()._id,
    authorizeUrl,
    form,
    signIn: async (who) => {
      const { browser, body } = await form();
      return asForm(browser, '/v1/login', { ...hiddenFields(body, '/v1/login'), username: who.username, password: who.password });
    },
    signedIn: async (action, extra) => {
      const who = await holder(undefined);
      const { browser, body } = await form();
      const signed = await browser.post('/v1/login', { ...hiddenFields(body, '/v1/login'), username: who.username, password: who.password }, NAVIGATE);
      if (signed.statusCode !== 303) throw new Error(`sign-in: ${signed.statusCode} ${signed.body.slice(0, 300)}`);
      // The consent page's forms post to /v1/authorize and /v1/logout; /v1/oauth/authorize is the same route under its OAuth path.
      const page = await browser.get(authorizeUrl('/v1/authorize'), NAVIGATE);
      return asForm(browser, action, { ...hiddenFields(page.body, action === '/v1/oauth/authorize' ? '/v1/authorize' : action), ...extra });
    },
    consent: (action) => w.signedIn(action, { decision: 'allow' }),
    secondStep: async () => {
      const who = await holder(undefined);
      const secret = await enrol(who, true);
      const { browser, body } = await form();
      const posted = await browser.post('/v1/login', { ...hiddenFields(body, '/v1/login'), username: who.username, password: who.password }, NAVIGATE);
      return asForm(browser, '/v1/login/two-factor', { ...hiddenFields(posted.body, '/v1/login/two-factor'), code: totp(secret, 1) });
    },
    article: async () => (await api('POST', '/collection/articles', { contractId, url: `https://news.example.com/story-${++serial}` }, 201)).json().id,
    blockedAuthor: async () => (await api('POST', '/collection/erasures', { contractId, service: 'rss', author: { name: `Blocked ${++serial}` } }, 201)).json().blockedAuthorId,
    invite: async () => (await api('POST', `/collection/contracts/${contractId}/invitations`, { name: 'Invitee', email: `invitee-${++serial}@example.com`, role: 'viewer' }, 201)).json(),
    invitation: async () => new URL((await w.invite()).link).pathname,
    resetLink: async () => new URL((await api('POST', `/collection/contracts/${contractId}/members/${await w.member()}/password-reset`, undefined, 201)).json().link).pathname,
    linkForm: async (path, fields) => {
      const browser = new Browser(app);
      const page = await browser.get(path, { ...NAVIGATE, 'sec-fetch-site': 'none' });
      return asForm(browser, path, { ...hiddenFields(page.body, path), ...fields });
    },
    enrol,
    moderation: async (n) => {
      await seedItems(db, tenant, [buildItem({ id: `rss_mod${n}` })], 'unpublished');
      const res = await api('PATCH', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=rss_mod${n}`, { state: 'published' }, 200);
      return String(res.headers['audit-id']);
    },
    deniedConnection: async () => {
      const browser = new Browser(app);
      const start = await app.inject({ method: 'GET', url: `/collection/credentials/connect/twitter?contract_id=${contractId}&return_to=/console/connections`, headers: { authorization: `Bearer ${tenant.token}` } });
      for (const c of start.cookies as { name: string; value: string }[]) browser.jar.set(c.name, c.value);
      const state = new URL(String(start.headers.location)).searchParams.get('state')!;
      return { url: `/collection/credentials/callback/twitter?${new URLSearchParams({ state, error: 'access_denied' })}`, headers: { ...NAVIGATE, 'sec-fetch-site': 'cross-site', cookie: cookieOf(browser) } };
    },
    duplicatePair: async (n) => {
      const url = `https://example-news.com/story/${n}`;
      const title = `Story number ${n} about the deep sea octopus filmed at depth`;
      const at = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
      await seedItems(db, { contract: tenant.contract, collection: stories }, [buildItem({ id: `rss_story${n}`, url, title, date: at(3) }), buildItem({ id: `rss_dup${n}`, url, title, date: at(2) })]);
      return `rss_dup${n}`;
    },
  };
  await Promise.all((Object.keys(KINDS) as Kind[]).map(async (kind) => (w.ids[kind] = await w.fresh(kind))));
  // A job (an application of a few items answers at once: the job is stored as a large one's
  // would be), and a pending delivery of the webhook (subscribed to item.published).
  w.ids.job = await createJob(db, { contractId, kind: 'filters.apply', params: {}, total: 0, actor: { id: tenant.consumer.id, name: tenant.consumer.name } });
  await seedItems(db, tenant, [buildItem({ id: 'rss_hooked' })], 'unpublished');
  await api('PATCH', `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=rss_hooked`, { state: 'published' }, 200);
  w.ids.delivery = (await api('GET', `/collection/webhooks/${w.ids.webhooks}/deliveries`, undefined, 200)).json()[0]._id;
  return w;
}

/**
 * A response over HTTP (node:http, which adds no Fetch Metadata of its own: the sign-in pages
 * answer only a browser's navigation); an event stream is closed once its status and headers are in.
 */
async function send(w: World, req: Req, token?: string): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const headers: Record<string, string> = { ...req.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (req.form) {
    body = new URLSearchParams(req.form).toString();
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  } else if (req.body !== undefined) {
    body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
    headers['content-type'] ??= 'application/json';
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const sent = request(w.base + req.url, { method: req.method ?? 'GET', headers, timeout: 30_000 }, (res) => {
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        resolve({ status: res.statusCode!, headers: res.headers, text: '' });
        return void res.destroy();
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    sent.on('timeout', () => sent.destroy(new Error(`${req.method ?? 'GET'} ${req.url}: no answer in 30 s`)));
    sent.on('error', reject);
    sent.end(body);
  });
}

/** Runs `task` over `items`, at most `width` at a time (a pool: one slow call holds up no others). */
async function inPool<T>(items: readonly T[], width: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** The operations of `/openapi.json` with their recipes; fails naming any without one. */
async function operations(w: World): Promise<string[]> {
  const ops = Object.keys(w.documented);
  expect(ops.filter((op) => !RECIPES[op]), 'operations without a recipe in RECIPES').toEqual([]);
  expect(Object.keys(RECIPES).filter((op) => !ops.includes(op)), 'recipes of no operation').toEqual([]);
  return ops;
}

let counter = 0;

/** Sends operation `op`'s request as a holder of `role` with `scopes`: the response and the request. */
async function attempt(w: World, op: string, holder: Holder, role: GrantRole | undefined, scopes: readonly Scope[]) {
  const recipe = RECIPES[op]!;
  const who = recipe.own ? await w.holder(role, scopes) : holder;
  const res = await send(w, await recipe.req(w, who, ++counter), who.token);
  return { res, ok: recipe.ok ?? w.documented[op]! };
}

/** What a refusal for want of a grant names: the path's contract, the body's or query's contract id, the record's id. */
const CONTRACT_REFERENCES = ['contract', 'contractId', 'contract_id', 'collection_id', 'id', 'ids[0]'];

const short = (text: string) => text.slice(0, 300);

describe('every operation of /openapi.json over HTTP', () => {
  it('× every role and no grant: the success status when the role suffices, else 403 naming the role', { timeout: 120_000 }, async () => {
    const w = await makeWorld();
    const ops = (await operations(w)).filter((op) => expectedOf(...(op.split(' ') as [string, string])).access !== 'public');
    // The contract operations as every role; those of any valid token (no contract) as a consumer granted nothing.
    const holders = await Promise.all([undefined, ...GRANT_ROLES].map(async (role) => ({ role, holder: await w.holder(role) })));
    const byContract = (op: string) => expectedOf(...(op.split(' ') as [string, string])).access === 'contract';
    const cases = holders.flatMap(({ role, holder }) => ops.filter((op) => role === undefined || byContract(op)).map((op) => ({ op, role, holder })));
    const wrong: string[] = [];
    await inPool(cases, 8, async ({ op, role, holder }) => {
      const [method, path] = op.split(' ') as [string, string];
      const expected = expectedOf(method, path);
      const { res, ok } = await attempt(w, op, holder, role, SCOPES);
      const as = `${op} as ${role ?? 'no grant'}`;
      if (expectedDecision(expected, role, SCOPES)) {
        if (res.status !== ok) wrong.push(`${as}: ${res.status}, not ${ok}: ${short(res.text)}`);
        return;
      }
      const needed = expected.access === 'contract' ? expected.role : '';
      const error = res.status === 403 ? (JSON.parse(res.text) as { errors: { name: string; propertyName?: string; reason?: string }[] }).errors[0] : undefined;
      // No grant: refused as another contract's (docs/api.md#errors), naming the reference to the contract.
      const refused = role ? error?.name === 'ForbiddenError' && error.propertyName === 'role' && error.reason === `needs role ${needed}` : error?.name === 'ForbiddenError' && CONTRACT_REFERENCES.includes(error.propertyName!);
      // …and without the contract's data: not even its id (docs/api.md#errors).
      if (!role && res.text.includes(w.contractId)) wrong.push(`${as}: the refusal shows the contract id: ${short(res.text)}`);
      if (!refused) wrong.push(`${as}: ${res.status}, not 403 ${role ? `needs role ${needed}` : 'of another contract'}: ${short(res.text)}`);
    });
    expect(wrong).toEqual([]);
    expect(cases.length).toBe(ops.length + ops.filter(byContract).length * 5);
  });

  it('× a token lacking each scope: 403 insufficient_scope where it is needed, the success status elsewhere', { timeout: 120_000 }, async () => {
    const w = await makeWorld();
    const ops = (await operations(w)).filter((op) => expectedOf(...(op.split(' ') as [string, string])).access !== 'public');
    const scopeOf = (op: string) => (expectedOf(...(op.split(' ') as [string, string])) as { scope: Scope | null }).scope;
    // An operation that needs a scope, × an owner's token lacking each scope in turn; one that needs
    // none, × a token of no scope at all (unaffected by any missing one: fewer slow account calls).
    const tokens = await Promise.all(
      [...SCOPES.map((missing) => [missing]), SCOPES].map(async (missing) => {
        const scopes = SCOPES.filter((scope) => !missing.includes(scope));
        return { missing, scopes, holder: await w.holder('owner', scopes) };
      }),
    );
    const cases = tokens.flatMap((token) => ops.filter((op) => (scopeOf(op) === null) === (token.missing.length > 1)).map((op) => ({ op, ...token })));
    const wrong: string[] = [];
    await inPool(cases, 8, async ({ op, missing, scopes, holder }) => {
      const needed = scopeOf(op);
      const { res, ok } = await attempt(w, op, holder, 'owner', scopes);
      const as = `${op} without ${missing.join(' ')}`;
      if (needed && missing.includes(needed)) {
        const error = res.status === 403 ? (JSON.parse(res.text) as { errors: { propertyName?: string }[] }).errors[0] : undefined;
        const challenge = String(res.headers['www-authenticate'] ?? '');
        if (error?.propertyName !== 'scope' || !new RegExp(`^Bearer error="insufficient_scope", .*scope="${needed}"$`).test(challenge)) wrong.push(`${as}: ${res.status} ${challenge}, not 403 insufficient_scope: ${short(res.text)}`);
      } else if (res.status !== ok) wrong.push(`${as}: ${res.status}, not ${ok}: ${short(res.text)}`);
    });
    expect(wrong).toEqual([]);
    expect(cases.length).toBe(ops.filter((op) => scopeOf(op)).length * SCOPES.length + ops.filter((op) => !scopeOf(op)).length);
    // Each scope is needed by some operation.
    for (const scope of SCOPES) expect(ops.some((op) => scopeOf(op) === scope), scope).toBe(true);
  });

  it('the public operations without a token: the success status (or the stated one)', { timeout: 60_000 }, async () => {
    const w = await makeWorld();
    const ops = (await operations(w)).filter((op) => expectedOf(...(op.split(' ') as [string, string])).access === 'public');
    expect(ops.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    await inPool(ops, 8, async (op) => {
      const recipe = RECIPES[op]!;
      const res = await send(w, await recipe.req(w, await w.user(), ++counter));
      const ok = recipe.ok ?? w.documented[op]!;
      if (res.status !== ok) wrong.push(`${op}: ${res.status}, not ${ok}: ${short(res.text)}`);
    });
    expect(wrong).toEqual([]);
  });
});
