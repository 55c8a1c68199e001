/**
 * The collector when several processes share one PostgreSQL (docs/operations.md#several-processes):
 * the same pool of polls as on SQLite (`pool.ts`, through `scheduler.ts`'s `runCollector`), each
 * process taking its due inputs by claiming them in the database, in batches.
 *
 * - A take claims due inputs that can start now (`claimDueInputs`): of each politeness key
 *   (lib/politeness.ts: a feed's host, an API account) at most COLLECT_HOST_CONCURRENCY minus
 *   the polls of that key under way in every process, so politeness holds across the
 *   installation and a busy host's inputs stay unclaimed, for whichever process frees one of its
 *   slots first. A claim is a lease (`COLLECT_LEASE`): each input is polled by one process at a
 *   time.
 * - When a poll ends (its outcome recorded) its slot is freed at once (`releaseSlot`), and the
 *   process claims again at once if due inputs were left for want of a slot.
 * - A process that dies mid-poll: its claims run out after the lease and a live process claims
 *   the inputs on its next take. A claimed input that waits in the pool more than half the lease
 *   (the process's own COLLECT_CONCURRENCY full) is given back.
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
import { anyDueInput, claimDueInputs, type ClaimedInput, releaseClaims, releaseSlot } from '../store/inputs.ts';
import { type Collector, runCollector } from './scheduler.ts';

/** Starts a collector process's share of the work; `tickMs` as in `startCollector`. */
export async function startSharedCollector(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): Promise<Collector> {
  const { db, config } = deps;
  const leaseMs = config.collectLease * 1000;
  return runCollector(deps, tickMs, {
    async take(limit) {
      const now = Date.now();
      const inputs = await claimDueInputs(db, now, limit, leaseMs, config.collectHostConcurrency);
      return { inputs, held: inputs.length < limit && (await anyDueInput(db, now)) };
    },
    finished: (input) => releaseSlot(db, input as ClaimedInput),
    maxWaitMs: leaseMs / 2,
    release: (inputs) => releaseClaims(db, inputs as ClaimedInput[]),
  });
}
