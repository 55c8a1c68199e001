/**
 * A store of @fastify/rate-limit (its `incr`/`child` store interface, as its bundled LocalStore
 * and RedisStore implement it) over the `rate_limits` table, so that every process sharing one
 * PostgreSQL database counts against the same limits (docs/api.md#rate-limits). And, in the same
 * table, the failure records of the sign-in and token endpoints (`FailureCounts`, keys
 * `failure:…`; docs/api.md#token-endpoint), with their in-memory counterpart for SQLite.
 *
 * Fixed windows per key, as the bundled LocalStore counts them: a key's window starts at its
 * first hit and lasts `timeWindow` ms; the first hit after it ends starts the next one. One
 * statement per hit, an UPSERT that either adds one to the current window or starts a new one,
 * timed by the database's clock (`now()`, the same for every process, so clocks that differ
 * between machines do not split or stretch windows). Rows of ended windows are deleted at most
 * once per window by each process, after a hit, without the request waiting for it.
 *
 * Far from its limit a key is counted in memory between statements (`SYNC_MS`, issue 19: a
 * public read wrote its counter on every request): while a limit of at least `LOCAL_MIN_LIMIT`
 * requests is less than half used, as this process last saw the shared count, hits add up here
 * and are written with the key's next statement, at most `SYNC_MS` later. Limits that small and
 * counts past half a limit are written on every hit, so a 429 is decided on the shared count;
 * what other processes counted in the last `SYNC_MS` shows in `RateLimit` a little later.
 *
 * Written for PostgreSQL (its `now()`); SQLite installations count in memory (one process owns
 * the database).
 */
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from './db.ts';

/** What `incr` reports: hits in the key's current window (this one included), and ms until it ends. */
export interface RateLimitHit {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result?: RateLimitHit) => void;

/** Longest a process counts a key's hits in memory before writing them (ms). */
export const SYNC_MS = 1000;
/** Smallest limit (requests per window) whose hits may be counted in memory between statements. */
export const LOCAL_MIN_LIMIT = 100;
/** Keys a process counts in memory at most; past it the memory is cleared (hits not yet written are lost). */
const MAX_LOCAL_KEYS = 10_000;

/** Counts `hits` hits (default one) of `key` in its window of `timeWindow` ms; see the module comment. */
export async function hitRateLimit(db: Db, key: string, timeWindow: number, hits = 1): Promise<RateLimitHit> {
  // Raw SQL: the CamelCasePlugin does not rename inside it, so names are the table's own.
  const { rows } = await sql<{ hits: number; ttl: number }>`
    with clock as (select (extract(epoch from now()) * 1000)::bigint as now)
    insert into rate_limits as r (key, hits, reset_at)
    select ${key}, ${hits}::integer, clock.now + ${timeWindow} from clock
    on conflict (key) do update set
      hits = case when r.reset_at > excluded.reset_at - ${timeWindow} then r.hits + excluded.hits else excluded.hits end,
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
  /** Per key: the shared count as last written or seen plus this process's hits since, unwritten `pending`. */
  const local = new Map<string, { hits: number; pending: number; resetAt: number; syncedAt: number }>();
  return class KyselyRateLimitStore {
    incr(key: string, callback: Callback, timeWindow: number, max = 0): void {
      const now = Date.now();
      let entry = local.get(key);
      // A window that ended takes its unwritten hits with it.
      if (entry && now >= entry.resetAt) {
        local.delete(key);
        entry = undefined;
      }
      if (entry && now - entry.syncedAt < SYNC_MS && max >= LOCAL_MIN_LIMIT && entry.hits + 1 < max / 2) {
        entry.hits++;
        entry.pending++;
        callback(null, { current: entry.hits, ttl: entry.resetAt - now });
        return;
      }
      const hits = (entry?.pending ?? 0) + 1;
      // Hits arriving while the statement runs are counted in memory, on top of its answer.
      if (entry) Object.assign(entry, { hits: entry.hits + 1, pending: 0, syncedAt: now });
      hitRateLimit(db, key, timeWindow, hits).then(
        (hit) => {
          const at = Date.now();
          const since = local.get(key)?.pending ?? 0;
          if (!local.has(key) && local.size >= MAX_LOCAL_KEYS) local.clear();
          local.set(key, { hits: hit.current + since, pending: since, resetAt: at + hit.ttl, syncedAt: at });
          callback(null, hit);
          if (at - lastSweep >= timeWindow) {
            lastSweep = at;
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

/** A failure record of the sign-in limits (auth/rate-limit.ts): failures counted, and when the last one was (ms). */
export interface FailureRecord {
  count: number;
  last: number;
}

/**
 * Where the failure limits of the login form and the token endpoint (auth/rate-limit.ts) keep
 * their records: in this process's memory on SQLite (one process owns the database), in the
 * `rate_limits` table on PostgreSQL, so that every process sharing the database counts the same
 * failures. A record is forgotten `forgetMs` after its last failure; in the table a row holds
 * `hits` = the count and `reset_at` = the last failure + `forgetMs`, so the sweep of ended windows
 * deletes forgotten records too. Times come from the caller (the limiter's clock, ms).
 */
export interface FailureCounts {
  /**
   * Reads the records of `keys` as of `now` (a missing or forgotten one reads `{count: 0, last: 0}`),
   * calls `decide` with them and writes the records it returns in `write` (same order; undefined
   * leaves one as it is), with no other `update` of these keys in between: on PostgreSQL one
   * transaction holding the rows locked (keys locked in sorted order, so two updates never
   * deadlock), in memory synchronously. Returns `decide`'s `result`. On PostgreSQL `decide` is
   * first called on a plain read, and when it writes nothing that answer stands (so a refusal
   * costs one statement; it may be a moment old, e.g. miss a give-back that is committing);
   * otherwise it is called again on the locked rows. So `decide` must be pure.
   */
  update<T>(keys: readonly string[], now: number, decide: (records: FailureRecord[]) => { write: (FailureRecord | undefined)[]; result: T }): Promise<T>;
  /** Takes one off `key`'s count (a claim given back), never below 0; its `last` stays. */
  giveBack(key: string): Promise<void>;
  /** Forgets `key`'s record. */
  forget(key: string): Promise<void>;
  /** The keys held (tests: the table stays bounded and its keys fixed-length). */
  keys(): Promise<string[]>;
}

const NO_FAILURE: FailureRecord = { count: 0, last: 0 };

/**
 * Failure records in this process's memory: an LRU of at most `entries` records (lru-cache), the
 * least recently used going first, so an attacker sending ever new identities cannot grow it.
 */
export function memoryFailureCounts({ entries, forgetMs }: { entries: number; forgetMs: number }): FailureCounts {
  const table = new LRUCache<string, FailureRecord>({ max: entries });
  const read = (key: string, now: number) => {
    const record = table.get(key);
    return record && record.last + forgetMs > now ? record : NO_FAILURE;
  };
  return {
    async update(keys, now, decide) {
      const { write, result } = decide(keys.map((key) => read(key, now)));
      keys.forEach((key, i) => {
        if (write[i]) table.set(key, write[i]);
      });
      return result;
    },
    async giveBack(key) {
      const record = table.peek(key);
      if (record) table.set(key, { ...record, count: Math.max(0, record.count - 1) });
    },
    async forget(key) {
      table.delete(key);
    },
    async keys() {
      return [...table.keys()];
    },
  };
}

/**
 * Failure records in the `rate_limits` table (PostgreSQL; see {@link FailureCounts}), under keys
 * that start with `prefix`. Rows of forgotten records are deleted by a sweep at most once per
 * `forgetMs` per process, after an update, without the request waiting for it; `onError` hears
 * about a failed sweep.
 */
export function databaseFailureCounts(db: Db, { forgetMs, prefix }: { forgetMs: number; prefix: string }, onError: (error: unknown) => void = () => {}): FailureCounts {
  let lastSweep = 0;
  return {
    async update(keys, now, decide) {
      const sorted = [...new Set(keys)].sort();
      // A plain read first: an answer that writes nothing (a refusal, the bulk of an attack)
      // stands without a transaction.
      const seen = await db.selectFrom('rateLimits').select(['key', 'hits', 'resetAt']).where('key', 'in', sorted).execute();
      const known = new Map(seen.map((row) => [row.key, row.resetAt > now ? { count: Number(row.hits), last: Number(row.resetAt) - forgetMs } : NO_FAILURE]));
      const quick = decide(keys.map((key) => known.get(key) ?? NO_FAILURE));
      if (!quick.write.some(Boolean)) return quick.result;
      const result = await db.transaction().execute(async (trx) => {
        // Rows to lock: one made (empty, already forgotten) where the key has none yet.
        await trx.insertInto('rateLimits').values(sorted.map((key) => ({ key, hits: 0, resetAt: 0 }))).onConflict((oc) => oc.column('key').doNothing()).execute();
        const rows = await trx.selectFrom('rateLimits').select(['key', 'hits', 'resetAt']).where('key', 'in', sorted).orderBy('key').forUpdate().execute();
        const held = new Map(rows.map((row) => [row.key, row.resetAt > now ? { count: Number(row.hits), last: Number(row.resetAt) - forgetMs } : NO_FAILURE]));
        const decided = decide(keys.map((key) => held.get(key) ?? NO_FAILURE));
        for (const [i, key] of keys.entries()) {
          const record = decided.write[i];
          if (record) await trx.updateTable('rateLimits').set({ hits: record.count, resetAt: record.last + forgetMs }).where('key', '=', key).execute();
        }
        return decided.result;
      });
      if (now - lastSweep >= forgetMs) {
        lastSweep = now;
        sweepRateLimits(db).catch(onError);
      }
      return result;
    },
    async giveBack(key) {
      await db.updateTable('rateLimits').set({ hits: sql`greatest(hits - 1, 0)` }).where('key', '=', key).execute();
    },
    async forget(key) {
      await db.deleteFrom('rateLimits').where('key', '=', key).execute();
    },
    async keys() {
      const rows = await db.selectFrom('rateLimits').select('key').where('key', 'like', `${prefix}%`).execute();
      return rows.map((row) => row.key);
    },
  };
}
