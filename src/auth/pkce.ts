/**
 * PKCE (RFC 7636) with the S256 method only: `plain` offers no protection when the authorization
 * request leaks, so it is refused (RFC 9700 §2.1.1).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** code_verifier and code_challenge: 43–128 unreserved characters (RFC 7636 §4.1, §4.2). */
export const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** BASE64URL(SHA-256(ASCII(verifier))) (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether `verifier` is well formed and hashes to `challenge` (constant-time comparison). */
export function verifyS256(verifier: string, challenge: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  const actual = Buffer.from(s256(verifier));
  const expected = Buffer.from(challenge);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
