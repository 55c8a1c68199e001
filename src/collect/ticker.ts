/**
 * The beat both collectors keep (in-process on SQLite, claiming on PostgreSQL): run `work` now
 * and every `everyMs` ms, never two runs at once (a tick during a run joins it); a failed run is
 * logged and the next tick goes on. `stop()` ends the beat and waits for the run under way.
 */
import type { FastifyBaseLogger } from 'fastify';

export interface Ticker {
  /** Runs `work` now, or joins the run under way. */
  tick(): Promise<void>;
  /** Resolves when the run under way (if any) has finished; starts none. */
  idle(): Promise<void>;
  /** Stops ticking; resolves when the run under way has finished. */
  stop(): Promise<void>;
}

/** Starts the beat of the module: `work` now, then every `everyMs` ms; a failed run is logged on `log`. */
export function startTicker(work: () => Promise<void>, everyMs: number, log?: FastifyBaseLogger): Ticker {
  let ticking: Promise<void> | undefined;
  const tick = (): Promise<void> =>
    (ticking ??= work()
      .catch((err: unknown) => log?.error({ err }, 'collector tick failed'))
      .finally(() => (ticking = undefined)));
  const timer = setInterval(() => void tick(), everyMs);
  void tick();
  return {
    tick,
    async idle() {
      await ticking;
    },
    async stop() {
      clearInterval(timer);
      await ticking;
    },
  };
}
