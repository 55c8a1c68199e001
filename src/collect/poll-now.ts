/**
 * A poll of one input now, outside its schedule (`POST /collection/inputs/{id}/poll`,
 * docs/api.md#poll-now): the collector's own poll (`scheduler.ts` `pollWith` → `refresh.ts`
 * `refreshInput`: the same connector, credentials, quota gate, filter, de-duplication and status
 * update as a scheduled poll), holding one of the input's politeness key's COLLECT_HOST_CONCURRENCY
 * slots like a collector process (`store/inputs.ts` `claimInput`, `inputs.claimed_until`) for the
 * poll's length, so no one polls a host harder by asking.
 *
 * Bounded in time: each request of the poll has `POLL_NOW_FETCH_TIMEOUT_MS` (a feed document is
 * read within `connectors/feed-pool.ts` READ_LIMIT_MS); a slot is waited for at most
 * `SLOT_WAIT_MS`, in `SLOT_TRIES` looks, then the poll is refused (`busy`).
 *
 * The route (`management/inputs/routes.ts`) is given `poll` by the composition (`app.ts`): an
 * area does not import another.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { claimInput, findInput, releaseSlot } from '../store/inputs.ts';
import type { InputRow } from '../store/tables.ts';
import { collectorFetcher, pollWith } from './scheduler.ts';

/** Time limit of each request of a poll now (ms): the answer comes within seconds. */
export const POLL_NOW_FETCH_TIMEOUT_MS = 10_000;
/** Longest wait for a politeness slot (ms), and the number of looks in it. */
export const SLOT_WAIT_MS = 3000;
export const SLOT_TRIES = 15;

/** What a poll now did: `polled` (the input as the poll left it, and its new items), or `busy` (not polled: the input, or its host's slots, are taken). */
export type PollNowOutcome = { polled: true; items: number; input: InputRow } | { polled: false; busy: 'input' | 'host'; retryAfterSeconds: number };

export interface PollNow {
  /** Polls `input` now (see the module); never throws for a source failure (it is in the input's status). */
  poll(input: InputRow): Promise<PollNowOutcome>;
  /** Closes the outbound connections. */
  close(): Promise<void>;
}

/** The poll now of an API process (see the module). */
export function createPollNow(deps: { db: Db; config: Config; log?: FastifyBaseLogger }): PollNow {
  const { db, config } = deps;
  const fetcher = collectorFetcher(config, POLL_NOW_FETCH_TIMEOUT_MS);
  const pollOne = pollWith(deps, fetcher);
  const leaseMs = config.collectLease * 1000;
  return {
    async poll(input) {
      let claimed: Awaited<ReturnType<typeof claimInput>> = { busy: 'input' };
      for (let look = 0; look < SLOT_TRIES; look++) {
        if (look > 0) await new Promise((resolve) => setTimeout(resolve, SLOT_WAIT_MS / SLOT_TRIES));
        claimed = await claimInput(db, input.contractId, input.id, Date.now(), leaseMs, config.collectHostConcurrency);
        if (!('busy' in claimed)) break;
      }
      if ('busy' in claimed) return { polled: false, busy: claimed.busy, retryAfterSeconds: Math.ceil(SLOT_WAIT_MS / 1000) };
      let items: number;
      try {
        const now = Date.now();
        items = await pollOne(claimed, now);
      } finally {
        await releaseSlot(db, claimed);
      }
      return { polled: true, items, input: (await findInput(db, input.contractId, input.id)) ?? claimed };
    },
    close: () => fetcher.close(),
  };
}
