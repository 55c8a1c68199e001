/**
 * What the console shows for the signed-in user's role on the current contract: the one place
 * that maps a role (the `role` of each `GET /v1/customer/contracts/me` entry) to the screens and
 * controls shown. It mirrors the table of docs/api.md#roles-and-scopes (the server's
 * `src/http/permissions.ts` enforces it; this module only keeps the console from offering, or
 * asking the API for, what the role would be refused):
 *
 * | ability    | least role  | shown                                                              |
 * |------------|-------------|--------------------------------------------------------------------|
 * | `read`     | `viewer`    | contracts and collections, the moderation queue (read only)        |
 * | `moderate` | `moderator` | Publish/Unpublish, Pin, Spotlight, Edit, Split off, bulk moderation |
 * | `edit`     | `editor`    | Sources, Filters, Publication; create, rename, retention of collections |
 * | `admin`    | `admin`     | Connections (credentials), Team (members and invitations), Blocked authors (erasure) |
 * | `owner`    | `owner`     | giving the role owner, changing or removing an owner               |
 *
 * The order of the roles is the API's (`Role` of the OpenAPI document): each may do what the
 * ones before it may.
 */
import type { Contract } from './resources.ts';
import { useContractId, useSession } from './session.ts';

/** A role on a contract (docs/api.md#roles-and-scopes). */
export type Role = Contract['role'];

/** The roles, lowest first. */
export const ROLES: readonly Role[] = ['viewer', 'moderator', 'editor', 'admin', 'owner'];

/** The least role of each ability (the module's table). */
export const ABILITIES = {
  read: 'viewer',
  moderate: 'moderator',
  edit: 'editor',
  admin: 'admin',
  owner: 'owner',
} as const satisfies Record<string, Role>;

export type Ability = keyof typeof ABILITIES;

/** Whether `role` has `ability`; no role (no grant, or not loaded yet) has none. */
export function may(role: Role | undefined, ability: Ability): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(ABILITIES[ability]);
}

/** The roles `role` may give (docs/api.md#team, role rule): its own and those below it. */
export function rolesUpTo(role: Role | undefined): Role[] {
  return role === undefined ? [] : ROLES.slice(0, ROLES.indexOf(role) + 1);
}

/** The role on `contractId` among `contracts` (undefined while loading or without a grant). */
export function roleOn(contracts: Contract[] | undefined, contractId: string | undefined): Role | undefined {
  return contracts?.find((contract) => contract._id === contractId)?.role;
}

/** The signed-in user's role on the contract of the address (undefined while loading or without a grant). */
export function useRole(): Role | undefined {
  return roleOn(useSession().contracts, useContractId());
}
