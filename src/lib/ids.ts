/**
 * Resource ids (decisions §5): 24 lower-case hex characters, time-ordered — 4 bytes of Unix
 * seconds, then 8 random bytes.
 */
import { randomBytes } from 'node:crypto';

const ID = /^[0-9a-f]{24}$/;

/** A new id; `now` in ms (defaults to the clock). */
export function newId(now = Date.now()): string {
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return seconds + randomBytes(8).toString('hex');
}

/** Whether `value` has the form of an id (it may still be unknown). */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}
