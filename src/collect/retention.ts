/**
 * The retention job (docs/api.md#retention, docs/operations.md#retention): in every process that
 * collects, a run of `expireItemsOnce` every `everyMs` ms (default one minute) and at start. On
 * PostgreSQL one process at a time runs it (an advisory lock; the others skip that run). Each run
 * also prunes the ids of erased and expired items kept for the streams (`erased_items`) past
 * `ERASED_KEEP_MS` (an hour, docs/api.md#erasure, docs/api.md#retention; at most
 * `GONE_PRUNE_PER_RUN` a run, twice what a run may delete, so that the table stays within about
 * an hour of deletions; any process: the delete is idempotent).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/db.ts';
import { ERASED_KEEP_MS, pruneErasedItems } from '../store/erasures.ts';
import { expireItemsOnce, RETENTION_LIMITS } from '../store/retention.ts';
import { startTicker, type Ticker } from './ticker.ts';
import { ownsEntries } from '../services/table.ts';

export const RETENTION_EVERY_MS = 60_000;

/** Rows of `erased_items` pruned per run at most: twice `RETENTION_LIMITS.perRun`, as each expired item adds one. */
export const GONE_PRUNE_PER_RUN = 2 * RETENTION_LIMITS.perRun;

/** Starts the retention job of the module: a run now and every `everyMs` ms; deletions are logged at `info`. */
export function startRetention(deps: { db: Db; log?: FastifyBaseLogger }, everyMs = RETENTION_EVERY_MS): Ticker {
  const { db, log } = deps;
  return startTicker(async () => {
    const run = await expireItemsOnce(db, ownsEntries, Date.now(), RETENTION_LIMITS);
    if (run?.deleted) log?.info({ deleted: run.deleted, more: run.more }, 'retention deleted expired items');
    await pruneErasedItems(db, Date.now() - ERASED_KEEP_MS, GONE_PRUNE_PER_RUN);
  }, everyMs, log);
}
