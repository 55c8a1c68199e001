/**
 * Invitations to join a contract's team (docs/api.md#invitations; migration 2026-12-05-team): an
 * admin invites someone by name and e-mail address in a role; the link's token (256 random bits)
 * is shown once and stored only as its SHA-256 (`tokenHash`, as tokens are: RFC 6749 §10.3); the
 * link is valid `INVITATION_TTL_MS` (7 days) and accepted at most once, by a conditional update
 * inside the transaction that creates the user and the grant, so a replay or a concurrent second
 * accept finds nothing to claim and creates nothing. Every change is an audit entry (resource
 * `invitation`: `create`, `delete` for a withdrawal, `accept`), without the token.
 */
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { type Actor, recordAudit } from './audit.ts';
import { createConsumer, type NewConsumer } from './consumers.ts';
import type { GrantRole } from './contracts.ts';
import type { Db } from './db.ts';
import type { ConsumerRow, InvitationRow } from './tables.ts';
import { newLinkToken, tokenHash } from './tokens.ts';

/** How long an invitation link is valid: 7 days, in ms (docs/api.md#invitations). */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** Where an invitation stands at a time: `pending` (may be accepted), `accepted`, `withdrawn` or `expired`. */
export type InvitationState = 'pending' | 'accepted' | 'withdrawn' | 'expired';

/** The state of `row` at `now` (ms): accepted and withdrawn first, then expired at `expiresAt` (exclusive). */
export function invitationState(row: Pick<InvitationRow, 'acceptedAt' | 'withdrawnAt' | 'expiresAt'>, now = Date.now()): InvitationState {
  if (row.acceptedAt !== null) return 'accepted';
  if (row.withdrawnAt !== null) return 'withdrawn';
  return Number(row.expiresAt) <= now ? 'expired' : 'pending';
}

/** An invitation as the API and the audit trail show it: never the token or its hash (docs/api.md#invitations). */
export function presentInvitation(row: InvitationRow) {
  return {
    _id: row.id,
    contractId: row.contractId,
    name: row.name,
    email: row.email,
    role: row.role,
    created: iso(Number(row.createdAt)),
    expires: iso(Number(row.expiresAt)),
    invitedBy: row.invitedByName,
  };
}

/**
 * Creates an invitation to `contractId` for `name` <`email`> in `role`, by `by`, at `now` (ms),
 * valid INVITATION_TTL_MS, with its audit entry (`invitation` `create`) in the same transaction.
 * Returns the row and the link's `token` (`newLinkToken`: 256 random bits), of which only the
 * SHA-256 is stored.
 */
export async function createInvitation(
  db: Db,
  invitation: { contractId: string; name: string; email: string; role: GrantRole },
  by: Actor,
  now = Date.now(),
): Promise<{ row: InvitationRow; token: string }> {
  const { token, hash } = newLinkToken();
  const row: InvitationRow = {
    id: newId(now),
    contractId: invitation.contractId,
    name: invitation.name,
    email: invitation.email,
    role: invitation.role,
    tokenHash: hash,
    createdAt: now,
    expiresAt: now + INVITATION_TTL_MS,
    invitedBy: by.id,
    invitedByName: by.name,
    acceptedAt: null,
    acceptedBy: null,
    withdrawnAt: null,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('invitations').values(row).execute();
    await recordAudit(trx, { contractId: row.contractId, actor: by, resource: 'invitation', resourceId: row.id, action: 'create', after: presentInvitation(row) }, now);
  });
  return { row, token };
}

/** The contract's invitations still pending at `now` (ms), oldest first. */
export async function pendingInvitations(db: Db, contractId: string, now = Date.now()): Promise<InvitationRow[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('contractId', '=', contractId)
    .where('acceptedAt', 'is', null)
    .where('withdrawnAt', 'is', null)
    .where('expiresAt', '>', now)
    .orderBy('id')
    .execute();
}

/** The invitation whose link carries `token`, whatever its state, or undefined. */
export async function findInvitationByToken(db: Db, token: string): Promise<InvitationRow | undefined> {
  return db.selectFrom('invitations').selectAll().where('tokenHash', '=', tokenHash(token)).executeTakeFirst();
}

/**
 * Withdraws the contract's invitation `id` at `now` (ms) if it is still pending, with its audit entry
 * (`invitation` `delete`); returns whether it was pending (an accepted, withdrawn or expired one is
 * left as it is).
 */
export async function withdrawInvitation(db: Db, contractId: string, id: string, by: Actor, now = Date.now()): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('invitations')
      .set({ withdrawnAt: now })
      .where('contractId', '=', contractId)
      .where('id', '=', id)
      .where('acceptedAt', 'is', null)
      .where('withdrawnAt', 'is', null)
      .where('expiresAt', '>', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    const row = await trx.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await recordAudit(trx, { contractId: row.contractId, actor: by, resource: 'invitation', resourceId: id, action: 'delete', before: presentInvitation(row) }, now);
    return true;
  });
}

/**
 * Accepts the invitation of `token` at `now` (ms) for a new user `user` (fields of
 * `createConsumer`; its name and e-mail address are the invitation's), in one transaction: the
 * invitation is claimed only if still pending (accepted, withdrawn or expired → `not-pending`,
 * nothing created), the user is created (a unique constraint — the user name or e-mail address
 * taken meanwhile — throws and undoes the claim), granted the contract in the invitation's role,
 * its sign-in recorded, and audit entries written: `invitation` `accept` and `grant` `create`, by
 * the new user. Returns the user and the invitation.
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  user: Pick<NewConsumer, 'username' | 'passwordHash'>,
  now = Date.now(),
): Promise<'not-pending' | { consumer: ConsumerRow; invitation: InvitationRow }> {
  return db.transaction().execute(async (trx) => {
    const hash = tokenHash(token);
    const claimed = await trx
      .updateTable('invitations')
      .set({ acceptedAt: now })
      .where('tokenHash', '=', hash)
      .where('acceptedAt', 'is', null)
      .where('withdrawnAt', 'is', null)
      .where('expiresAt', '>', now)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) return 'not-pending' as const;
    const invitation = await trx.selectFrom('invitations').selectAll().where('tokenHash', '=', hash).executeTakeFirstOrThrow();
    const consumer = await createConsumer(trx, {
      type: 'user',
      name: invitation.name,
      email: invitation.email,
      language: null,
      username: user.username,
      passwordHash: user.passwordHash,
      clientId: null,
      secretHash: null,
    });
    await trx.updateTable('consumers').set({ lastSignInAt: now }).where('id', '=', consumer.id).execute();
    await trx.updateTable('invitations').set({ acceptedBy: consumer.id }).where('id', '=', invitation.id).execute();
    const { contractId, role } = invitation;
    await trx.insertInto('grants').values({ consumerId: consumer.id, contractId, created: iso(now), role }).execute();
    const actor = { id: consumer.id, name: consumer.name };
    const accepted = { ...presentInvitation(invitation), consumerId: consumer.id, username: consumer.username };
    await recordAudit(trx, { contractId, actor, resource: 'invitation', resourceId: invitation.id, action: 'accept', after: accepted }, now);
    await recordAudit(trx, { contractId, actor, resource: 'grant', resourceId: consumer.id, action: 'create', after: { consumerId: consumer.id, contractId, role } }, now);
    return { consumer: { ...consumer, lastSignInAt: now }, invitation: { ...invitation, acceptedBy: consumer.id } };
  });
}
