/**
 * The retention job (docs/api.md#retention, docs/operations.md#retention): in every process that
 * collects, a run of `expireItemsOnce` every `everyMs` ms (default one minute) and at start. On
 * PostgreSQL one process at a time runs it (an advisory lock; the others skip that run). Each run
 * also prunes the erased items' ids kept for the streams past `ERASED_KEEP_MS` (an hour,
 * docs/api.md#erasure; at most 1 000 a run, any process: the delete is idempotent).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/db.ts';
import { ERASED_KEEP_MS, pruneErasedItems } from '../store/erasures.ts';
import { expireItemsOnce, RETENTION_LIMITS } from '../store/retention.ts';
import { startTicker, type Ticker } from './ticker.ts';
import { ownsEntries } from '../services/table.ts';

export const RETENTION_EVERY_MS = 60_000;

/** Starts the retention job of the module: a run now and every `everyMs` ms; deletions are logged at `info`. */
export function startRetention(deps: { db: Db; log?: FastifyBaseLogger }, everyMs = RETENTION_EVERY_MS): Ticker {
  const { db, log } = deps;
  return startTicker(async () => {
    const run = await expireItemsOnce(db, ownsEntries, Date.now(), RETENTION_LIMITS);
    if (run?.deleted) log?.info({ deleted: run.deleted, more: run.more }, 'retention deleted expired items');
    await pruneErasedItems(db, Date.now() - ERASED_KEEP_MS);
  }, everyMs, log);
}
