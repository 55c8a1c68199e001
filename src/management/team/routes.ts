/**
 * The team of a contract on {api_url} (docs/api.md#team, docs/api.md#invitations), for its admins
 * (role `admin`, scope `team`: the permission table, `http/permissions.ts`):
 *
 *   GET    /collection/contracts/{id}/members                     the members → 200 array
 *   POST   /collection/contracts/{id}/members                     {consumerId, role} → 201 the member
 *   PATCH  /collection/contracts/{id}/members/{consumerId}        {role} → 200 the member
 *   DELETE /collection/contracts/{id}/members/{consumerId}        → 204; tokens revoked when no other grant
 *   POST   /collection/contracts/{id}/members/{consumerId}/password-reset
 *                                                                 a single-use reset link for a user → 201, once
 *   POST   /collection/contracts/{id}/invitations                 {name, email, role} → 201 with the link, once
 *   GET    /collection/contracts/{id}/invitations                 the pending ones (no link) → 200 array
 *   DELETE /collection/contracts/{id}/invitations/{invitationId}  withdraw → 204
 *
 * Order of checks: authenticate (401) → the contract (404 unknown) → the caller's role and scope
 * on it (403) → the body (400 naming the property) → the role rule (403 naming `role`) → the
 * target (404) → the last owner (409). The role rule (docs/api.md#team): nobody gives a role above
 * their own, and only an owner changes or removes an owner — an admin manages viewers to admins.
 * A password reset (docs/api.md#password-reset) adds: a machine client → 409 naming `consumerId`;
 * a user who holds another contract in a role the caller does not hold there at least → 403
 * naming `consumerId` (a reset link signs in everywhere the user is a member, so an admin of one
 * contract cannot take over an account that is more in another).
 * Changes are audit entries in their transaction (store/contracts.ts, store/invitations.ts,
 * store/password-resets.ts).
 */
import type { Config } from '../../config.ts';
import { ApiError, conflictError, notFoundError } from '../../errors.ts';
import { authenticate, type Principal, requireContractAccess } from '../../http/authenticate.ts';
import { roleAtLeast } from '../../http/permissions.ts';
import type { App } from '../../http/typed.ts';
import { check } from '../../http/validate.ts';
import { iso } from '../../lib/time.ts';
import { findConsumer } from '../../store/consumers.ts';
import { changeMemberRole, findContract, findMember, type GrantRole, grant, grantedContracts, isGrantRole, listMembers, type Member, removeMember } from '../../store/contracts.ts';
import type { Db } from '../../store/db.ts';
import { createInvitation, pendingInvitations, presentInvitation, withdrawInvitation } from '../../store/invitations.ts';
import { createPasswordReset, presentPasswordReset } from '../../store/password-resets.ts';
import { actorOf } from '../resource.ts';
import { mailFailure, type TeamMailer } from './mail.ts';
import { InvitationCreate, MemberCreate, MemberUpdate, schemas } from './schema.ts';

/** A member as the API shows it (docs/api.md#team). */
export function presentMember(member: Member) {
  return {
    consumerId: member.consumerId,
    role: member.role,
    name: member.name,
    type: member.type,
    email: member.email,
    lastSignIn: member.lastSignInAt === null ? null : iso(member.lastSignInAt),
    granted: member.granted,
    twoFactor: member.twoFactor,
  };
}

/**
 * 403 for giving, changing or taking a role above the caller's own (docs/api.md#team): names
 * `role`, its value the caller's role, `reason` the role it would need.
 */
function aboveOwnRole(what: string, role: GrantRole, own: GrantRole): ApiError {
  return new ApiError(403, [
    {
      name: 'ForbiddenError',
      message: `${what} needs the role ${role} on the contract; this consumer's role is ${own}.`,
      propertyName: 'role',
      propertyValue: own,
      reason: `needs role ${role}`,
      code: 3001,
    },
  ]);
}

/** Throws unless a caller of role `own` may deal with the role `role` (give it, or change or remove a member who has it). */
function mayHandle(own: GrantRole, role: GrantRole, what: string): void {
  if (!roleAtLeast(own, role)) throw aboveOwnRole(what, role, own);
}

/** Registers the module's routes on `app` (see the module's description); `mailer` sends invitation links when SMTP is configured. */
export function teamRoutes(app: App, { db, config, mailer }: { db: Db; config: Config; mailer?: TeamMailer }): void {
  /** The caller's role on contract `id` after the checks every route makes: 401, 404 unknown contract, 403. */
  async function access(principal: Principal, id: string): Promise<GrantRole> {
    const contract = await findContract(db, id);
    if (!contract || contract.id !== id) throw notFoundError(`No contract ${id}.`, 'id', id);
    return requireContractAccess(db, principal, id, 'id');
  }

  const memberOf = async (contractId: string, consumerId: string) => {
    const member = await findMember(db, contractId, consumerId);
    if (!member) throw notFoundError(`Consumer ${consumerId} is not a member of this contract.`, 'consumerId', consumerId);
    return member;
  };

  app.get('/collection/contracts/:id/members', { schema: schemas.listMembers }, async (request) => {
    const principal = await authenticate(db, request);
    await access(principal, request.params.id);
    return (await listMembers(db, request.params.id)).map(presentMember);
  });

  app.post('/collection/contracts/:id/members', { schema: schemas.addMember }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id } = request.params;
    const own = await access(principal, id);
    const { consumerId, role } = check(MemberCreate, request.body) as { consumerId: string; role: GrantRole };
    mayHandle(own, role, `Granting the role ${role}`);
    const consumer = await findConsumer(db, consumerId);
    if (!consumer) throw notFoundError(`No consumer ${consumerId}.`, 'consumerId', consumerId);
    if (await findMember(db, id, consumerId)) throw conflictError(`Consumer ${consumerId} is already a member of this contract; change its role with PATCH.`, 'consumerId', consumerId);
    await grant(db, consumerId, id, actorOf(principal), role);
    return reply.code(201).send(presentMember(await memberOf(id, consumerId)));
  });

  app.patch('/collection/contracts/:id/members/:consumerId', { schema: schemas.updateMember }, async (request) => {
    const principal = await authenticate(db, request);
    const { id, consumerId } = request.params;
    const own = await access(principal, id);
    const { role } = check(MemberUpdate, request.body) as { role: GrantRole };
    mayHandle(own, role, `Granting the role ${role}`);
    const member = await memberOf(id, consumerId);
    mayHandle(own, member.role, `Changing the role of a member who is ${member.role}`);
    const outcome = await changeMemberRole(db, id, consumerId, role, actorOf(principal));
    if (outcome === 'missing') throw notFoundError(`Consumer ${consumerId} is not a member of this contract.`, 'consumerId', consumerId);
    if (outcome === 'last-owner') throw conflictError(`Consumer ${consumerId} is the contract's last owner: make another member owner first.`, 'role', role);
    return presentMember(await memberOf(id, consumerId));
  });

  app.delete('/collection/contracts/:id/members/:consumerId', { schema: schemas.removeMember }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id, consumerId } = request.params;
    const own = await access(principal, id);
    const member = await memberOf(id, consumerId);
    mayHandle(own, member.role, `Removing a member who is ${member.role}`);
    const outcome = await removeMember(db, id, consumerId, actorOf(principal));
    if (outcome === 'missing') throw notFoundError(`Consumer ${consumerId} is not a member of this contract.`, 'consumerId', consumerId);
    if (outcome === 'last-owner') throw conflictError(`Consumer ${consumerId} is the contract's last owner: make another member owner first.`, 'consumerId', consumerId);
    return reply.code(204).send(null);
  });

  app.post('/collection/contracts/:id/members/:consumerId/password-reset', { schema: schemas.resetPassword }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id, consumerId } = request.params;
    const own = await access(principal, id);
    const member = await memberOf(id, consumerId);
    mayHandle(own, member.role, `Resetting the password of a member who is ${member.role}`);
    if (member.type !== 'user') {
      throw conflictError(`Consumer ${consumerId} is a machine client: it has a secret, not a password (the operator rotates it with the CLI).`, 'consumerId', consumerId);
    }
    // The new password opens every contract the user holds: each must be one where the caller
    // holds at least the user's role.
    const callers = new Map((await grantedContracts(db, principal.consumer.id)).map((c) => [c.id, c.role]));
    for (const held of await grantedContracts(db, consumerId)) {
      const mine = callers.get(held.id);
      if (!mine || !isGrantRole(mine) || !isGrantRole(held.role) || !roleAtLeast(mine, held.role)) {
        throw new ApiError(403, [
          {
            name: 'ForbiddenError',
            message: `Consumer ${consumerId} is also a member of a contract where you do not hold the role ${held.role}: a reset link would open it too. Ask the operator (sluice admin user set-password).`,
            propertyName: 'consumerId',
            propertyValue: consumerId,
            reason: 'member elsewhere',
            code: 3001,
          },
        ]);
      }
    }
    const { row, token } = await createPasswordReset(db, { consumerId, contractId: id }, actorOf(principal));
    const link = `${config.authUrl}/v1/password-reset/${token}`;
    let emailed = false;
    if (mailer && member.email) {
      const contract = (await findContract(db, id))!;
      try {
        await mailer.sendPasswordReset({ to: member.email, name: member.name, contractName: contract.name, issuedBy: row.issuedByName, link, expires: new Date(Number(row.expiresAt)) });
        emailed = true;
      } catch (error) {
        // The link stands: the admin passes it on instead; the log never carries it.
        request.log.warn({ mail: mailFailure(error), passwordReset: row.id }, 'password-reset e-mail not sent');
      }
    }
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ ...presentPasswordReset(row), link, emailed });
  });

  app.post('/collection/contracts/:id/invitations', { schema: schemas.invite }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id } = request.params;
    const own = await access(principal, id);
    const body = check(InvitationCreate, request.body) as { name: string; email: string; role: GrantRole };
    const name = body.name.trim() || body.name;
    mayHandle(own, body.role, `Inviting in the role ${body.role}`);
    const { row, token } = await createInvitation(db, { contractId: id, name, email: body.email.trim(), role: body.role }, actorOf(principal));
    const link = `${config.authUrl}/v1/invitations/${token}`;
    let emailed = false;
    if (mailer) {
      const contract = (await findContract(db, id))!;
      try {
        await mailer.sendInvitation({ to: row.email, name: row.name, contractName: contract.name, role: row.role, invitedBy: row.invitedByName, link, expires: new Date(Number(row.expiresAt)) });
        emailed = true;
      } catch (error) {
        // The invitation stands: the admin copies the link from the answer instead. The log names
        // the failure, never the message (its body holds the link).
        request.log.warn({ mail: mailFailure(error), invitation: row.id }, 'invitation e-mail not sent');
      }
    }
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ ...presentInvitation(row), link, emailed });
  });

  app.get('/collection/contracts/:id/invitations', { schema: schemas.listInvitations }, async (request) => {
    const principal = await authenticate(db, request);
    await access(principal, request.params.id);
    return (await pendingInvitations(db, request.params.id)).map(presentInvitation);
  });

  app.delete('/collection/contracts/:id/invitations/:invitationId', { schema: schemas.withdraw }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id, invitationId } = request.params;
    await access(principal, id);
    // Another contract's invitation is unknown here, as is one no longer pending.
    if (!(await withdrawInvitation(db, id, invitationId, actorOf(principal)))) {
      throw notFoundError(`No pending invitation ${invitationId} in this contract.`, 'invitationId', invitationId);
    }
    return reply.code(204).send(null);
  });
}
