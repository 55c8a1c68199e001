/**
 * Resource ids (docs/api.md): 24 lower-case hex characters (96 bits) — 4 bytes of Unix seconds,
 * then 8 random bytes (64 bits, from the CSPRNG) drawn fresh for every id, so that knowing one
 * id (of this or another contract) tells nothing about the next: they cannot be guessed and
 * probed.
 *
 * Creation order. Listings answer "in creation order" by sorting on the id, and several
 * resources made in one request (a bulk create) share one timestamp, so ids made by one process
 * must sort in the order they were made, within one second too. A counter in the 8 bytes would
 * cost random bits, and 96 bits leave no room for a finer clock plus 64 random bits (5 bytes of
 * ms + 7 random bytes is only 56). So the 4-byte prefix is a logical clock: the later of the
 * wall-clock second and the previous id's prefix; when the new random part does not sort after
 * the previous id's within the same prefix, the prefix moves on by one second instead. The
 * random part is never altered, so every id keeps its 64 random bits.
 *
 * The trade-off: during a burst the prefix runs ahead of the wall clock, by about half a second
 * per id made within one second (1 000 ids at once: about 8 minutes), and comes back to the clock
 * once ids are made more slowly. Ids of different processes sort by their prefixes, so their
 * relative order within that lead is not guaranteed (it never was within a second). The prefix
 * is an ordering key, not a creation time: read `created` for that.
 */
import { randomBytes } from 'node:crypto';

const ID = /^[0-9a-f]{24}$/;
/** The largest 4-byte prefix (year 2106). */
const MAX_PREFIX = 0xffffffff;

/** A function making ids; `now` in ms since the epoch is a lower bound of the prefix. */
export type IdGenerator = (now?: number) => string;

/**
 * A generator with its own order: each id sorts after the one it made before. `random` gives
 * the 8 random bytes (default: `crypto.randomBytes`; tests pass fixed bytes).
 * @throws {RangeError} when the prefix would pass 2106-02-07 (32 bits of seconds).
 */
export function idGenerator(random: () => Buffer = () => randomBytes(8)): IdGenerator {
  let lastPrefix = -1;
  let lastRandom = '';
  return (now = Date.now()) => {
    const tail = random().toString('hex').padStart(16, '0').slice(-16);
    let prefix = Math.max(Math.floor(now / 1000), lastPrefix);
    if (prefix === lastPrefix && tail <= lastRandom) prefix++;
    if (prefix > MAX_PREFIX) throw new RangeError('id time prefix overflows 32 bits');
    lastPrefix = prefix;
    lastRandom = tail;
    return prefix.toString(16).padStart(8, '0') + tail;
  };
}

/** A new id from this process's generator; `now` in ms (defaults to the clock). */
export const newId: IdGenerator = idGenerator();

/** Whether `value` has the form of an id (it may still be unknown). */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}
