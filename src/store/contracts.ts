/**
 * Contracts (docs/api.md#contract-access): the ownership scope of every resource, and the grants
 * that give a consumer access to one. Contract slugs are unique globally.
 */
import { newId } from '../lib/ids.ts';
import { slugify, uniqueSlug } from '../lib/slug.ts';
import { newRecordFields, iso } from '../lib/time.ts';
import type { Transaction } from 'kysely';
import { type Actor, recordAudit } from './audit.ts';
import { type Db, preparedLookup, serializable } from './db.ts';
import type { ContractRow, Database } from './tables.ts';

/** Creates a contract named `name` with a unique slug; `by` is the acting consumer's name. */
export async function createContract(db: Db, name: string, by: string): Promise<ContractRow> {
  // Serializable: a slug taken by a concurrent create (another process) makes this one retry.
  return serializable(db, async (trx) => {
    const base = slugify(name);
    const taken = await trx.selectFrom('contracts').select('slug').where('slug', 'like', `${base}%`).execute();
    const row: ContractRow = {
      id: newId(),
      name,
      slug: uniqueSlug(base, new Set(taken.map((t) => t.slug))),
      filterId: null,
      active: 1,
      requireTwoFactor: 0,
      ...newRecordFields(by),
    };
    await trx.insertInto('contracts').values(row).execute();
    return row;
  });
}

/** The contract with this id or slug, or undefined. */
export const findContract: (db: Db, idOrSlug: string) => Promise<ContractRow | undefined> = preparedLookup((db, idOrSlug: string) =>
  db.selectFrom('contracts').selectAll().where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)])),
);

/**
 * The roles a grant carries (docs/api.md#roles-and-scopes), from the least to the most: each may
 * do what the roles before it may, and more (the permission table, `http/permissions.ts`).
 */
export const GRANT_ROLES = ['viewer', 'moderator', 'editor', 'admin', 'owner'] as const;
export type GrantRole = (typeof GRANT_ROLES)[number];

/** Whether `name` is one of `GRANT_ROLES`. */
export function isGrantRole(name: string): name is GrantRole {
  return (GRANT_ROLES as readonly string[]).includes(name);
}

const findGrant = preparedLookup((db, consumerId: string, contractId: string) =>
  db.selectFrom('grants').select('role').where('consumerId', '=', consumerId).where('contractId', '=', contractId),
);

/**
 * The consumer's role on the contract, or undefined without a grant. A stored role this version
 * does not know counts as the least one, `viewer` (fail closed).
 */
export async function grantRole(db: Db, consumerId: string, contractId: string): Promise<GrantRole | undefined> {
  const row = await findGrant(db, consumerId, contractId);
  if (!row) return undefined;
  return isGrantRole(row.role) ? row.role : 'viewer';
}

/** Whether the consumer was granted access to the contract, in any role. */
export async function hasGrant(db: Db, consumerId: string, contractId: string): Promise<boolean> {
  return (await grantRole(db, consumerId, contractId)) !== undefined;
}

/**
 * Gives the consumer access to the contract in `role` (default `owner`: what a grant gave before
 * roles existed); granting the same role twice is a no-op, another role replaces the grant's. With
 * `by`, a new grant is recorded in the contract's audit trail (resource `grant`, the consumer's
 * id, action `create`) and a role change as its `update` with the roles before and after, in the
 * same transaction (docs/api.md#audit-trail). Returns what happened.
 */
export async function grant(db: Db, consumerId: string, contractId: string, by?: Actor, role: GrantRole = 'owner'): Promise<'created' | 'updated' | 'unchanged'> {
  return db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('grants').select('role').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
    if (before?.role === role) return 'unchanged';
    if (before) {
      await trx.updateTable('grants').set({ role }).where('consumerId', '=', consumerId).where('contractId', '=', contractId).execute();
      if (by) {
        const [was, is] = [{ consumerId, contractId, role: before.role }, { consumerId, contractId, role }];
        await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'update', before: was, after: is });
      }
      return 'updated';
    }
    const result = await trx
      .insertInto('grants')
      .values({ consumerId, contractId, created: iso(), role })
      .onConflict((oc) => oc.columns(['consumerId', 'contractId']).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return 'unchanged';
    if (by) await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'create', after: { consumerId, contractId, role } });
    return 'created';
  });
}

/** Takes the consumer's access to the contract away; returns whether a grant existed. With `by`, recorded as `grant`'s `delete`. */
export async function revokeGrant(db: Db, consumerId: string, contractId: string, by?: Actor): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('grants').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
    const existed = Number(result.numDeletedRows) > 0;
    if (by && existed) await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'delete', before: { consumerId, contractId } });
    return existed;
  });
}

/** The contracts the consumer was granted, each with the grant's role, in creation order (docs/api.md#contracts). */
export async function grantedContracts(db: Db, consumerId: string): Promise<(ContractRow & { role: string })[]> {
  return db
    .selectFrom('contracts')
    .innerJoin('grants', 'grants.contractId', 'contracts.id')
    .selectAll('contracts')
    .select('grants.role')
    .where('grants.consumerId', '=', consumerId)
    .orderBy('contracts.id')
    .execute();
}

/** Sets (or, with null, clears) the contract's filter (docs/filters.md#governing-filter: the last-resort filter). */
export async function setContractFilter(db: Db | Transaction<Database>, contractId: string, filterId: string | null, by: string): Promise<void> {
  await db.updateTable('contracts').set({ filterId, lastModified: iso(), lastModifiedBy: by }).where('id', '=', contractId).execute();
}

/** A member of a contract (docs/api.md#team): a consumer granted it, with the grant's role. */
export interface Member {
  consumerId: string;
  role: GrantRole;
  name: string;
  /** `user` or `client`. */
  type: string;
  /** The consumer's e-mail address; null for a client registered without one. */
  email: string | null;
  /** Ms of the consumer's last sign-in, or null when not known. */
  lastSignInAt: number | null;
  /** When the grant was made (ISO 8601). */
  granted: string;
  /** Whether the consumer has two-factor sign-in on (an enrolment confirmed; docs/api.md#two-factor-sign-in). */
  twoFactor: boolean;
}

/**
 * The members of the contract, in grant order (then consumer id), with their roles (an unknown
 * stored role reads as `viewer`, as `grantRole` does) and whether each has two-factor sign-in on
 * (a pending enrolment is not).
 */
export async function listMembers(db: Db, contractId: string): Promise<Member[]> {
  const rows = await db
    .selectFrom('grants')
    .innerJoin('consumers', 'consumers.id', 'grants.consumerId')
    .leftJoin('twoFactor', (join) => join.onRef('twoFactor.consumerId', '=', 'grants.consumerId').on('twoFactor.enabledAt', 'is not', null))
    .select(['grants.consumerId', 'grants.role', 'grants.created', 'consumers.name', 'consumers.type', 'consumers.email', 'consumers.lastSignInAt', 'twoFactor.consumerId as twoFactorOf'])
    .where('grants.contractId', '=', contractId)
    .orderBy('grants.created')
    .orderBy('grants.consumerId')
    .execute();
  return rows.map((row) => ({
    consumerId: row.consumerId,
    role: isGrantRole(row.role) ? row.role : 'viewer',
    name: row.name,
    type: row.type,
    email: row.email,
    lastSignInAt: row.lastSignInAt === null ? null : Number(row.lastSignInAt),
    granted: row.created,
    twoFactor: row.twoFactorOf !== null,
  }));
}

/** The contract's member `consumerId`, or undefined when the consumer holds no grant to it. */
export async function findMember(db: Db, contractId: string, consumerId: string): Promise<Member | undefined> {
  return (await listMembers(db, contractId)).find((member) => member.consumerId === consumerId);
}

/** How many grants of the contract are `owner` (inside `trx`). */
async function ownerCount(trx: Transaction<Database>, contractId: string): Promise<number> {
  const row = await trx.selectFrom('grants').select((eb) => eb.fn.countAll<number>().as('n')).where('contractId', '=', contractId).where('role', '=', 'owner').executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Changes member `consumerId`'s role on the contract to `role` (docs/api.md#team), recorded as
 * `grant`'s `update` with the roles before and after. Serializable: two admins demoting the last
 * two owners at once cannot leave the contract without one. Returns `missing` (no grant),
 * `last-owner` (the only owner would stop being one; nothing changed), or the role before.
 */
export async function changeMemberRole(db: Db, contractId: string, consumerId: string, role: GrantRole, by: Actor): Promise<'missing' | 'last-owner' | { before: GrantRole }> {
  return serializable(db, async (trx) => {
    const row = await trx.selectFrom('grants').select('role').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
    if (!row) return 'missing' as const;
    const before: GrantRole = isGrantRole(row.role) ? row.role : 'viewer';
    if (before === role) return { before };
    if (before === 'owner' && (await ownerCount(trx, contractId)) <= 1) return 'last-owner' as const;
    await trx.updateTable('grants').set({ role }).where('consumerId', '=', consumerId).where('contractId', '=', contractId).execute();
    await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'update', before: { consumerId, contractId, role: before }, after: { consumerId, contractId, role } });
    return { before };
  });
}

/**
 * Removes member `consumerId` from the contract (docs/api.md#team), recorded as `grant`'s
 * `delete` with the role it had. When the consumer holds no other grant, every token of it (as
 * consumer: access and refresh) is revoked in the same transaction; with other grants its tokens
 * stay valid for those contracts (tokens are per consumer, not per contract), and this contract is
 * refused at once by the grant check every request makes. Serializable, like `changeMemberRole`.
 * Returns `missing`, `last-owner` (nothing changed), or the role it had and the tokens revoked.
 */
export async function removeMember(db: Db, contractId: string, consumerId: string, by: Actor): Promise<'missing' | 'last-owner' | { role: GrantRole; tokensRevoked: number }> {
  return serializable(db, async (trx) => {
    const row = await trx.selectFrom('grants').select('role').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
    if (!row) return 'missing' as const;
    const role: GrantRole = isGrantRole(row.role) ? row.role : 'viewer';
    if (role === 'owner' && (await ownerCount(trx, contractId)) <= 1) return 'last-owner' as const;
    await trx.deleteFrom('grants').where('consumerId', '=', consumerId).where('contractId', '=', contractId).execute();
    await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'delete', before: { consumerId, contractId, role } });
    const others = await trx.selectFrom('grants').select('contractId').where('consumerId', '=', consumerId).executeTakeFirst();
    let tokensRevoked = 0;
    if (!others) {
      const revoked = await trx.updateTable('tokens').set({ revoked: 1 }).where('consumerId', '=', consumerId).where('revoked', '=', 0).executeTakeFirst();
      tokensRevoked = Number(revoked.numUpdatedRows);
    }
    return { role, tokensRevoked };
  });
}
