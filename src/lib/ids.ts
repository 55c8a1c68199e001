/**
 * Resource ids (decisions §5): 24 lower-case hex characters, time-ordered — 4 bytes of Unix
 * seconds, then 8 bytes that are random per process (5) and a counter (3, from a random start),
 * as MongoDB's ObjectId does, so that ids made by one process also sort in creation order within
 * one second.
 */
import { randomBytes } from 'node:crypto';

const ID = /^[0-9a-f]{24}$/;
const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

/** A new id; `now` in ms (defaults to the clock). */
export function newId(now = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return seconds + processPart + counter.toString(16).padStart(6, '0');
}

/** Whether `value` has the form of an id (it may still be unknown). */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}
