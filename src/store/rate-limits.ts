/**
 * A store of @fastify/rate-limit (its `incr`/`child` store interface, as its bundled LocalStore
 * and RedisStore implement it) over the `rate_limits` table, so that every process sharing one
 * PostgreSQL database counts against the same limits (docs/api.md#rate-limits).
 *
 * Fixed windows per key, as the bundled LocalStore counts them: a key's window starts at its
 * first hit and lasts `timeWindow` ms; the first hit after it ends starts the next one. One
 * statement per hit, an UPSERT that either adds one to the current window or starts a new one,
 * timed by the database's clock (`now()`, the same for every process, so clocks that differ
 * between machines do not split or stretch windows). Rows of ended windows are deleted at most
 * once per window by each process, after a hit, without the request waiting for it.
 *
 * Written for PostgreSQL (its `now()`); SQLite installations count in memory (one process owns
 * the database).
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';

/** What `incr` reports: hits in the key's current window (this one included), and ms until it ends. */
export interface RateLimitHit {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result?: RateLimitHit) => void;

/** Counts one hit of `key` in its window of `timeWindow` ms; see the module comment. */
export async function hitRateLimit(db: Db, key: string, timeWindow: number): Promise<RateLimitHit> {
  // Raw SQL: the CamelCasePlugin does not rename inside it, so names are the table's own.
  const { rows } = await sql<{ hits: number; ttl: number }>`
    with clock as (select (extract(epoch from now()) * 1000)::bigint as now)
    insert into rate_limits as r (key, hits, reset_at)
    select ${key}, 1, clock.now + ${timeWindow} from clock
    on conflict (key) do update set
      hits = case when r.reset_at > excluded.reset_at - ${timeWindow} then r.hits + 1 else 1 end,
      reset_at = case when r.reset_at > excluded.reset_at - ${timeWindow} then r.reset_at else excluded.reset_at end
    returning hits, (reset_at - (extract(epoch from now()) * 1000)::bigint)::integer as ttl`.execute(db);
  const row = rows[0]!;
  return { current: Number(row.hits), ttl: Math.max(0, Number(row.ttl)) };
}

/** Deletes the counters whose window ended; returns how many. */
export async function sweepRateLimits(db: Db): Promise<number> {
  const result = await sql`delete from rate_limits where reset_at <= (extract(epoch from now()) * 1000)::bigint`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The store class for @fastify/rate-limit's `store` option, bound to `db` (the plugin constructs
 * it with its own options, so the database comes through the closure). `onError` hears about a
 * failed sweep (a failed hit goes to the plugin, through the callback).
 */
export function rateLimitStore(db: Db, onError: (error: unknown) => void = () => {}) {
  let lastSweep = 0;
  return class KyselyRateLimitStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      hitRateLimit(db, key, timeWindow).then(
        (hit) => {
          callback(null, hit);
          const now = Date.now();
          if (now - lastSweep >= timeWindow) {
            lastSweep = now;
            sweepRateLimits(db).catch(onError);
          }
        },
        (error: Error) => callback(error),
      );
    }

    /** A store for a route or limiter of its own options: the same table (keys tell limiters apart). */
    child(): KyselyRateLimitStore {
      return new KyselyRateLimitStore();
    }
  };
}
