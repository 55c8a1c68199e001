/**
 * The collector when several processes share one PostgreSQL (docs/operations.md#several-processes):
 * the same pool of polls as on SQLite (`pool.ts`, through `scheduler.ts`'s `runCollector`), each
 * process taking its due inputs by claiming them in the database, in batches.
 *
 * - A take claims up to a batch of due inputs (`claimDueInputs` pushes their `nextRunAt` by the
 *   lease, `COLLECT_LEASE`, in one update that re-checks they are still due, so one claimer wins
 *   each input): each input is polled by one process at a time.
 * - A process that dies mid-poll, or before it started a claimed input: the claim runs out after
 *   the lease and a live process claims the input on its next take. A claimed input that waits in
 *   the pool (its host busy) more than half the lease is dropped, to be claimed again after it,
 *   so it is never polled by two processes at once.
 * - Items are stored once whatever the interleaving: `storeItems` inserts with ON CONFLICT DO
 *   NOTHING on (collection_id, id) and counts only the rows it inserted; `collected` grows in SQL.
 * - `stop()` (SIGTERM): no more takes; the claims of the inputs still waiting are given back (due
 *   again at once, for the other processes); the polls under way finish.
 *
 * Until issue 19 each claimed input went through a pg-boss queue (`sluice-poll`) to any collector:
 * four more queries per poll and one fetch of jobs per free slot, for an exclusivity and an expiry
 * the claim already gives. pg-boss still runs the jobs (`management/jobs/runner.ts`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { claimDueInputs, releaseClaims } from '../store/inputs.ts';
import { type Collector, runCollector } from './scheduler.ts';

/** Starts a collector process's share of the work; `tickMs` as in `startCollector`. */
export async function startSharedCollector(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): Promise<Collector> {
  const leaseMs = deps.config.collectLease * 1000;
  return runCollector(deps, tickMs, {
    take: (limit) => claimDueInputs(deps.db, Date.now(), limit, leaseMs),
    maxWaitMs: leaseMs / 2,
    release: (inputs) => releaseClaims(deps.db, inputs, Date.now()),
  });
}
