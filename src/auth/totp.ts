/**
 * The second factor of a sign-in (docs/api.md#two-factor-sign-in): TOTP codes (RFC 6238, through
 * the `otpauth` library: HMAC-SHA-1, 6 digits, a 30 s period, a 160-bit secret written in base32)
 * and single-use recovery codes.
 *
 * A TOTP code is accepted for the current time step and one step either side (RFC 6238 §5.2: a
 * clock drift of up to 30 s), and at most once: its step must be later than the last step
 * accepted for the user (`store/two-factor.ts` `claimStep`), so a code seen by someone else is
 * useless once used, and so is every earlier one. A recovery code is 10 characters of the
 * RFC 4648 base32 alphabet (50 bits), shown as `xxxxx-xxxxx`; case, spaces and dashes do not
 * matter; it is stored as an argon2id hash (`secrets.ts`) and works once.
 *
 * The secret is stored sealed with the secret key (`lib/secret-box.ts`, AES-256-GCM), as service
 * credentials are; `sealTotpSecret` / `openTotpSecret` are the only ways in and out.
 */
import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { open, seal, type SecretKey } from '../lib/secret-box.ts';
import type { Actor } from '../store/audit.ts';
import type { Db } from '../store/db.ts';
import { claimStep, unusedRecoveryCodes, useRecoveryCode } from '../store/two-factor.ts';
import type { TwoFactorRow } from '../store/tables.ts';
import { hashSecret, verifySecret } from './secrets.ts';

/** The issuer written in the `otpauth://` URI (what authenticator apps show). */
export const TOTP_ISSUER = 'Sluice';
/** The TOTP period, seconds. */
export const TOTP_PERIOD = 30;
/** Digits of a TOTP code. */
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the current one. */
export const TOTP_WINDOW = 1;
/** Recovery codes issued at a time. */
export const RECOVERY_CODES = 10;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new random TOTP secret (20 bytes), in base32 (RFC 4648, no padding). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secretBase32: string, label = 'user'): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label, secret: Secret.fromBase32(secretBase32), algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD });
}

/** The key URI an authenticator app reads (`otpauth://totp/Sluice:<username>?secret=…&issuer=Sluice…`). */
export function totpUri(secretBase32: string, username: string): string {
  return totp(secretBase32, username).toString();
}

/** The code of `secretBase32` at `timestamp` (ms); for tests and for nothing else in the service. */
export function totpCode(secretBase32: string, timestamp: number): string {
  return totp(secretBase32).generate({ timestamp });
}

/** The time step (RFC 6238 T) of `timestamp` (ms). Pure. */
export function totpStep(timestamp: number): number {
  return TOTP.counter({ period: TOTP_PERIOD, timestamp });
}

/**
 * The time step whose code `code` is, within the window around `timestamp` (ms), or undefined when
 * it is none of them (or not 6 digits). Pure; does not consider replay.
 */
export function matchingStep(secretBase32: string, code: string, timestamp: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp, window: TOTP_WINDOW });
  return delta === null ? undefined : totpStep(timestamp) + delta;
}

/** The secret sealed for its row (`secret`, `keyId`). */
export function sealTotpSecret(key: SecretKey, secretBase32: string): { secret: string; keyId: string } {
  return { secret: seal(key, secretBase32), keyId: key.id };
}

/** The base32 secret of a row; throws Error when another key sealed it. */
export function openTotpSecret(key: SecretKey, row: Pick<TwoFactorRow, 'secret'>): string {
  return open(key, row.secret);
}

/** `count` new recovery codes (`xxxxx-xxxxx`) and their argon2id hashes, in the same order. */
export async function newRecoveryCodes(count = RECOVERY_CODES): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = Array.from({ length: count }, () => {
    const raw = Array.from({ length: 10 }, () => BASE32[randomInt(32)]).join('').toLowerCase();
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  const hashes = await Promise.all(codes.map((code) => hashSecret(normaliseRecoveryCode(code)!)));
  return { codes, hashes };
}

/** A recovery code as stored (lower case, no spaces or dashes), or undefined when it cannot be one. Pure. */
export function normaliseRecoveryCode(code: string): string | undefined {
  const raw = code.replace(/[\s-]/g, '').toLowerCase();
  return /^[a-z2-7]{10}$/.test(raw) ? raw : undefined;
}

/** What a second factor matched: a TOTP code, a recovery code (used up now), or nothing (wrong, replayed or used). */
export type SecondFactor = 'totp' | 'recovery' | undefined;

/**
 * Checks `code` for the user of the enabled row `row` at `now` (ms): a TOTP code (its step
 * claimed: a replay does not match), or, with `recovery`, an unused recovery code (used up, audited
 * as `actor`). The caller counts a mismatch as a failure (`rate-limit.ts`).
 */
export async function checkSecondFactor(db: Db, key: SecretKey, row: TwoFactorRow, code: string, options: { now: number; recovery: boolean; actor: Actor }): Promise<SecondFactor> {
  const trimmed = code.trim();
  const step = matchingStep(openTotpSecret(key, row), trimmed.replace(/\s/g, ''), options.now);
  if (step !== undefined) return (await claimStep(db, row.consumerId, step)) ? 'totp' : undefined;
  const recovery = options.recovery ? normaliseRecoveryCode(trimmed) : undefined;
  if (!recovery) return undefined;
  for (const stored of await unusedRecoveryCodes(db, row.consumerId)) {
    if (await verifySecret(recovery, stored.codeHash)) return (await useRecoveryCode(db, row.consumerId, stored.id, options.actor, options.now)) ? 'recovery' : undefined;
  }
  return undefined;
}
