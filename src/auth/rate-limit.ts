/**
 * Failure limits of the login and token endpoints (docs/api.md): failed attempts are counted per
 * identity (a client id, a user name) AND client address together, so that guessing one
 * identity's secret from one address stops, while nobody can lock an identity out from elsewhere
 * nor lock a whole address out by failing on other identities.
 *
 * - Per identity and address: at most `max` failures per `windowMs`; beyond that the pair is
 *   refused (429 before credentials are checked) until its oldest failure leaves the window.
 * - Per identity across all addresses: once it has `identityMax` failures in the window (a
 *   distributed attack), an address that itself has failures on that identity is refused too:
 *   each attacking address then gets one guess per window. An address with no failures on the
 *   identity is never refused, so the right secret still gets through (the limit slows an
 *   attack, it never blocks the owner).
 * - A request without an identity counts under the empty identity: it holds back only
 *   identity-less requests from that address.
 *
 * The table cannot be filled by the attacker: keys are SHA-256 digests (43 characters whatever
 * the length of the client id or user name, which the attacker chooses), each entry holds at most
 * `max` (or `identityMax`) times, and the table is an LRU of at most `entries` entries
 * (lru-cache), the least recently used going first. Held in this process's memory: with several
 * processes each keeps its own count (the limit then applies per process).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface FailureLimiter {
  /**
   * Seconds until `identity` may be tried again from `address`; 0 when it may now.
   * `now` in ms since the epoch (default the clock).
   */
  retryAfter(identity: string, address: string, now?: number): number;
  /** Records one failure of `identity` from `address`. */
  fail(identity: string, address: string, now?: number): void;
  /** How many entries the table holds (at most `entries`). */
  readonly size: number;
  /** The table's keys (digests), most recently used first. */
  keys(): Iterable<string>;
}

export interface FailureLimiterOptions {
  /** Failures allowed per identity and address in the window. Default 10. */
  max?: number;
  /** Failures of one identity across addresses after which only clean addresses may try it. Default 10. */
  identityMax?: number;
  /** The window, ms. Default 60 000. */
  windowMs?: number;
  /** Most entries held (LRU). Default 20 000 (a few MB at most). */
  entries?: number;
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** A limiter as described in the module comment; pure apart from its table and the clock. */
export function failureLimiter({ max = 10, identityMax = 10, windowMs = 60_000, entries = 20_000 }: FailureLimiterOptions = {}): FailureLimiter {
  const table = new LRUCache<string, number[]>({ max: entries });
  const keysOf = (identity: string, address: string) => {
    const who = digest(`identity\n${identity}`);
    return { identity: who, pair: digest(`pair\n${who}\n${address}`) };
  };
  /** The failures of `key` still in the window (oldest first); drops an entry with none. */
  const recent = (key: string, now: number): number[] => {
    const held = table.get(key);
    if (!held) return [];
    const times = held.filter((t) => t > now - windowMs);
    if (times.length === 0) table.delete(key);
    else if (times.length < held.length) table.set(key, times);
    return times;
  };
  const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

  return {
    retryAfter(identity, address, now = Date.now()) {
      const keys = keysOf(identity, address);
      const pair = recent(keys.pair, now);
      if (pair.length === 0) return 0;
      const waits: number[] = [];
      if (pair.length >= max) waits.push(secondsUntil(pair[pair.length - max]! + windowMs, now));
      const all = recent(keys.identity, now);
      if (all.length >= identityMax) {
        // Free again when this address has no failures left, or the identity is under its limit.
        waits.push(Math.min(secondsUntil(pair[pair.length - 1]! + windowMs, now), secondsUntil(all[all.length - identityMax]! + windowMs, now)));
      }
      return waits.length ? Math.max(...waits) : 0;
    },
    fail(identity, address, now = Date.now()) {
      const keys = keysOf(identity, address);
      table.set(keys.pair, [...recent(keys.pair, now), now].slice(-max));
      table.set(keys.identity, [...recent(keys.identity, now), now].slice(-identityMax));
    },
    get size() {
      return table.size;
    },
    keys: () => table.keys(),
  };
}
