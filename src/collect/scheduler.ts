/**
 * The collector (docs/services.md#polling): a pool of polls (`pool.ts`) that takes the due inputs
 * (active, in an active collection of an active contract) in batches and refreshes them, at most
 * `COLLECT_CONCURRENCY` at once and `COLLECT_HOST_CONCURRENCY` per politeness key (a remote host
 * or an API account, lib/politeness.ts), never one input
 * twice at once, starting the next as soon as one ends. Every tick it looks for due inputs again,
 * so a new or changed input (due at once) is polled within a tick. With IMAGE_SCREENING on, the
 * process also runs the image screening job (`screening.ts`), off the polls' path.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { createScreener } from '../filter/images/screener.ts';
import { MEDIA_MAX_BYTES } from '../lib/image-limits.ts';
import type { Db } from '../store/db.ts';
import { dueInputs } from '../store/inputs.ts';
import type { InputRow } from '../store/tables.ts';
import { createFetcher } from './fetch.ts';
import { credentialResolver } from './credentials.ts';
import { pollIntervalOf } from './interval.ts';
import { type PollPoolOptions, startPollPool } from './pool.ts';
import { refreshInput } from './refresh.ts';
import { startScreening } from './screening.ts';
import { startTicker } from './ticker.ts';

export interface Collector {
  /** Takes due inputs now and starts what it can; resolves when they are started (not finished). */
  tick(): Promise<void>;
  /** Resolves when every poll under way has finished and no more are due. */
  idle(): Promise<void>;
  /** Stops taking work, waits for the polls under way, and closes outbound connections. */
  stop(): Promise<void>;
}

/** The fetcher of a collector process: guarded, at most COLLECT_HOST_CONCURRENCY requests per origin, `timeoutMs` per request (default `fetch.ts` DEFAULT_TIMEOUT_MS). */
export function collectorFetcher(config: Config, timeoutMs?: number) {
  return createFetcher({ allowPrivate: config.allowPrivateFetch, connectionsPerOrigin: config.collectHostConcurrency, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
}

/**
 * Polls one input with the collector's settings (`refresh.ts`), its interval from `pollIntervalOf`
 * (a claimed input keeps its due time in `nextRunAt`: the collection lag counts from it; a poll
 * outside the schedule gives its own `dueAt`, ms). Resolves to the new items stored.
 */
export function pollWith(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, fetch: ReturnType<typeof collectorFetcher>) {
  const { db, config, log } = deps;
  const credentials = credentialResolver(db, config);
  return (input: InputRow, dueAt?: number) =>
    refreshInput(db, input, { fetch, services: config.services, credentials, quotas: config.quotas, pollInterval: pollIntervalOf(input, config), ...(log ? { log } : {}), ...(dueAt !== undefined ? { dueAt } : {}) });
}

/**
 * A collector that takes due inputs with `taking` (on PostgreSQL also freeing host slots and
 * giving back claims: `finished`, `maxWaitMs`, `release`): the pool of polls (`pool.ts`) with the collector's settings and
 * fetcher, filled every `tickMs` (ms) by the ticker. The SQLite and the PostgreSQL collectors
 * differ only in `taking`.
 */
export function runCollector(
  deps: { db: Db; config: Config; log?: FastifyBaseLogger },
  tickMs: number,
  taking: Pick<PollPoolOptions, 'take' | 'finished' | 'maxWaitMs' | 'release'>,
): Collector {
  const { config, log } = deps;
  const fetcher = collectorFetcher(config);
  const pool = startPollPool({
    concurrency: config.collectConcurrency,
    hostConcurrency: config.collectHostConcurrency,
    poll: pollWith(deps, fetcher),
    ...taking,
    ...(log ? { log } : {}),
  });
  const ticker = startTicker(pool.fill, tickMs, log);
  // Image screening (docs/filters.md#image-screening): its own fetcher (at most MEDIA_MAX_BYTES) and threads, started with the first image.
  const images = config.imageScreening ? startImageScreening(deps) : undefined;

  return {
    tick: ticker.tick,
    async idle() {
      await ticker.idle();
      await pool.idle();
    },
    async stop() {
      await ticker.stop();
      await images?.stop();
      await pool.stop();
      await fetcher.close();
    },
  };
}

/** The screening job of a collector process (collect/screening.ts) with its guarded fetcher and screener; `stop` ends all three. */
function startImageScreening(deps: { db: Db; config: Config; log?: FastifyBaseLogger }): { stop(): Promise<void> } {
  const { config, log } = deps;
  const fetch = createFetcher({ allowPrivate: config.allowPrivateFetch, maxBytes: MEDIA_MAX_BYTES, connectionsPerOrigin: config.collectHostConcurrency });
  const screener = createScreener({ threads: config.imageScreeningThreads });
  const job = startScreening({ db: deps.db, fetch, screener, ...(log ? { log } : {}) });
  return {
    async stop() {
      await job.stop();
      await screener.close();
      await fetch.close();
    },
  };
}

/** Starts the collector of a process on SQLite; `tickMs` is the time between two looks for due inputs (default 1000). */
export function startCollector(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): Collector {
  return runCollector(deps, tickMs, { take: async (limit, exclude) => ({ inputs: await dueInputs(deps.db, Date.now(), limit, exclude), held: false }) });
}
