/**
 * Refreshes one input (docs/filters.md#when-filters-run): fetch through its connector → judge
 * and store the items as every collected item is (`ingest.ts`: language, the governing filter,
 * de-duplication, rejections new to this input) → update its schedule and status (`collected`,
 * `rejected`, the connector's `warnings` about entries it dropped or dated itself), all writes in
 * one transaction, through the store. Items are judged at the poll's `now` (`datediff`). A
 * filter that cannot compile, or that does not judge every new item within the budget, fails
 * the poll (nothing stored, `lastError` says why) rather than letting anything through
 * unjudged. A poll that brings no item (a 304 Not Modified to a conditional request) of a
 * working input skips the filter and the transaction: one update of the schedule and status.
 * Items the source says it deleted (a feed's Atom tombstones) are removed first (`removeDeleted`).
 * A failure is
 * recorded in the input's status (`lastError`) and pushes the next poll back exponentially, up
 * to 1 h (or the input's interval when that is longer), and never before a source's
 * `Retry-After`; a permanent failure parks the input until it is changed. Other inputs are not
 * affected. The service's credential is the input's contract's (`credentials.ts`): a permanent
 * failure that is the credential's fault marks it failed; a success marks it ok and used (its
 * `lastUsed` written at most once a minute). A poll that would exceed its credential's quota
 * (`quotas.ts`, with `quotas`) does not run: the input waits until the quota resets, its
 * `lastError` naming the quota and when.
 */
import type { FastifyBaseLogger } from 'fastify';
import { FilterError } from '../filter/engine.ts';
import type { FilterPool } from '../filter/pool.ts';
import { countCollectedItems, observeCollectionLag, observePoll } from '../lib/metrics.ts';
import { iso } from '../lib/time.ts';
import type { Db } from '../store/db.ts';
import { inputIdsOfSource, inputUnchanged, recordPollFailure, recordPollSuccess } from '../store/inputs.ts';
import { removeItems } from '../store/removals.ts';
import { emitEvents, type NewEvent } from '../store/outbox.ts';
import type { InputRow } from '../store/tables.ts';
import { type CollectContext, type CollectResult, SourceError } from '../services/connector.ts';
import { connectorFor } from '../services/index.ts';
import { FetchError } from './fetch.ts';
import type { FilterCache } from './filter-cache.ts';
import { FilterBudgetError, judgeItems, storeJudged } from './ingest.ts';
import { sourceTitle } from './source-title.ts';
import { blamesCredential, type CredentialResolver, LAST_USED_EVERY_MS, missingCredential, type Resolved } from './credentials.ts';
import { markCredentialFailed, markCredentialUsed } from '../store/credentials.ts';
import type { QuotaSettings } from '../services/module.ts';
import { recordQuotaWait } from '../store/quotas.ts';
import { openQuotaGate, QuotaWait } from './quotas.ts';
import { ownsEntries } from '../services/table.ts';

const MAX_BACKOFF_S = 3600;
/**
 * The soonest a source may ask to be polled again after a poll ends (`CollectResult.pollAfterMs`,
 * ms; docs/services.md#polling): a source answering 0 (or a tiny wait) cannot make the collector
 * poll it back to back, each poll spending quota.
 */
export const SOURCE_POLL_MIN_MS = 5_000;
/** The longest a source's own wait is taken (ms): a day, POLL_INTERVAL_MAX's ceiling, so that no answer parks an input. */
const SOURCE_POLL_MAX_MS = 86_400_000;
/** A permanent failure parks the input this long; changing the input makes it due at once. */
const PARKED_MS = 365 * 24 * 3600 * 1000;

/** Seconds until the next poll after `failures` consecutive failures (0 = success). */
export function nextDelaySeconds(pollInterval: number, failures: number, retryAfterMs = 0): number {
  const backoff = failures === 0 ? pollInterval : Math.max(pollInterval, Math.min(pollInterval * 2 ** failures, MAX_BACKOFF_S));
  return Math.max(backoff, Math.ceil(retryAfterMs / 1000));
}

function describe(error: unknown): string {
  if (error instanceof SourceError || error instanceof FetchError || error instanceof FilterBudgetError) return error.message;
  if (error instanceof FilterError) return `the filter cannot be applied: ${error.message}`;
  return 'internal error while collecting (see the server log)';
}

/**
 * Polls `input` once and records the outcome; returns how many new items were stored. Never
 * throws for a source failure. If the input was changed while it was being polled, the result
 * is dropped: the change already scheduled a fresh poll.
 */
export async function refreshInput(
  db: Db,
  input: InputRow,
  ctx: Omit<CollectContext, 'now'> & { pollInterval: number; log?: FastifyBaseLogger; filters?: FilterCache; pool?: FilterPool; credentials?: CredentialResolver; quotas?: QuotaSettings; dueAt?: number },
  now = Date.now(),
): Promise<number> {
  // Metrics (lib/metrics.ts): the lag from the due time (`dueAt`, else the input's `nextRunAt`), the poll's outcome and items.
  const started = Date.now();
  observeCollectionLag(input.service, now - (ctx.dueAt ?? input.nextRunAt));
  let tally: { stored: number; rejected: number; duplicate: number } | undefined;
  const connector = connectorFor(input.service);
  let resolved: Resolved | undefined;
  try {
    if (!connector) throw new SourceError(`service ${input.service} is not supported by this version yet`);
    resolved = ctx.credentials ? await ctx.credentials.resolve(input, { fetch: ctx.fetch, now }) : undefined;
    const services = resolved?.services ?? ctx.services;
    const gate = ctx.quotas && !resolved?.missing ? await openQuotaGate(db, ctx.quotas, { input, services, credential: resolved?.credential, fetch: ctx.fetch, now }) : undefined;
    let result;
    try {
      result = await connector.collect(input, JSON.parse(input.sourceState) as Record<string, unknown>, { fetch: gate?.fetch ?? ctx.fetch, services, now });
    } finally {
      await gate?.settle();
    }
    // What the source says it deleted goes first: a failure here fails the poll before its state
    // (the feed's validators) is saved, so the next poll reads the tombstones again.
    await removeDeleted(db, input, result.deleted);
    const used = resolved?.credential;
    if (used && (used.status !== 'ok' || !used.lastUsed || now - Date.parse(used.lastUsed) >= LAST_USED_EVERY_MS)) await markCredentialUsed(db, used.contractId, used.id, iso(now));
    // Nothing new (a 304 Not Modified, an empty page) from an input that was working: no filter,
    // no transaction, one update of its schedule and status (a failing one also gets its
    // `input.recovered` event, below).
    if (result.items.length === 0 && input.lastError === null) {
      const finished = Date.now();
      await recordPollSuccess(db, input, success(input, result, ctx.pollInterval, now, finished, 0, 0));
      tally = { stored: 0, rejected: 0, duplicate: 0 };
      observePoll(input.service, 'success', Date.now() - started);
      return 0;
    }
    const judged = await judgeItems(db, input, result.items, ctx, now);
    const finished = Date.now();
    const added = await db.transaction().execute(async (trx) => {
      if (!(await inputUnchanged(trx, input))) return 0;
      const stored = await storeJudged(trx, input, judged, finished);
      await recordPollSuccess(trx, input, success(input, result, ctx.pollInterval, now, finished, stored.added, stored.rejected));
      await emitEvents(trx, input.contractId, input.lastError !== null ? [...stored.events, recoveredEvent(input)] : stored.events, finished);
      tally = { stored: stored.cards, rejected: stored.rejected, duplicate: stored.added - stored.cards };
      return stored.added;
    });
    observePoll(input.service, 'success', Date.now() - started);
    if (tally) countCollectedItems(input.service, tally);
    return added;
  } catch (error) {
    observePoll(input.service, error instanceof QuotaWait ? 'quota_wait' : error instanceof SourceError || error instanceof FetchError ? 'source_error' : error instanceof FilterError || error instanceof FilterBudgetError ? 'filter_error' : 'error', Date.now() - started);
    if (error instanceof QuotaWait) {
      await recordQuotaWait(db, input, { lastError: error.message, nextRunAt: error.until });
      return 0;
    }
    if (!(error instanceof SourceError || error instanceof FetchError)) ctx.log?.error({ err: error, input: input.id }, 'collect failed');
    const failures = input.failures + 1;
    const retryAfterMs = error instanceof SourceError ? error.retryAfterMs : undefined;
    const delayMs = error instanceof SourceError && error.permanent ? PARKED_MS : nextDelaySeconds(ctx.pollInterval, failures, retryAfterMs) * 1000;
    const permanent = error instanceof SourceError && error.permanent;
    let lastError = describe(error);
    if (permanent && resolved?.missing) lastError = missingCredential(input.service, input.contractId, lastError);
    const credential = permanent && resolved?.credential && blamesCredential(error, lastError) ? resolved.credential : undefined;
    await db.transaction().execute(async (trx) => {
      const events: NewEvent[] = [];
      if (credential && (await markCredentialFailed(trx, credential.contractId, credential.id, lastError))) {
        events.push({ type: 'credential.failed', subject: `credential:${credential.id}`, data: { contractId: input.contractId, credentialId: credential.id, name: credential.name, service: credential.service, error: lastError } });
      }
      const recorded = await recordPollFailure(trx, input, { lastRun: iso(now), lastError, failures, nextRunAt: Date.now() + delayMs });
      // The input was working until this poll: it fails now (later failures are not news).
      if (recorded && input.lastError === null) events.push({ type: 'input.failed', subject: `input:${input.id}`, data: { ...inputData(input), error: lastError, failures } });
      await emitEvents(trx, input.contractId, events);
    });
    return 0;
  }
}

/**
 * Removes the items the source says it deleted (`CollectResult.deleted`: a feed's Atom tombstones,
 * RFC 6721) from what the inputs following this very source collected, in every contract
 * (`inputIdsOfSource`): the same id collected from another source stays (docs/services.md#rss,
 * "Deletions"). Reason `deleted` (docs/api.md#removed-at-the-source).
 */
async function removeDeleted(db: Db, input: InputRow, deleted: string[] | undefined): Promise<void> {
  if (!deleted?.length) return;
  const inputIds = await inputIdsOfSource(db, input.service, input.input);
  await removeItems(db, { service: input.service, ids: deleted, inputIds }, { reason: 'deleted' }, ownsEntries);
}

/**
 * Ms from the end of a successful poll to the next: the source's own wait (`pollAfterMs`, YouTube
 * live chat's `pollingIntervalMillis`) when it gave one, held within `SOURCE_POLL_MIN_MS` and a
 * day; else the input's interval (`pollInterval`, s).
 */
export function nextPollDelayMs(pollInterval: number, pollAfterMs?: number): number {
  if (pollAfterMs === undefined || !Number.isFinite(pollAfterMs)) return nextDelaySeconds(pollInterval, 0) * 1000;
  return Math.min(SOURCE_POLL_MAX_MS, Math.max(SOURCE_POLL_MIN_MS, Math.ceil(pollAfterMs)));
}

/** The status a successful poll started at `now` and finished at `finished` (ms) records (`recordPollSuccess`). */
function success(input: InputRow, result: CollectResult, pollInterval: number, now: number, finished: number, collected: number, rejected: number) {
  return {
    sourceState: JSON.stringify(result.state),
    lastRun: iso(now),
    lastSuccess: iso(finished),
    nextRunAt: Math.max(finished + nextPollDelayMs(pollInterval, result.pollAfterMs), result.nextRunAt ?? 0),
    collected,
    rejected,
    warnings: JSON.stringify(result.warnings ?? []),
    sourceTitle: sourceTitle(input.type, result.title, result.items),
  };
}

/** What webhook events name of an input (docs/api.md#webhook-events). */
function inputData(input: InputRow) {
  return { contractId: input.contractId, collectionId: input.collectionId, inputId: input.id, service: input.service, type: input.type, input: input.input };
}

/** `input.recovered`: the input was failing until this poll (docs/api.md#webhook-events). */
function recoveredEvent(input: InputRow): NewEvent {
  return { type: 'input.recovered', subject: `input:${input.id}`, data: inputData(input) };
}
