/**
 * The access policy (issue 32, docs/api.md#roles-and-scopes) written independently of the
 * permission table (`src/http/permissions.ts`), by an operation's method and path: the one copy
 * shared by the permission tests (permissions.test.ts at the permission layer,
 * permissions-http.test.ts over HTTP for every operation).
 */
import { GRANT_ROLES, type GrantRole } from '../../src/store/contracts.ts';
import type { Scope } from '../../src/store/tokens.ts';

export type Expected = { access: 'public' } | { access: 'token'; scope: Scope | null } | { access: 'contract'; role: GrantRole; scope: Scope };

export const PUBLIC_PATHS = [
  /^\/(healthz|readyz)$/,
  /^\/\.well-known\//,
  /^\/v1\/(content|count|collections|publication|related|articles)\//,
  // The media proxy: its URL's signature is the credential (docs/api.md#media-proxy).
  /^\/v1\/media\//,
  /^\/v1\/embed\.js$/,
  /^\/websub\//,
  /^\/v1\/(oauth\/)?authorize$/,
  /^\/v1\/(login|logout|oauth\/logout|oauth\/token|oauth\/revoke)$/,
  // Sign-in through the OpenID Connect provider: the state and the provider's answer are the credential.
  /^\/v1\/login\/oidc(\/callback)?$/,
  /^\/v1\/assets\//,
  /^\/collection\/credentials\/callback\//,
  /^\/v1\/invitations\//,
  // The second step of a sign-in: its cookie names the user (issue 32 point 4).
  /^\/v1\/login\/two-factor$/,
  /^\/v1\/password-reset\//,
];

/**
 * The issue's policy for an operation, written from its text rather than from the table: public
 * reads and the OAuth endpoints; token-only self-description; viewers read the queue and the
 * management resources; moderators moderate; editors change collections, inputs, filters and
 * customizations; admins hold the secrets (credentials, connect flows, webhooks) and the whole
 * audit trail and the team (members, invitations and members' password-reset links, scope
 * `team`); the invitee's page and the password-reset page are public (the link's token is the
 * credential).
 */
export function expectedOf(method: string, path: string): Expected {
  if (PUBLIC_PATHS.some((pattern) => pattern.test(path))) return { access: 'public' };
  if (['/v1/oauth/me', '/v1/oauth/token/info', '/v1/customer/contracts/me'].includes(path)) return { access: 'token', scope: null };
  // The caller's own account (issue 32 point 4): any valid token, no contract.
  if (path.startsWith('/v1/account/')) return { access: 'token', scope: null };
  if (['/collection/services', '/collection/filters/operators'].includes(path)) return { access: 'token', scope: 'manage:read' };
  if (path.startsWith('/v1/queue/')) return method === 'GET' ? { access: 'contract', role: 'viewer', scope: 'queue:read' } : { access: 'contract', role: 'moderator', scope: 'queue:moderate' };
  if (path === '/collection/audit/{id}/revert') return { access: 'contract', role: 'moderator', scope: 'queue:moderate' };
  // Publishing a rejected item anyway moderates the queue (issue 33 point 4).
  if (path === '/collection/inputs/{id}/rejections/publish') return { access: 'contract', role: 'moderator', scope: 'queue:moderate' };
  // The event screens' Pause/Blank/Resume: a moderator's control on a live night (issue 35).
  if (path === '/collection/collections/{id}/display') return { access: 'contract', role: 'moderator', scope: 'queue:moderate' };
  // A collection's publication analytics (issue 35 point 4): what any viewer may read.
  if (path === '/collection/analytics') return { access: 'contract', role: 'viewer', scope: 'manage:read' };
  // Erasing an author's items (irreversible) and lifting the block it set: admins (issue 34 point 3).
  if (path === '/collection/erasures' || (path === '/collection/blocked-authors/{id}' && method === 'DELETE')) return { access: 'contract', role: 'admin', scope: 'manage:write' };
  if (path === '/collection/audit') return { access: 'contract', role: 'admin', scope: 'manage:read' };
  if (/^\/collection\/(credentials|webhooks)\b/.test(path)) return { access: 'contract', role: 'admin', scope: 'credentials' };
  // The team (members, invitations, a member's password-reset link): admins with the scope team, whatever the method.
  if (/^\/collection\/contracts\/\{id\}\/(members|invitations)\b/.test(path)) return { access: 'contract', role: 'admin', scope: 'team' };
  // Requiring two-factor sign-in of a contract's members: the owner's call (issue 32 point 4).
  if (path === '/collection/contracts/{id}/two-factor') return { access: 'contract', role: 'owner', scope: 'team' };
  // Poll now: a real request to the source, as an editor's change would trigger (issue 33 point 5).
  if (path === '/collection/inputs/{id}/poll') return { access: 'contract', role: 'editor', scope: 'manage:write' };
  if (path === '/collection/filters/test') return { access: 'contract', role: 'editor', scope: 'manage:read' };
  if (/^\/(collection|publication)\//.test(path)) return method === 'GET' ? { access: 'contract', role: 'viewer', scope: 'manage:read' } : { access: 'contract', role: 'editor', scope: 'manage:write' };
  throw new Error(`no expectation for ${method} ${path}: add it to the policy of this test`);
}

/** Whether the policy lets a consumer of `role` (none: no grant) with a token of `scopes` call the operation. */
export function expectedDecision(expected: Expected, role: GrantRole | undefined, scopes: readonly Scope[]): boolean {
  if (expected.access === 'public') return true;
  if (expected.scope && !scopes.includes(expected.scope)) return false;
  if (expected.access === 'token') return true;
  return role !== undefined && GRANT_ROLES.indexOf(role) >= GRANT_ROLES.indexOf(expected.role);
}
