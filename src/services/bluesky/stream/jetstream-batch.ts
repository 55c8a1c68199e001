/**
 * A batch of Jetstream events (docs/services.md#bluesky-jetstream), in arrival order: sorted into
 * posts matched per input, post edits, post deletions and the batch's last `time_us`
 * (`sortBatch`, pure), then stored (`storeBatch`):
 *
 * 1. the matched posts become items (`jetstreamItem`, with their authors) stored per input
 *    through the collector's `ingestPushed`;
 * 2. an edit applies the new text and media to every stored copy (`updateFromSource`), matched
 *    now or not;
 * 3. a deletion removes the post wherever it is stored, whichever input collected it, stream or
 *    poll (`removeItems`, reason `deleted`; Bluesky's Developer Guidelines: honour deletions).
 *
 * Deletions come after the posts are stored, so a post created and deleted in one batch ends
 * removed; the listener saves the cursor only after `storeBatch` resolves, so a failure resumes
 * from the cursor and no post or deletion is lost.
 */
import { ownsEntries } from '../../table.ts';
import type { FastifyBaseLogger } from 'fastify';
import { FilterError } from '../../../filter/engine.ts';
import { FilterBudgetError } from '../../../filter/pool.ts';
import type { ContentItem } from '../../../item.ts';
import type { Db } from '../../../store/db.ts';
import { removeItems, updateFromSource } from '../../../store/removals.ts';
import type { InputRow } from '../../../store/tables.ts';
import { jetstreamDeletedId, jetstreamItem } from '../connector.ts';
import { obj, type Json } from '../../kit/normalize.ts';
import type { CollectorTools } from '../../kit/stream/collector.ts';
import type { AuthorCache } from './jetstream-authors.ts';
import { type Matcher, matchPostOf } from './jetstream-match.ts';

/** A batch sorted (see the module). */
export interface SortedBatch {
  /** The largest `time_us` of the batch, or null when none has one. */
  last: number | null;
  /** Posts created or updated that match inputs, with the ids of those inputs, in order. */
  matched: { event: Json; ids: string[] }[];
  /** Posts updated (matched or not), in order. */
  updated: Json[];
  /** The item ids of the posts deleted (`jetstreamDeletedId`), each once. */
  deleted: string[];
  /** The DIDs of `identity` events (their handles may have changed). */
  identities: string[];
}

/** Sorts `events` against `matcher` (see the module). Pure. */
export function sortBatch(events: Json[], matcher: Matcher): SortedBatch {
  const sorted: SortedBatch = { last: null, matched: [], updated: [], deleted: [], identities: [] };
  const deleted = new Set<string>();
  for (const event of events) {
    if (typeof event.time_us === 'number') sorted.last = Math.max(sorted.last ?? 0, event.time_us);
    if (event.kind === 'identity' && typeof event.did === 'string') sorted.identities.push(event.did);
    const gone = jetstreamDeletedId(event);
    if (gone) {
      deleted.add(gone);
      continue;
    }
    const post = matchPostOf(event);
    if (!post) continue;
    if (obj(event.commit).operation === 'update') sorted.updated.push(event);
    const ids = matcher.match(post);
    if (ids.length) sorted.matched.push({ event, ids });
  }
  sorted.deleted = [...deleted];
  return sorted;
}

/** What `storeBatch` works with. */
export interface BatchStore {
  db: Db;
  log?: FastifyBaseLogger;
  /** The active inputs by id (an input gone since the matcher was compiled is skipped). */
  rows: ReadonlyMap<string, InputRow>;
  authors: AuthorCache;
  ingestPushed: CollectorTools['ingestPushed'];
  /** Hears what was not stored and why (a filter that cannot judge an input's items). */
  fail(message: string): void;
}

/**
 * Stores `batch` (see the module; `now`: ms, for the authors' lookup pause). A filter that cannot
 * judge an input's items stores nothing for it and is told to `fail`, as a poll would; any other
 * error is thrown (the listener resumes from its cursor).
 */
export async function storeBatch(batch: SortedBatch, store: BatchStore, now: number): Promise<void> {
  const { db, log, rows, authors } = store;
  for (const did of batch.identities) authors.forget(did);
  if (batch.matched.length) {
    await authors.fill(batch.matched.map((m) => String(m.event.did)), now);
    const perInput = new Map<string, ContentItem[]>();
    for (const { event, ids } of batch.matched) {
      const item = jetstreamItem(event, authors.get(String(event.did)));
      if (!item) continue;
      for (const id of ids) perInput.set(id, [...(perInput.get(id) ?? []), item]);
    }
    for (const [id, items] of perInput) {
      const row = rows.get(id);
      if (!row) continue;
      try {
        await store.ingestPushed(db, row, items, { log });
      } catch (error) {
        if (error instanceof FilterError || error instanceof FilterBudgetError) store.fail(`input ${id}: ${error.message}`);
        else throw error;
      }
    }
  }
  // An edit reaches every stored copy, matched now or not (a moderator's edit stays what shows).
  for (const event of batch.updated) {
    const item = jetstreamItem(event, authors.get(String(event.did)));
    if (item) await updateFromSource(db, item);
  }
  if (batch.deleted.length) await removeItems(db, { service: 'bluesky', ids: batch.deleted }, { reason: 'deleted' }, ownsEntries);
}
