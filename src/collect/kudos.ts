/**
 * Kudos that keep counting (docs/services.md#kudos-refresh): in every collector process, a beat
 * (every `tickMs`, default 30 s) claims the items of ranked collections due for a fresh read of
 * their engagement (`store/kudos.ts`), looks them up in batches with their service's batch
 * lookup (`Connector.lookup`), with the credential and within the quota a poll of their input
 * would use (`credentials.ts`, `quotas.ts`; a lookup of a public API, `anonymous`, also without
 * one), and writes what it read (`updateKudos`: kudos,
 * score, trending score; state untouched). On PostgreSQL the claim hands each item to one process.
 *
 * Batches are per input (its credential) and collection, at most the lookup's batch size. A
 * source's rate limit (an error with `Retry-After`, or a response saying the limit is spent)
 * holds every lookup of that service and credential (of that service, for an `anonymous` lookup,
 * which sends none) until it resets, in this process; a failed lookup, or a credential that
 * cannot be used, is logged and its items wait for their next interval; other batches go on.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { findInput } from '../store/inputs.ts';
import { claimKudosDue, type KudosDue, updateKudos } from '../store/kudos.ts';
import { SourceError } from '../services/connector.ts';
import { connectorFor, lookupServices } from '../services/index.ts';
import { credentialResolver } from './credentials.ts';
import { createFetcher, FetchError } from './fetch.ts';
import { openQuotaGate, QuotaWait } from './quotas.ts';
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
  const services = lookupServices();
  /** Service and credential (or `environment`, or `anonymous` for a lookup sending none) → no lookup before this time (ms). */
  const heldUntil = new Map<string, number>();

  async function refreshBatch(due: KudosDue[], now: number): Promise<void> {
    const [first] = due;
    const input = await findInput(db, first!.inputId);
    const lookup = connectorFor(first!.service)?.lookup;
    if (!input || !lookup) return;
    /** The hold of this batch's service and credential; known once the credential is resolved. */
    let key: string | undefined;
    try {
      // Inside the try: a credential that cannot be used (named by the input but inactive or
      // deleted, a failed token refresh) fails this batch only, not the rest of the beat.
      const resolved = await credentialResolver(db, config).resolve(input, { fetch: fetcher, now });
      if (resolved.missing && !lookup.anonymous) return;
      // An anonymous lookup sends no credential: its source's limit is this process's (per IP).
      key = `${input.service} ${lookup.anonymous ? 'anonymous' : (resolved.credential?.id ?? 'environment')}`;
      if ((heldUntil.get(key) ?? 0) > now) return;
      const gate = config.quotas ? await openQuotaGate(db, config.quotas, { input, services: resolved.services, credential: resolved.credential, fetch: fetcher, now }) : undefined;
      let result;
      try {
        result = await lookup.lookup(input, due.map((item) => item.id), { fetch: gate?.fetch ?? fetcher, services: resolved.services, now });
      } finally {
        await gate?.settle();
      }
      if (result.nextAt) heldUntil.set(key, result.nextAt);
      await updateKudos(db, first!.collectionId, new Map([...result.items].map(([id, item]) => [id, item.kudos])), Date.now());
    } catch (error) {
      if (error instanceof QuotaWait) return void (key && heldUntil.set(key, error.until));
      if (error instanceof SourceError && error.retryAfterMs !== undefined && key) heldUntil.set(key, now + error.retryAfterMs);
      if (error instanceof SourceError || error instanceof FetchError) return void log?.warn({ input: input.id, error: error.message }, 'kudos refresh failed');
      log?.error({ err: error, input: input.id }, 'kudos refresh failed');
    }
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
