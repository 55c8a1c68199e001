/**
 * Failure limits of the login and token endpoints (decisions §10): at most `max` failures per
 * `windowMs` per key (a client address, an account). Only failures are counted; while any key of
 * a request is over the limit the request is refused with 429 before credentials are checked, so
 * guessing cannot go on. A sliding log per key, held in this process's memory: with several
 * processes each keeps its own count (the limit then applies per process).
 */

export interface FailureLimiter {
  /** Seconds until every key is under the limit again; 0 when none is over it. */
  retryAfter(keys: string[], now?: number): number;
  /** Records one failure against each key. */
  fail(keys: string[], now?: number): void;
}

export function failureLimiter({ max = 10, windowMs = 60_000 }: { max?: number; windowMs?: number } = {}): FailureLimiter {
  const log = new Map<string, number[]>();
  const recent = (key: string, now: number): number[] => {
    const times = (log.get(key) ?? []).filter((t) => t > now - windowMs);
    if (times.length) log.set(key, times);
    else log.delete(key);
    return times;
  };
  return {
    retryAfter(keys, now = Date.now()) {
      let wait = 0;
      for (const key of keys) {
        const times = recent(key, now);
        if (times.length >= max) wait = Math.max(wait, Math.ceil((times[times.length - max]! + windowMs - now) / 1000));
      }
      return wait;
    },
    fail(keys, now = Date.now()) {
      if (log.size > 100_000) for (const key of [...log.keys()]) recent(key, now);
      for (const key of keys) log.set(key, [...recent(key, now), now].slice(-max));
    },
  };
}
