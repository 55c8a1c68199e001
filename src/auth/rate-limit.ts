/**
 * Failure limits of the login form and the token endpoint (docs/api.md#browser-sign-in,
 * docs/api.md#token-endpoint; issue 30): guessing a password or a client secret gets a few checks
 * and then one per growing delay, however many addresses the guesses come from, while the owner
 * who signs in from an address with no failures waits at most `capMs` (never locked out).
 *
 * Failures are counted in two records, each forgotten `forgetMs` after its last failure:
 *
 * - per identity (a lower-cased user name, or a client id that presented a secret), across all
 *   addresses: after `free` (5) failures, the identity's next check, from any address, waits
 *   `delay(n) = min(baseMs × 2^(n − free), capMs)` after its n-th failure (1 s, 2 s, 4 s … 60 s);
 *   attempts before that are refused (429 with Retry-After) without the secret being checked;
 * - per identity and address group (`lib/addresses.ts`: IPv4 address, IPv6 /64): after
 *   `groupFree` (10) failures from one group the same curve applies to that group alone (this is
 *   the only limit of failures that are not about a secret); and while the identity is
 *   delayed, a group that has failed on it waits `2 × delay` after its own last failure, so one
 *   attacking address takes at most every other check of the identity and a clean address gets
 *   the others.
 *
 * An attempt claims its check before the secret is compared: it is counted as a failure at once
 * (so 300 simultaneous requests cannot all pass an identity that is one failure from its delay)
 * and given back when the request succeeds (`Attempt.succeeded`, which also forgets the address
 * group's failures on the identity), or in part or whole when it failed for another reason than a
 * wrong secret (`Attempt.failedHere`, `Attempt.cancelled`). Refused attempts do not count. Failures
 * that are not about a secret (a wrong grant, a public client misusing its id, no identity at all)
 * count only per identity and address (`{ secret: false }`), so nobody can delay, say, the
 * console's public client for everyone.
 *
 * Simultaneous checks of one identity by this process queue rather than fail: an attempt that
 * would pass but for this process's own claims still being checked (a client asking for six tokens
 * at once with its right secret) waits for them to settle, up to `queueMs`, and is then checked
 * again against the records; the claims still count meanwhile, so six wrong guesses at once get
 * five checks and a 429 as before. A claim is in flight from its attempt until it is settled
 * (`Attempt.failed` for a wrong secret) or for `queueMs` at most (a caller that never settles).
 *
 * Records are kept by `store/rate-limits.ts` (memory on SQLite, the `rate_limits` table on
 * PostgreSQL, shared by every process); their keys are SHA-256 digests (fixed length whatever the
 * identity the attacker sends). Times come from the limiter's `now` (ms), which tests replace.
 */
import { createHash } from 'node:crypto';
import { addressGroup } from '../lib/addresses.ts';
import { type FailureCounts, type FailureRecord } from '../store/rate-limits.ts';

/** The numbers of the module comment. */
export interface FailurePolicy {
  /** Failures of an identity before any delay. */
  free: number;
  /** Failures of an identity from one address group before any delay. */
  groupFree: number;
  /** The first delay, ms. */
  baseMs: number;
  /** The longest delay, ms. */
  capMs: number;
  /** A record is forgotten this long after its last failure, ms. */
  forgetMs: number;
  /** The longest an attempt waits for this process's own claims on its records to settle, ms. */
  queueMs: number;
}

/** The policy of docs/api.md#browser-sign-in. */
export const FAILURE_POLICY: FailurePolicy = { free: 5, groupFree: 10, baseMs: 1000, capMs: 60_000, forgetMs: 15 * 60_000, queueMs: 2000 };

/** The delay after a record's `count`-th failure (ms; 0 under `free`). Pure. */
export function failureDelay(count: number, free: number, { baseMs, capMs }: FailurePolicy = FAILURE_POLICY): number {
  return count < free ? 0 : Math.min(baseMs * 2 ** Math.min(count - free, 30), capMs);
}

/**
 * Ms until an attempt may be checked (0: now), from the records of its address group (`pair`) and,
 * for a secret, of its identity (`identity`, undefined otherwise). Pure; table-tested.
 */
export function failureWait(pair: FailureRecord, identity: FailureRecord | undefined, now: number, policy: FailurePolicy = FAILURE_POLICY): number {
  // Under the free failures nothing waits, even for a claim stamped a moment after `now` (a
  // simultaneous attempt that took its time before this one and wrote its claim after it).
  const groupDelay = failureDelay(pair.count, policy.groupFree, policy);
  let at = groupDelay > 0 ? pair.last + groupDelay : 0;
  if (identity) {
    const delay = failureDelay(identity.count, policy.free, policy);
    if (delay > 0) at = Math.max(at, identity.last + delay);
    if (delay > 0 && pair.count > 0) at = Math.max(at, pair.last + 2 * delay);
  }
  return Math.max(0, at - now);
}

/**
 * A claimed check, settled by at most one call (the first counts): a wrong secret needs none, the
 * claim standing as the failure.
 */
export interface Attempt {
  /** A wrong secret: the claim stands as the failure; this only ends the check (queued attempts look again). */
  failed(): Promise<void>;
  /** The request succeeded: the claims are given back and this group's failures on the identity forgotten. */
  succeeded(): Promise<void>;
  /** A failure that is not a wrong secret (a wrong grant, a secret sent for a public client): it counts for this group only. */
  failedHere(): Promise<void>;
  /** Not a failure (the server failed): every claim is given back. */
  cancelled(): Promise<void>;
}

export interface FailureLimiter {
  /**
   * Claims a check of `identity` from `address` (a client address as `request.ip` gives it):
   * `{ retryAfter }` in seconds (≥ 1) when it must wait, else the claimed attempt. `secret`: the
   * attempt checks a password or client secret (the identity-wide record applies). Throws what
   * the store throws.
   */
  attempt(identity: string, address: string, options: { secret: boolean }): Promise<Attempt | { retryAfter: number }>;
  /** The clock, ms since the epoch (Date.now; tests replace it). */
  now: () => number;
  /** Where the records are kept (tests read its keys). */
  readonly counts: FailureCounts;
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** A claim of this process on its records: since when (ms, `Date.now`), and whether it was written (counted) or is still being decided. */
interface Claim {
  readonly at: number;
  written: boolean;
}

/**
 * The claims of this process not yet settled, by record key: an attempt refused only because of
 * the written ones queues (module comment). Claims older than `queueMs` no longer count; the map
 * is swept when it grows past `MAX_IN_FLIGHT_KEYS`.
 */
class InFlight {
  private readonly claims = new Map<string, Set<Claim>>();
  private readonly waiters = new Set<() => void>();
  private readonly queueMs: number;

  constructor(queueMs: number) {
    this.queueMs = queueMs;
  }

  /**
   * Registers a claim on `keys`, not yet written; returns it with its `release` (idempotent; wakes
   * the queued attempts) and `drop` (refused: gone without waking anyone, who would only be refused again).
   */
  claim(keys: readonly string[]): { claim: Claim; release: () => void; drop: () => void } {
    if (this.claims.size > MAX_IN_FLIGHT_KEYS) this.sweep();
    const claim: Claim = { at: Date.now(), written: false };
    for (const key of keys) (this.claims.get(key) ?? this.claims.set(key, new Set()).get(key)!).add(claim);
    const drop = () => {
      for (const key of keys) {
        const set = this.claims.get(key);
        if (set?.delete(claim) && set.size === 0) this.claims.delete(key);
      }
    };
    return {
      claim,
      drop,
      release: () => {
        drop();
        for (const wake of [...this.waiters]) wake();
      },
    };
  }

  /** How many live, written claims of this process are on `key`. */
  written(key: string): number {
    const since = Date.now() - this.queueMs;
    let n = 0;
    for (const claim of this.claims.get(key) ?? []) if (claim.written && claim.at >= since) n++;
    return n;
  }

  /** Resolves when a claim is released, or after `ms` at most. */
  settled(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(1, ms));
      this.waiters.add(wake);
    });
  }

  private sweep(): void {
    const since = Date.now() - this.queueMs;
    for (const [key, set] of this.claims) {
      for (const claim of set) if (claim.at < since) set.delete(claim);
      if (set.size === 0) this.claims.delete(key);
    }
  }
}

/** The in-flight map's size that triggers a sweep of stale claims. */
const MAX_IN_FLIGHT_KEYS = 10_000;
/** The most times one attempt looks again after queueing. */
const MAX_QUEUE_ROUNDS = 50;

/** `record` without `n` of its claims. */
const without = (record: FailureRecord, n: number): FailureRecord => ({ ...record, count: Math.max(0, record.count - n) });

/** A limiter as described in the module comment, keeping its records in `counts` under keys starting with `prefix`. */
export function failureLimiter(counts: FailureCounts, prefix: string, policy: FailurePolicy = FAILURE_POLICY): FailureLimiter {
  const inFlight = new InFlight(policy.queueMs);
  const limiter: FailureLimiter = {
    now: Date.now,
    counts,
    async attempt(identity, address, { secret }) {
      const who = digest(`identity\n${identity}`);
      const identityKey = `${prefix}${who}`;
      const pairKey = `${prefix}${digest(`pair\n${who}\n${addressGroup(address)}`)}`;
      const keys = secret ? [pairKey, identityKey] : [pairKey];
      const queuedUntil = Date.now() + policy.queueMs;
      let wait = 0;
      let mine: ReturnType<InFlight['claim']>;
      for (let round = 0; ; round++) {
        const now = limiter.now();
        // Registered before the records are read and marked written as it is decided (before the
        // commit), so a simultaneous attempt that reads the records after it sees it as this process's own.
        mine = inFlight.claim(keys);
        // > 0: refused (ms to wait); 0: claimed; < 0: refused only because of this process's other unsettled claims.
        try {
          wait = await counts.update(keys, now, ([pair, held]) => {
            const ms = failureWait(pair!, held, now, policy);
            mine.claim.written = ms === 0;
            if (ms === 0) return { write: [pair!, held].filter(Boolean).map((record) => ({ count: record!.count + 1, last: now })), result: 0 };
            const others = keys.map((key) => inFlight.written(key));
            const ours = others.some((n) => n > 0) && failureWait(without(pair!, others[0]!), held && without(held, others[1]!), now, policy) === 0;
            return { write: [], result: ours ? -1 : ms };
          });
        } catch (error) {
          mine.drop();
          throw error;
        }
        if (wait === 0) break;
        mine.drop();
        const left = queuedUntil - Date.now();
        if (wait > 0 || round >= MAX_QUEUE_ROUNDS || left <= 0) return { retryAfter: Math.max(1, Math.ceil(wait / 1000)) };
        await inFlight.settled(Math.min(left, 250));
      }
      const { release } = mine;
      let settled = false;
      const settle = (work: () => Promise<unknown>) => async () => {
        if (settled) return;
        settled = true;
        try {
          await work();
        } finally {
          release();
        }
      };
      return {
        failed: settle(async () => {}),
        succeeded: settle(async () => {
          if (secret) await counts.giveBack(identityKey);
          await counts.forget(pairKey);
        }),
        failedHere: settle(async () => {
          if (secret) await counts.giveBack(identityKey);
        }),
        cancelled: settle(() => Promise.all(keys.map((key) => counts.giveBack(key)))),
      };
    },
  };
  return limiter;
}
