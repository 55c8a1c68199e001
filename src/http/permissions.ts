/**
 * The permission table (docs/api.md#roles-and-scopes): for every operation of the HTTP interface,
 * by its operation id `<METHOD> <path>` with the path as `/openapi.json` writes it
 * (`PATCH /v1/queue/{contract}`), who may call it:
 *
 * - `public`: anyone; the route checks whatever credentials it takes itself (client
 *   authentication at the token endpoint, the sign-in session, a WebSub hub's signature, the
 *   `METRICS_TOKEN`) or serves public content (content API, walls, documentation, the console's
 *   files);
 * - `token`: any valid access token, whatever its grants (token info, consumer details, the
 *   contracts listing), with `scope` when not null;
 * - `contract`: a token whose consumer holds, on the contract the request acts on, at least the
 *   role `role` (roles are ordered `GRANT_ROLES`: viewer < moderator < editor < admin < owner;
 *   each may do what the ones before it may), and whose scope includes `scope` (RFC 6749 §3.3,
 *   RFC 6750 §3.1).
 *
 * `http/authenticate.ts` enforces it: every route registered gets its entry at registration (a
 * route without one fails the start, so none can be forgotten; a request to one is refused), the
 * scope is checked before the handler runs, and the role where the request's contract becomes
 * known (`requireContractAccess`). This module is the table and pure functions over it.
 */
import { GRANT_ROLES, type GrantRole } from '../store/contracts.ts';
import type { Scope } from '../store/tokens.ts';

export type Permission =
  | { access: 'public' }
  | { access: 'token'; scope: Scope | null }
  | { access: 'contract'; role: GrantRole; scope: Scope };

const PUBLIC: Permission = { access: 'public' };
const token = (scope: Scope | null = null): Permission => ({ access: 'token', scope });
const contract = (role: GrantRole, scope: Scope): Permission => ({ access: 'contract', role, scope });

const read = contract('viewer', 'manage:read');
const write = contract('editor', 'manage:write');
const secret = contract('admin', 'credentials');
const team = contract('admin', 'team');

/** The six record operations of a management resource at `path` (`management/resource.ts`), the reads for `reads`, the rest for `writes`. */
function records(path: string, reads: Permission, writes: Permission): Record<string, Permission> {
  return {
    [`POST ${path}`]: writes,
    [`GET ${path}`]: reads,
    [`DELETE ${path}`]: writes,
    [`GET ${path}/{id}`]: reads,
    [`${path === '/collection/inputs' ? 'PUT' : 'PATCH'} ${path}/{id}`]: writes,
    [`DELETE ${path}/{id}`]: writes,
  };
}

/** Every operation of the interface → who may call it (the module's description). */
export const PERMISSIONS: Readonly<Record<string, Permission>> = {
  // Health, self-description, metrics (METRICS_TOKEN), the console's files.
  'GET /healthz': PUBLIC,
  'GET /readyz': PUBLIC,
  'GET /metrics': PUBLIC,
  'GET /openapi.json': PUBLIC,
  'GET /docs': PUBLIC,
  'GET /docs/json': PUBLIC,
  'GET /docs/yaml': PUBLIC,
  'GET /docs/static/*': PUBLIC,
  'GET /docs/static/index.html': PUBLIC,
  'GET /docs/static/swagger-initializer.js': PUBLIC,
  'GET /': PUBLIC,
  'GET /console': PUBLIC,
  'GET /console/*': PUBLIC,

  // Authorization API: the OAuth endpoints authenticate the client or the sign-in session themselves.
  'POST /v1/oauth/token': PUBLIC,
  'POST /v1/oauth/revoke': PUBLIC,
  'GET /.well-known/oauth-authorization-server': PUBLIC,
  'GET /v1/authorize': PUBLIC,
  'POST /v1/authorize': PUBLIC,
  'GET /v1/oauth/authorize': PUBLIC,
  'POST /v1/oauth/authorize': PUBLIC,
  'POST /v1/login': PUBLIC,
  'POST /v1/login/oidc': PUBLIC,
  'GET /v1/login/oidc/callback': PUBLIC,
  // The second step of a sign-in: the step's cookie names the user (auth/login/two-factor.ts).
  'POST /v1/login/two-factor': PUBLIC,
  'POST /v1/logout': PUBLIC,
  'POST /v1/oauth/logout': PUBLIC,
  'GET /v1/assets/sign-in.css': PUBLIC,
  'GET /v1/oauth/token/info': token(),
  'GET /v1/oauth/me': token(),
  // The caller's own account (a password change is a user's; the route refuses a client's token).
  'POST /v1/account/password': token(),
  'POST /v1/account/logout-all': token(),
  // Two-factor sign-in of the caller (a user's; the routes refuse a client's token).
  'GET /v1/account/two-factor': token(),
  'POST /v1/account/two-factor': token(),
  'POST /v1/account/two-factor/confirm': token(),
  'POST /v1/account/two-factor/disable': token(),
  'POST /v1/account/two-factor/recovery-codes': token(),

  // Queue API.
  'GET /v1/queue/{contract}': contract('viewer', 'queue:read'),
  'GET /v1/queue/{contract}/history': contract('viewer', 'queue:read'),
  'GET /v1/queue/{contract}/count': contract('viewer', 'queue:read'),
  'GET /v1/queue/{contract}/stream': contract('viewer', 'queue:read'),
  'PATCH /v1/queue/{contract}': contract('moderator', 'queue:moderate'),
  'POST /v1/queue/{contract}/split': contract('moderator', 'queue:moderate'),
  'POST /collection/audit/{id}/revert': contract('moderator', 'queue:moderate'),
  // Pause, Blank, Resume of the event screens: the moderator on shift's emergency controls.
  'POST /collection/collections/{id}/display': contract('moderator', 'queue:moderate'),

  // Content API and walls: public reads of published content.
  'GET /v1/content/{contract}': PUBLIC,
  'GET /v1/content/{contract}/stream': PUBLIC,
  'GET /v1/count/{contract}': PUBLIC,
  'GET /v1/collections/{contract}': PUBLIC,
  'GET /v1/related/{contract}': PUBLIC,
  'GET /v1/articles/{contract}': PUBLIC,
  'GET /v1/publication/{contract}': PUBLIC,
  'GET /v1/publication/{contract}/items': PUBLIC,
  'GET /v1/publication/{contract}/display': PUBLIC,
  // The walls' analytics beacon (publication/beacon.ts): counts only, limited per address in memory.
  'POST /v1/publication/{contract}/beacon': PUBLIC,
  'GET /v1/publication/assets/{name}': PUBLIC,
  // The media proxy (publication/media.ts): the URL's signature is the credential.
  'GET /v1/media/{signature}/{url}': PUBLIC,
  'GET /v1/embed.js': PUBLIC,
  // WebSub callbacks: hubs, checked by the subscription's secret (collect/websub).
  'GET /websub/{id}': PUBLIC,
  'POST /websub/{id}': PUBLIC,

  // Management API: reads for viewers, changes for editors.
  'GET /v1/customer/contracts/me': token(),
  // Articles of related content: added ahead of their first visit, or removed, by editors.
  'GET /collection/articles': read,
  'POST /collection/articles': write,
  'DELETE /collection/articles/{id}': write,
  // Erasure on request cannot be undone, and lifting a block undoes what one asked for: admins (docs/api.md#erasure).
  'POST /collection/erasures': contract('admin', 'manage:write'),
  'GET /collection/blocked-authors': read,
  'DELETE /collection/blocked-authors/{id}': contract('admin', 'manage:write'),
  'PATCH /collection/contracts/{id}': write,
  'GET /collection/services': token('manage:read'),
  ...records('/collection/inputs', read, write),
  'GET /collection/inputs/{id}/rejections': read,
  'POST /collection/inputs/{id}/poll': write,
  // Publishing a rejected item anyway is a moderation of the queue.
  'POST /collection/inputs/{id}/rejections/publish': contract('moderator', 'queue:moderate'),
  ...records('/collection/lists', read, write),
  ...records('/collection/sets', read, write),
  ...records('/collection/chains', read, write),
  ...records('/collection/collections', read, write),
  ...records('/publication/customizations', read, write),
  'GET /publication/customizations/{id}/versions': read,
  'GET /collection/filters/operators': token('manage:read'),
  'POST /collection/filters/test': contract('editor', 'manage:read'),
  'POST /collection/filters/apply': write,
  'GET /collection/jobs/{id}': read,
  'GET /collection/analytics': read,

  // Secrets and outbound connections: admins.
  ...records('/collection/credentials', secret, secret),
  'GET /collection/credentials/connect/{service}': secret,
  // The provider sends the browser back here; the flow's state names the contract and who started it.
  'GET /collection/credentials/callback/{service}': PUBLIC,
  ...records('/collection/webhooks', secret, secret),
  'GET /collection/webhooks/{id}/deliveries': secret,
  'POST /collection/webhooks/{id}/deliveries/{deliveryId}/resend': secret,
  'GET /collection/audit': contract('admin', 'manage:read'),

  // The team (members and invitations): admins, with the scope `team`.
  'GET /collection/contracts/{id}/members': team,
  'POST /collection/contracts/{id}/members': team,
  'PATCH /collection/contracts/{id}/members/{consumerId}': team,
  'DELETE /collection/contracts/{id}/members/{consumerId}': team,
  'POST /collection/contracts/{id}/members/{consumerId}/password-reset': team,
  'GET /collection/contracts/{id}/invitations': team,
  'POST /collection/contracts/{id}/invitations': team,
  'DELETE /collection/contracts/{id}/invitations/{invitationId}': team,
  // Whether members must use two-factor sign-in: the owner's call.
  'PUT /collection/contracts/{id}/two-factor': contract('owner', 'team'),
  // The invitee's page: the link's token is the credential (auth/login/invitation.ts).
  'GET /v1/invitations/{token}': PUBLIC,
  'POST /v1/invitations/{token}': PUBLIC,
  // The member's password-reset page: the link's token is the credential (auth/login/password-reset.ts).
  'GET /v1/password-reset/{token}': PUBLIC,
  'POST /v1/password-reset/{token}': PUBLIC,
};

/**
 * The operation id of a route (`<METHOD> <path>`, the path as OpenAPI writes it): `:name`
 * parameters become `{name}`; HEAD is the GET of the same path (Fastify answers HEAD from GET).
 */
export function operationId(method: string, url: string): string {
  const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return `${verb} ${url.replace(/:(\w+)/g, '{$1}')}`;
}

/** The permission of operation `id`, or undefined when the table has none (such a route is refused). */
export function permissionOf(id: string): Permission | undefined {
  return Object.hasOwn(PERMISSIONS, id) ? PERMISSIONS[id] : undefined;
}

/** Whether `role` is `needed` or a role above it (`GRANT_ROLES` order). */
export function roleAtLeast(role: GrantRole, needed: GrantRole): boolean {
  return GRANT_ROLES.indexOf(role) >= GRANT_ROLES.indexOf(needed);
}

/**
 * Whether a token with scope `scopes` whose consumer holds `role` on the request's contract (none:
 * no grant) may call an operation of `permission`. Pure: the table test runs every operation of
 * `/openapi.json` through it.
 */
export function allows(permission: Permission, role: GrantRole | undefined, scopes: readonly Scope[]): boolean {
  if (permission.access === 'public') return true;
  if (permission.scope && !scopes.includes(permission.scope)) return false;
  if (permission.access === 'token') return true;
  return role !== undefined && roleAtLeast(role, permission.role);
}

/**
 * Whether `role` (none: no grant) may call operation `id` whatever the token's scope: for work
 * that finishes later on behalf of the consumer who started it (a connect flow's callback checks
 * that its starter may still connect). False for an operation outside the table.
 */
export function roleAllows(id: string, role: GrantRole | undefined): boolean {
  const permission = permissionOf(id);
  if (!permission) return false;
  return allows(permission, role, permission.access === 'public' || !permission.scope ? [] : [permission.scope]);
}
