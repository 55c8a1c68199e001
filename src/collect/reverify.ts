/**
 * Re-verification of polled services (docs/services.md#re-verification): in every collector
 * process, a beat (every `tickMs`, default 60 s) claims the stored items due for a check at their
 * source (`store/reverify.ts`: per service every REVERIFY_<SERVICE>_HOURS, items dated within
 * REVERIFY_<SERVICE>_DAYS), in every collection, and looks them up in batches with their service's
 * batch lookup (`lookups.ts`: the credential and quota a poll of their input uses, rate-limit
 * holds). What the source says is gone (deleted, protected, withheld, gone) is removed
 * (`removeItems`: state `removed`, out of content, count, streams and the wall, webhook
 * `item.removed`); what changed is updated (`updateFromSource`); the rest is stamped verified.
 *
 * Each item id is looked up once a beat whatever the number of collections holding it (the answer
 * applies to every copy); batches are per input, at most the lookup's batch size. A failed lookup
 * removes nothing: its items are due again when it may be retried (a rate limit's reset, else
 * `RETRY_MS`), and the other batches go on. On PostgreSQL the claim hands each item to one process.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { claimVerifyDue, releaseVerify, type VerifyDue } from '../store/reverify.ts';
import { connectorFor, lookupServices } from '../services/index.ts';
import { createFetcher } from './fetch.ts';
import { applyLookup, lookupRunner } from './lookups.ts';
import { startTicker, type Ticker } from './ticker.ts';

/** Items claimed per beat. */
const CLAIM = 1000;
/** How long after a failed lookup (no reset given) its items are due again (ms). */
export const RETRY_MS = 15 * 60_000;

export interface Reverifier {
  /** Runs a beat now (or joins the one under way); resolves when it has finished. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** What one beat did, summed over the reverifier's life (for the bench and logs). */
export interface ReverifyCounts {
  /** Lookup requests made (batches sent to a source), per service. */
  requests: Record<string, number>;
  /** Items checked (claimed and answered for), per service. */
  checked: Record<string, number>;
  removed: number;
  updated: number;
}

/**
 * The lookups of a beat's claimed copies: each item id once, asked through one of the inputs that
 * collected it, preferring the input that collected the most of the service's ids (greedily), so
 * that an item held by several collections costs one read and their items share batches.
 */
export function batchesOf(due: readonly Pick<VerifyDue, 'id' | 'inputId' | 'service'>[]): { service: string; inputId: string; ids: string[] }[] {
  /** service → input → ids it collected (claimed in this beat). */
  const byService = new Map<string, Map<string, Set<string>>>();
  for (const { service, inputId, id } of due) {
    const inputs = byService.get(service) ?? byService.set(service, new Map()).get(service)!;
    (inputs.get(inputId) ?? inputs.set(inputId, new Set()).get(inputId)!).add(id);
  }
  const batches: { service: string; inputId: string; ids: string[] }[] = [];
  for (const [service, inputs] of byService) {
    const left = new Set([...inputs.values()].flatMap((ids) => [...ids]));
    // At most one round per input: each round takes every id left of the input covering the most.
    for (let round = 0; left.size && round < inputs.size; round++) {
      let best: [string, string[]] | undefined;
      for (const [inputId, ids] of inputs) {
        const open = [...ids].filter((id) => left.has(id));
        if (!best || open.length > best[1].length) best = [inputId, open];
      }
      for (const id of best![1]) left.delete(id);
      batches.push({ service, inputId: best![0], ids: best![1].sort() });
    }
  }
  return batches;
}

/**
 * Starts the re-verification of this process (docs/services.md#re-verification). `clock` gives
 * the time (ms; default `Date.now`); `counts`, when given, is added to as batches are looked up.
 */
export function startReverify(deps: { db: Db; config: Config; log?: FastifyBaseLogger; clock?: () => number; counts?: ReverifyCounts }, tickMs = 60_000): Reverifier {
  const { db, config, log, counts } = deps;
  const clock = deps.clock ?? Date.now;
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch });
  const services = lookupServices();
  const runner = lookupRunner({ db, config, fetcher, log }, 're-verification');

  async function verifyBatch(service: string, contractId: string, inputId: string, ids: string[], now: number): Promise<void> {
    const outcome = await runner.run({ contractId, inputId, service, ids }, now);
    if ('unusable' in outcome) return; // no input or credential to ask with: due again at the next interval
    if ('failed' in outcome) return void (await releaseVerify(db, service, ids, outcome.retryAt ?? now + RETRY_MS, config.reverify));
    const applied = await applyLookup(db, service, outcome.result, clock());
    if (counts) {
      counts.requests[service] = (counts.requests[service] ?? 0) + 1;
      counts.checked[service] = (counts.checked[service] ?? 0) + ids.length;
      counts.removed += applied.removed;
      counts.updated += applied.updated;
    }
    if (applied.removed || applied.updated) log?.info({ service, input: inputId, ...applied }, 're-verification removed or updated items');
  }

  async function beat(): Promise<void> {
    const now = clock();
    const due = await claimVerifyDue(db, now, { cadence: config.reverify, services, limit: CLAIM });
    // One lookup per item id a beat: its copies' inputs are all able to ask for it.
    const groups = batchesOf(due);
    // An input belongs to one contract: its batch is looked up with that contract's input.
    const contractOf = new Map(due.map((row) => [row.inputId, row.contractId]));
    for (const { service, inputId, ids } of groups) {
      const size = connectorFor(service)!.lookup!.batch;
      for (let i = 0; i < ids.length; i += size) await verifyBatch(service, contractOf.get(inputId)!, inputId, ids.slice(i, i + size), now);
    }
  }

  const ticker: Ticker = startTicker(beat, tickMs, log);
  return {
    tick: ticker.tick,
    async stop() {
      await ticker.stop();
      await fetcher.close();
    },
  };
}
