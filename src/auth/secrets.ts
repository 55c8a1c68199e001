/**
 * Secrets at rest (docs/api.md#authentication): passwords and client secrets as argon2id hashes in
 * PHC string form (Node's built-in `crypto.argon2`, OWASP minimum: 19 MiB, 2 passes, 1 lane); new
 * tokens and secrets as 256-bit random base64url strings. Tokens are stored as SHA-256 hex
 * (`store/tokens.ts`).
 */
import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';

/** The shortest password accepted (as `admin user create`, the invitation page, a password change). */
export const MIN_PASSWORD = 8;
/** The longest password accepted. */
export const MAX_PASSWORD = 1024;

const MEMORY_KIB = 19_456;
const PASSES = 2;
const PARALLELISM = 1;
const TAG_LENGTH = 32;

function derive(message: string, nonce: Buffer, memory: number, passes: number, parallelism: number, tagLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    argon2('argon2id', { message, nonce, memory, passes, parallelism, tagLength }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>` for a password or client secret. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, MEMORY_KIB, PASSES, PARALLELISM, TAG_LENGTH);
  return `$argon2id$v=19$m=${MEMORY_KIB},t=${PASSES},p=${PARALLELISM}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `secret` matches a hash made by `hashSecret` (constant-time comparison). */
export async function verifySecret(secret: string, phc: string): Promise<boolean> {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/.exec(phc);
  if (!match) return false;
  const expected = Buffer.from(match[5]!, 'base64url');
  const key = await derive(secret, Buffer.from(match[4]!, 'base64url'), Number(match[1]), Number(match[2]), Number(match[3]), expected.length);
  return timingSafeEqual(key, expected);
}

/** A fresh random token or secret: 32 bytes, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
