/**
 * Looking stored items up at their source (docs/services.md#re-verification), as the kudos refresh
 * (`kudos.ts`) and the re-verification (`reverify.ts`) both do: one batch of one input's items
 * through its service's `Connector.lookup`, with the credential and within the quota a poll of the
 * input would use (`credentials.ts`, `quotas.ts`; a lookup of a public API, `anonymous`, also
 * without one; with the stored items asked, for a lookup that `readsStored`). What the source answered is applied by `applyLookup`: items it says are gone are
 * removed (`removeItems`), items whose title, text or media changed are updated
 * (`updateFromSource`), and every copy of the items it answered for is stamped as verified.
 *
 * A source's rate limit (an error with `Retry-After`, or a response saying the limit is spent)
 * holds every lookup of that service and credential (of that service, for an `anonymous` lookup,
 * which sends none) until it resets, in this runner; a failed lookup, or a credential that
 * cannot be used, is logged and fails that batch only. A failed lookup never removes anything.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { findInput } from '../store/inputs.ts';
import { storedOfInput } from '../store/items/find.ts';
import { removeItems, updateFromSource } from '../store/removals.ts';
import { markVerified } from '../store/reverify.ts';
import { type LookupResult, SourceError } from '../services/connector.ts';
import { connectorFor } from '../services/index.ts';
import { credentialResolver } from './credentials.ts';
import { type createFetcher, FetchError } from './fetch.ts';
import { openQuotaGate, QuotaWait } from './quotas.ts';
import { ownsEntries } from '../services/table.ts';

/**
 * One batch's outcome: what the source answered; or that it failed and when it may be tried again
 * (ms; undefined: unknown); or `unusable`: no input, lookup or credential to ask with, or a permanent
 * failure (`SourceError.permanent`): nothing to retry soon.
 */
export type LookupOutcome = { result: LookupResult } | { failed: true; retryAt?: number } | { unusable: true };

export interface LookupRunner {
  /** Looks `ids` (items of `service` collected by input `inputId` of contract `contractId`, at most the lookup's batch) up at `now` (ms). */
  run(batch: { contractId: string; inputId: string; service: string; ids: string[] }, now: number): Promise<LookupOutcome>;
}

/** A runner of lookups for one job; `job` names it in the log. */
export function lookupRunner(deps: { db: Db; config: Config; fetcher: ReturnType<typeof createFetcher>; log?: FastifyBaseLogger | undefined }, job: string): LookupRunner {
  const { db, config, fetcher, log } = deps;
  /** Service and credential (or `environment`, or `anonymous` for a lookup sending none) → no lookup before this time (ms). */
  const heldUntil = new Map<string, number>();
  return {
    async run({ contractId, inputId, service, ids }, now) {
      const input = await findInput(db, contractId, inputId);
      const lookup = connectorFor(service)?.lookup;
      if (!input || !lookup) return { unusable: true };
      /** The hold of this batch's service and credential; known once the credential is resolved. */
      let key: string | undefined;
      try {
        // Inside the try: a credential that cannot be used (named by the input but inactive or
        // deleted, a failed token refresh) fails this batch only, not the rest of the beat.
        const resolved = await credentialResolver(db, config).resolve(input, { fetch: fetcher, now });
        if (resolved.missing && !lookup.anonymous) return { unusable: true };
        // An anonymous lookup sends no credential: its source's limit is this process's (per IP).
        key = `${input.service} ${lookup.anonymous ? 'anonymous' : (resolved.credential?.id ?? 'environment')}`;
        const held = heldUntil.get(key) ?? 0;
        if (held > now) return { failed: true, retryAt: held };
        const gate = config.quotas ? await openQuotaGate(db, config.quotas, { input, services: resolved.services, credential: resolved.credential, fetch: fetcher, now }) : undefined;
        let result;
        try {
          const stored = lookup.readsStored ? await storedOfInput(db, contractId, inputId, service, ids) : undefined;
          result = await lookup.lookup(input, ids, { fetch: gate?.fetch ?? fetcher, services: resolved.services, now }, stored);
        } finally {
          await gate?.settle();
        }
        if (result.nextAt) heldUntil.set(key, result.nextAt);
        return { result };
      } catch (error) {
        if (error instanceof QuotaWait) {
          if (key) heldUntil.set(key, error.until);
          return { failed: true, retryAt: error.until };
        }
        const retryAt = error instanceof SourceError && error.retryAfterMs !== undefined ? now + error.retryAfterMs : undefined;
        if (retryAt !== undefined && key) heldUntil.set(key, retryAt);
        if (error instanceof SourceError || error instanceof FetchError) log?.warn({ input: input.id, error: error.message }, `${job} failed`);
        else log?.error({ err: error, input: input.id }, `${job} failed`);
        // A permanent failure (no key for the API, a refused credential) will not pass on a retry.
        if (error instanceof SourceError && error.permanent) return { unusable: true };
        return { failed: true, ...(retryAt !== undefined && { retryAt }) };
      }
    },
  };
}

/**
 * Applies a lookup's answer for items of `service` at `now` (ms): the gone ones are removed in
 * every collection with their reason, those whose title, text or media changed are updated in
 * every copy, and every copy of the items answered (found or gone) is stamped as verified.
 * Resolves to how many were removed and updated (distinct item ids).
 */
export async function applyLookup(db: Db, service: string, result: LookupResult, now: number): Promise<{ removed: number; updated: number }> {
  const removed = new Set<string>();
  const byReason = new Map<LookupResult['gone'] extends Map<string, infer R> ? R : never, string[]>();
  for (const [id, reason] of result.gone) byReason.set(reason, [...(byReason.get(reason) ?? []), id]);
  for (const [reason, ids] of byReason) {
    for (const lost of await removeItems(db, { service, ids }, { reason, at: now }, ownsEntries)) for (const id of lost.ids) removed.add(id);
  }
  let updated = 0;
  for (const item of result.items.values()) if ((await updateFromSource(db, item)).length) updated++;
  await markVerified(db, service, [...result.items.keys()], now);
  return { removed: removed.size, updated };
}
