/**
 * Kudos that keep counting (docs/services.md#kudos-refresh): in every collector process, a beat
 * (every `tickMs`, default 30 s) claims the items of ranked collections due for a fresh read of
 * their engagement (`store/kudos.ts`), looks them up in batches with their service's batch
 * lookup (`lookups.ts`: credential, quota, rate-limit holds), and writes what it read
 * (`updateKudos`: kudos, score, trending score; state untouched). The same answer serves the
 * re-verification (`applyLookup`, docs/services.md#re-verification): what the source says is gone
 * is removed, changed content is updated, and the items count as verified. On PostgreSQL the
 * claim hands each item to one process.
 *
 * Batches are per input (its credential) and collection, at most the lookup's batch size. A
 * failed lookup, or a credential that cannot be used, is logged and its items wait for their next
 * interval; other batches go on.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { claimKudosDue, type KudosDue, updateKudos } from '../store/kudos.ts';
import { connectorFor, kudosServices } from '../services/index.ts';
import { createFetcher } from './fetch.ts';
import { applyLookup, lookupRunner } from './lookups.ts';
import { startTicker, type Ticker } from './ticker.ts';

/** Items claimed per beat. */
const CLAIM = 500;

export interface KudosRefresher {
  /** Runs a beat now (or joins the one under way); resolves when it has finished. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the kudos refresh of this process (docs/services.md#kudos-refresh). */
export function startKudosRefresh(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 30_000): KudosRefresher {
  const { db, config, log } = deps;
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch });
  const services = kudosServices();
  const runner = lookupRunner({ db, config, fetcher, log }, 'kudos refresh');

  async function refreshBatch(due: KudosDue[], now: number): Promise<void> {
    const [first] = due;
    const outcome = await runner.run({ contractId: first!.contractId, inputId: first!.inputId, service: first!.service, ids: due.map((item) => item.id) }, now);
    if (!('result' in outcome)) return;
    await updateKudos(db, first!.contractId, first!.collectionId, new Map([...outcome.result.items].map(([id, item]) => [id, item.kudos])), Date.now());
    await applyLookup(db, first!.service, outcome.result, Date.now());
  }

  async function beat(): Promise<void> {
    const now = Date.now();
    const due = await claimKudosDue(db, now, { refreshS: config.kudosRefresh, windowS: config.kudosWindow, services, limit: CLAIM });
    const groups = new Map<string, KudosDue[]>();
    for (const item of due) {
      const key = `${item.collectionId} ${item.inputId}`;
      const group = groups.get(key);
      if (group) group.push(item);
      else groups.set(key, [item]);
    }
    for (const group of groups.values()) {
      const size = connectorFor(group[0]!.service)!.lookup!.batch;
      for (let i = 0; i < group.length; i += size) await refreshBatch(group.slice(i, i + size), now);
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
