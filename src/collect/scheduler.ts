/**
 * The collector (docs/services.md#polling): every tick, pick the due inputs (active, in an active
 * collection of an active contract) and refresh them, at most `COLLECT_CONCURRENCY` at once, never
 * one input twice at once. A new or changed input is due at once, so it is polled within a tick.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { dueInputs } from '../store/inputs.ts';
import { createFetcher } from './fetch.ts';
import { credentialResolver } from './credentials.ts';
import { pollIntervalOf, refreshInput } from './refresh.ts';
import { startTicker } from './ticker.ts';

export interface Collector {
  /** Picks and starts due inputs now; resolves when they are started (not finished). */
  tick(): Promise<void>;
  /** Resolves when every poll under way has finished. */
  idle(): Promise<void>;
  /** Stops taking work, waits for the polls under way, and closes outbound connections. */
  stop(): Promise<void>;
}

/** Starts the collector; `tickMs` is the time between two looks for due inputs (default 1000). */
export function startCollector(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): Collector {
  const { db, config, log } = deps;
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch });
  const running = new Map<string, Promise<unknown>>();
  let stopping = false;

  async function pick(): Promise<void> {
    const free = config.collectConcurrency - running.size;
    if (stopping || free <= 0) return;
    const due = await dueInputs(db, Date.now(), free, [...running.keys()]);
    for (const input of due) {
      const pollInterval = pollIntervalOf(input, config);
      const poll = refreshInput(db, input, { fetch: fetcher, services: config.services, credentials: credentialResolver(db, config), quotas: config.quotas, pollInterval, ...(log ? { log } : {}) })
        .catch((err: unknown) => log?.error({ err, input: input.id }, 'poll failed'))
        .finally(() => running.delete(input.id));
      running.set(input.id, poll);
    }
  }

  const ticker = startTicker(pick, tickMs, log);

  return {
    tick: ticker.tick,
    async idle() {
      await ticker.idle();
      await Promise.all(running.values());
    },
    async stop() {
      stopping = true;
      await ticker.stop();
      await Promise.all(running.values());
      await fetcher.close();
    },
  };
}
