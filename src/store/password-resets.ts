/**
 * Password-reset links (docs/api.md#password-reset; migration 2026-12-08-password-resets): an
 * admin of a contract issues one for a user who is a member; the link's token (`newLinkToken`:
 * 256 random bits) is shown once and stored only as its SHA-256; it is valid
 * `PASSWORD_RESET_TTL_MS` (24 hours) and used at most once, by a conditional update inside the
 * transaction that sets the new password, ends every session and token of the user
 * (`writePasswordHash`) and voids the user's other unused links, so a replay or a concurrent
 * second use finds nothing to claim and changes nothing. Audit entries (resource
 * `password-reset`: `create` by the admin, `use` by the user; `account` `password` in each
 * contract the user holds) carry no token and no password.
 */
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { type Actor, recordAudit } from './audit.ts';
import { type SignInsEnded, writePasswordHash } from './consumers.ts';
import type { Db } from './db.ts';
import type { ConsumerRow, PasswordResetRow } from './tables.ts';
import { newLinkToken, tokenHash } from './tokens.ts';

/** How long a password-reset link is valid: 24 hours, in ms (docs/api.md#password-reset). */
export const PASSWORD_RESET_TTL_MS = 24 * 3600 * 1000;

/** Where a link stands at a time: `pending` (may be used), `used` (or voided by another's use) or `expired`. */
export type PasswordResetState = 'pending' | 'used' | 'expired';

/** The state of `row` at `now` (ms): used first, then expired at `expiresAt` (exclusive). */
export function passwordResetState(row: Pick<PasswordResetRow, 'usedAt' | 'expiresAt'>, now = Date.now()): PasswordResetState {
  if (row.usedAt !== null) return 'used';
  return Number(row.expiresAt) <= now ? 'expired' : 'pending';
}

/** A link as the API and the audit trail show it: never the token or its hash. */
export function presentPasswordReset(row: PasswordResetRow) {
  return { _id: row.id, consumerId: row.consumerId, contractId: row.contractId, created: iso(Number(row.createdAt)), expires: iso(Number(row.expiresAt)), issuedBy: row.issuedByName };
}

/**
 * Issues a link for user `consumerId` through contract `contractId`, by `by`, at `now` (ms),
 * valid PASSWORD_RESET_TTL_MS, with its audit entry (`password-reset` `create`) in the same
 * transaction. Returns the row and the link's `token`, of which only the SHA-256 is stored. The
 * caller checks that the consumer is a user and a member.
 */
export async function createPasswordReset(db: Db, reset: { consumerId: string; contractId: string }, by: Actor, now = Date.now()): Promise<{ row: PasswordResetRow; token: string }> {
  const { token, hash } = newLinkToken();
  const row: PasswordResetRow = {
    id: newId(now),
    consumerId: reset.consumerId,
    contractId: reset.contractId,
    tokenHash: hash,
    createdAt: now,
    expiresAt: now + PASSWORD_RESET_TTL_MS,
    issuedBy: by.id,
    issuedByName: by.name,
    usedAt: null,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('passwordResets').values(row).execute();
    await recordAudit(trx, { contractId: row.contractId, actor: by, resource: 'password-reset', resourceId: row.id, action: 'create', after: presentPasswordReset(row) }, now);
  });
  return { row, token };
}

/** The link carrying `token`, whatever its state, or undefined. */
export async function findPasswordResetByToken(db: Db, token: string): Promise<PasswordResetRow | undefined> {
  return db.selectFrom('passwordResets').selectAll().where('tokenHash', '=', tokenHash(token)).executeTakeFirst();
}

/**
 * Uses the link of `token` at `now` (ms) to set the user's password hash to `passwordHash`, in one
 * transaction: the link is claimed only if still pending (used or expired → `not-pending`, nothing
 * changed), and only for an enabled user; the password is set and every login session, token and
 * authorization code of the user ended (`writePasswordHash`, audited `account` `password` by the
 * user); the user's other unused links are voided; `password-reset` `use` is recorded. Returns the
 * user and what was ended.
 */
export async function usePasswordReset(db: Db, token: string, passwordHash: string, now = Date.now()): Promise<'not-pending' | { consumer: ConsumerRow; ended: SignInsEnded }> {
  return db.transaction().execute(async (trx) => {
    const hash = tokenHash(token);
    const claimed = await trx.updateTable('passwordResets').set({ usedAt: now }).where('tokenHash', '=', hash).where('usedAt', 'is', null).where('expiresAt', '>', now).executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) return 'not-pending' as const;
    const reset = await trx.selectFrom('passwordResets').selectAll().where('tokenHash', '=', hash).executeTakeFirstOrThrow();
    const consumer = await trx.selectFrom('consumers').selectAll().where('id', '=', reset.consumerId).where('type', '=', 'user').where('disabled', '=', 0).executeTakeFirst();
    if (!consumer) {
      await trx.updateTable('passwordResets').set({ usedAt: null }).where('id', '=', reset.id).execute();
      return 'not-pending' as const;
    }
    const actor = { id: consumer.id, name: consumer.name };
    const ended = await writePasswordHash(trx, consumer.id, passwordHash, { actor, now });
    await trx.updateTable('passwordResets').set({ usedAt: now }).where('consumerId', '=', consumer.id).where('usedAt', 'is', null).execute();
    await recordAudit(trx, { contractId: reset.contractId, actor, resource: 'password-reset', resourceId: reset.id, action: 'use', after: { ...presentPasswordReset(reset), used: iso(now) } }, now);
    return { consumer, ended };
  });
}
