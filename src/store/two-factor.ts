/**
 * Two-factor sign-in at rest (docs/api.md#two-factor-sign-in; migration 2026-12-09-two-factor):
 * a user's TOTP secret, sealed with the secret key by the caller (`lib/secret-box.ts`), pending
 * until its first code; the last accepted time step (replay refusal, RFC 6238 §5.2); single-use
 * recovery codes as argon2id hashes (hashed by the caller, `auth/secrets.ts`); the pending second
 * step of browser sign-ins, by SHA-256; and the contracts that require it of their members.
 *
 * Changes that matter to a team (enabled, disabled, recovery codes regenerated or used) are audit
 * entries (resource `account`) in every contract the user holds, in the change's transaction,
 * with no secret: flags and counts only (`consumers.ts` `auditAccount`). A contract's requirement
 * change is an entry of that contract (resource `contract`, action `two-factor`).
 */
import type { Transaction } from 'kysely';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { type Actor, recordAudit } from './audit.ts';
import { auditAccount } from './consumers.ts';
import type { Db } from './db.ts';
import type { Database, TwoFactorRow } from './tables.ts';

/** The user's two-factor row (pending or enabled), or undefined. */
export async function findTwoFactor(db: Db, consumerId: string): Promise<TwoFactorRow | undefined> {
  const row = await db.selectFrom('twoFactor').selectAll().where('consumerId', '=', consumerId).executeTakeFirst();
  return row && { ...row, enabledAt: row.enabledAt === null ? null : Number(row.enabledAt), lastStep: Number(row.lastStep), createdAt: Number(row.createdAt) };
}

/**
 * Starts (or restarts) an enrolment: stores the sealed secret as pending at `now` (ms). Returns
 * false, changing nothing, when two-factor is already enabled for the user.
 */
export async function startEnrolment(db: Db, consumerId: string, sealed: { secret: string; keyId: string }, now: number): Promise<boolean> {
  const result = await db
    .insertInto('twoFactor')
    .values({ consumerId, secret: sealed.secret, keyId: sealed.keyId, enabledAt: null, lastStep: 0, createdAt: now })
    .onConflict((oc) => oc.column('consumerId').doUpdateSet({ secret: sealed.secret, keyId: sealed.keyId, lastStep: 0, createdAt: now }).where('twoFactor.enabledAt', 'is', null))
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * Claims the TOTP time step `step` for the user: true when it is later than the last step
 * accepted (it becomes the last), false when a code of that step or a later one was accepted
 * already (a replay). Atomic: of two requests with the same code, one wins.
 */
export async function claimStep(db: Db, consumerId: string, step: number): Promise<boolean> {
  const result = await db.updateTable('twoFactor').set({ lastStep: step }).where('consumerId', '=', consumerId).where('lastStep', '<', step).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Stores `hashes` as the user's recovery codes inside `trx`, replacing any earlier ones. */
async function replaceCodes(trx: Transaction<Database>, consumerId: string, hashes: string[], now: number): Promise<void> {
  await trx.deleteFrom('recoveryCodes').where('consumerId', '=', consumerId).execute();
  if (hashes.length) await trx.insertInto('recoveryCodes').values(hashes.map((codeHash) => ({ id: newId(now), consumerId, codeHash, createdAt: now, usedAt: null }))).execute();
}

/**
 * Enables a pending enrolment with the recovery codes `hashes`, audited (action `two-factor-enable`).
 * False when there was no pending enrolment (enabled meanwhile, or none).
 */
export async function enableTwoFactor(db: Db, consumerId: string, hashes: string[], actor: Actor, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.updateTable('twoFactor').set({ enabledAt: now }).where('consumerId', '=', consumerId).where('enabledAt', 'is', null).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await replaceCodes(trx, consumerId, hashes, now);
    await auditAccount(trx, consumerId, actor, 'two-factor-enable', { twoFactor: true, recoveryCodes: hashes.length }, now);
    return true;
  });
}

/** Turns two-factor off: the secret and recovery codes are deleted; audited (`two-factor-disable`) when it was enabled. */
export async function disableTwoFactor(db: Db, consumerId: string, actor: Actor, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('twoFactor').where('consumerId', '=', consumerId).where('enabledAt', 'is not', null).executeTakeFirst();
    await trx.deleteFrom('recoveryCodes').where('consumerId', '=', consumerId).execute();
    if (Number(result.numDeletedRows) === 0) return false;
    await auditAccount(trx, consumerId, actor, 'two-factor-disable', { twoFactor: false }, now);
    return true;
  });
}

/** Replaces the user's recovery codes with `hashes` (the old ones stop working); audited (`recovery-codes`). */
export async function regenerateRecoveryCodes(db: Db, consumerId: string, hashes: string[], actor: Actor, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await replaceCodes(trx, consumerId, hashes, now);
    await auditAccount(trx, consumerId, actor, 'recovery-codes', { recoveryCodes: hashes.length }, now);
  });
}

/** The user's unused recovery codes (id and hash), oldest first. */
export async function unusedRecoveryCodes(db: Db, consumerId: string): Promise<{ id: string; codeHash: string }[]> {
  return db.selectFrom('recoveryCodes').select(['id', 'codeHash']).where('consumerId', '=', consumerId).where('usedAt', 'is', null).orderBy('id').execute();
}

/**
 * Uses up recovery code `id` of the user at `now`: true when it was unused (atomic: a code works
 * once), audited (`recovery-code-used`, with the count left).
 */
export async function useRecoveryCode(db: Db, consumerId: string, id: string, actor: Actor, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.updateTable('recoveryCodes').set({ usedAt: now }).where('id', '=', id).where('consumerId', '=', consumerId).where('usedAt', 'is', null).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    const left = await trx.selectFrom('recoveryCodes').select((eb) => eb.fn.countAll<number>().as('n')).where('consumerId', '=', consumerId).where('usedAt', 'is', null).executeTakeFirstOrThrow();
    await auditAccount(trx, consumerId, actor, 'recovery-code-used', { recoveryCodesLeft: Number(left.n) }, now);
    return true;
  });
}

/** How many unused recovery codes the user has. */
export async function recoveryCodesLeft(db: Db, consumerId: string): Promise<number> {
  const row = await db.selectFrom('recoveryCodes').select((eb) => eb.fn.countAll<number>().as('n')).where('consumerId', '=', consumerId).where('usedAt', 'is', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Stores the second step of a sign-in of `consumerId`, by the SHA-256 of its cookie value, expiring at `expiresAt` (ms); expired ones are deleted on the way. */
export async function insertChallenge(db: Db, challengeHash: string, consumerId: string, expiresAt: number, now: number): Promise<void> {
  await db.deleteFrom('twoFactorChallenges').where('expiresAt', '<=', now).execute();
  await db.insertInto('twoFactorChallenges').values({ challengeHash, consumerId, failures: 0, expiresAt, createdAt: now }).execute();
}

/** The unexpired challenge with this hash, or undefined. */
export async function findChallenge(db: Db, challengeHash: string, now: number): Promise<{ consumerId: string; failures: number } | undefined> {
  const row = await db.selectFrom('twoFactorChallenges').select(['consumerId', 'failures']).where('challengeHash', '=', challengeHash).where('expiresAt', '>', now).executeTakeFirst();
  return row && { consumerId: row.consumerId, failures: Number(row.failures) };
}

/** Counts a wrong code given to the challenge; returns the challenge's failures now. */
export async function countChallengeFailure(db: Db, challengeHash: string): Promise<number> {
  await db.updateTable('twoFactorChallenges').set((eb) => ({ failures: eb('failures', '+', 1) })).where('challengeHash', '=', challengeHash).execute();
  const row = await db.selectFrom('twoFactorChallenges').select('failures').where('challengeHash', '=', challengeHash).executeTakeFirst();
  return Number(row?.failures ?? Infinity);
}

/** Deletes the challenge: true when it existed (its single use: of two requests, one wins). */
export async function deleteChallenge(db: Db, challengeHash: string): Promise<boolean> {
  const result = await db.deleteFrom('twoFactorChallenges').where('challengeHash', '=', challengeHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Whether contract `contractId` requires two-factor sign-in and user `consumerId` has not
 * enabled it (docs/api.md#requiring-two-factor-sign-in). One query.
 */
export async function lacksRequiredTwoFactor(db: Db, consumerId: string, contractId: string): Promise<boolean> {
  const row = await db
    .selectFrom('contracts')
    .leftJoin('twoFactor', (join) => join.on('twoFactor.consumerId', '=', consumerId).on('twoFactor.enabledAt', 'is not', null))
    .select('twoFactor.consumerId as enrolled')
    .where('contracts.id', '=', contractId)
    .where('contracts.requireTwoFactor', '=', 1)
    .executeTakeFirst();
  return row !== undefined && row.enrolled === null;
}

/**
 * Sets whether the contract requires two-factor sign-in, audited (resource `contract`, action
 * `two-factor`, before and after `{requireTwoFactor}`) in one transaction. Returns the value before.
 */
export async function setRequireTwoFactor(db: Db, contractId: string, required: boolean, actor: Actor, now = Date.now()): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('contracts').select('requireTwoFactor').where('id', '=', contractId).executeTakeFirstOrThrow();
    const was = Number(before.requireTwoFactor) === 1;
    await trx.updateTable('contracts').set({ requireTwoFactor: required ? 1 : 0, lastModified: iso(now), lastModifiedBy: actor.name }).where('id', '=', contractId).execute();
    await recordAudit(trx, { contractId, actor, resource: 'contract', resourceId: contractId, action: 'two-factor', before: { requireTwoFactor: was }, after: { requireTwoFactor: required } }, now);
    return was;
  });
}
