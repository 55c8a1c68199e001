/**
 * The one path by which collected items enter a collection, whether polled (`refresh.ts`), pushed
 * (WebSub) or streamed (Mastodon streaming, Bluesky Jetstream): docs/filters.md#when-filters-run
 * and docs/services.md#push-and-streams.
 *
 * 1. `judgeItems` (outside any transaction): items of authors the contract blocked (an erasure,
 *    `store/erasures.ts`) are dropped; the items not yet in the input's collection get
 *    their language (the source's own wins, `lib/language.ts`) and are judged by the filter that
 *    governs the input (`filter-cache.ts`), in the filter pool's workers within POLL_BUDGET_MS
 *    (`filter/pool.ts`) at `now` (`datediff`). A filter that cannot compile throws `FilterError`;
 *    one that does not judge every item in time throws `FilterBudgetError`: nothing is stored
 *    rather than anything let through unjudged.
 *    Media scores a source sent are dropped; while the governing filter reads `media.nsfw`, an
 *    item with images not yet screened is held (AWAITING_SCREENING, docs/filters.md#image-screening)
 *    unless the filter rejects it.
 * 2. `storeJudged` (inside the caller's transaction): stores the accepted items new to the
 *    collection, and those a holding set held for review unpublished with `held`
 *    (docs/filters.md#hold-for-review) (asked again in the transaction; de-duplication, `store/items/dedupe.ts`), queues
 *    the new cards with images for screening (`store/image-screenings.ts`), items seen
 *    before go along so that an edit updates the card, records the rejections new to the input,
 *    and answers the counts and the webhook events (docs/api.md#webhook-events) for the caller to
 *    emit with its own.
 * 3. `ingestPushed`: 1 and 2 for items that arrived without a poll, recorded on the input
 *    (`recordPushed`: counters and `lastEventAt`, its poll schedule untouched), in one
 *    transaction with the events; nothing is stored for an input deleted or deactivated meanwhile.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Decision } from '../filter/engine.ts';
import { FilterBudgetError, filterPool, type FilterPool, POLL_BUDGET_MS } from '../filter/pool.ts';
import type { ContentItem } from '../item.ts';
import { withLanguage } from '../lib/language.ts';
import { countCollectedItems } from '../lib/metrics.ts';
import type { Database } from '../store/tables.ts';
import type { Db } from '../store/db.ts';
import { withoutBlocked } from '../store/erasures.ts';
import { recordPushed } from '../store/inputs.ts';
import { recentItems } from '../store/items/find.ts';
import type { Held } from '../store/items/rows.ts';
import { storedItemIds, storeNewItems } from '../store/items/write.ts';
import { AWAITING_SCREENING, hasUnscreened, nsfwRule, withoutScores } from '../filter/images/nsfw.ts';
import { recentOf, spamScore, WINDOW_MS } from '../filter/spam.ts';
import { queueScreenings } from '../store/image-screenings.ts';
import { emitEvents, itemSubject, type NewEvent } from '../store/outbox.ts';
import { type NewRejection, recordRejections } from '../store/rejections.ts';
import type { InputRow } from '../store/tables.ts';
import { type FilterCache, filterCache } from './filter-cache.ts';
import type { Transaction } from 'kysely';
import { ownsEntries } from '../services/table.ts';

// Where the collector's callers have always found it.
export { FilterBudgetError };

/** What judging needs besides the database: the filter cache and pool (defaults: the process's). */
export interface JudgeContext {
  filters?: FilterCache;
  pool?: FilterPool;
  log?: FastifyBaseLogger;
}

/** The outcome of `judgeItems`, for `storeJudged`. */
export interface Judged {
  /** Every item collected, in the source's order. */
  all: ContentItem[];
  /** Ids the collection held before judging (they are updated, not judged). */
  stored: Set<string>;
  /** The items new to the collection, with their language. */
  fresh: ContentItem[];
  /** The filter's decision per fresh item; empty when no filter governs the input. */
  decisions: Map<ContentItem, Decision>;
  /** The fresh items to store: those the filter accepted or held (all of them when no filter governs). */
  accepted: ContentItem[];
  /** The fresh items a holding set held for review, by id (docs/filters.md#hold-for-review). */
  held: Map<string, Held>;
}

/** Step 1: language and filter for the items of `input` new to its collection (see the module). */
export async function judgeItems(db: Db, input: InputRow, collected: ContentItem[], ctx: JudgeContext, now: number): Promise<Judged> {
  // Authors the contract erased are not collected again (docs/api.md#erasure).
  const items = await withoutBlocked(db, input.contractId, input.service, collected);
  const governing = await (ctx.filters ?? filterCache(db)).governing(input);
  const stored = await storedItemIds(db, input.contractId, input.collectionId, items.map((item) => item.id));
  const fresh: ContentItem[] = [];
  // Screening scores come from Sluice's screening only, never from the source (filter/images/nsfw.ts).
  for (const item of items) if (!stored.has(item.id)) fresh.push(withoutScores(await withLanguage(item)));
  const decisions = new Map<ContentItem, Decision>();
  if (governing && fresh.length > 0) {
    const { key, filter, lists } = governing;
    const scored = await withSpamScores(db, input.contractId, input.collectionId, fresh, now);
    const judged = await (ctx.pool ?? filterPool()).judge({ contractId: input.contractId, key, filter, lists, items: scored, now }, POLL_BUDGET_MS);
    if (!judged.complete) {
      throw new FilterBudgetError(`the filter did not judge the ${fresh.length} new items within ${POLL_BUDGET_MS} ms (judged ${judged.decisions.length}); nothing was stored: simplify the filter`);
    }
    judged.decisions.forEach((decision, i) => decisions.set(fresh[i]!, decision));
  }
  const held = new Map<string, Held>();
  for (const [item, decision] of decisions) {
    if (!decision.accepted && decision.action === 'hold') held.set(item.id, { set: { id: decision.set.id || null, name: decision.set.name }, rule: decision.rule, reason: decision.reason });
  }
  // A filter that reads media.nsfw has not seen an image it cannot see yet: the item waits, held,
  // for its screening, which judges it again (collect/screening.ts, docs/filters.md#image-screening).
  const nsfw = governing && nsfwRule(governing.filter);
  if (nsfw) {
    for (const [item, decision] of decisions) {
      const rejected = !decision.accepted && decision.action === 'reject';
      if (!rejected && !held.has(item.id) && hasUnscreened(item)) held.set(item.id, { set: { id: nsfw.set.id || null, name: nsfw.set.name }, rule: nsfw.rule, reason: AWAITING_SCREENING });
    }
  }
  const accepted = fresh.filter((item) => !governing || decisions.get(item)?.accepted === true || held.has(item.id));
  return { all: items, stored, fresh, decisions, accepted, held };
}

/** Recent items of the collection the spam score compares with (filter/spam.ts): at most this many. */
const SPAM_RECENT = 2000;

/**
 * `fresh` as the filter judges them: each with `spam`, its spam score (filter/spam.ts,
 * docs/filters.md#spam-score) against the collection's items dated within the last WINDOW_MS
 * (at most SPAM_RECENT) and the fresh batch itself. The score is for the filter; it is not stored.
 */
export async function withSpamScores(db: Db, contractId: string, collectionId: string, fresh: ContentItem[], now: number): Promise<ContentItem[]> {
  const stored = await recentItems(db, contractId, collectionId, now - WINDOW_MS, SPAM_RECENT);
  const at = (item: ContentItem) => (Number.isFinite(Date.parse(item.date)) ? Date.parse(item.date) : now);
  // An item judged again once stored (image screening) is in `stored` too: counted once.
  const judging = new Set(fresh.map((item) => item.id));
  const recent = [...stored.filter((item) => !judging.has(item.id)), ...fresh].map((item) => recentOf(item, at(item)));
  return fresh.map((item) => ({ ...item, spam: spamScore(item, recent, now) }));
}

/** What `storeJudged` did: new cards, new rejections, and the events to emit. */
export interface Stored {
  /** New items: cards and duplicates merged into cards. */
  added: number;
  /** New cards. */
  cards: number;
  rejected: number;
  events: NewEvent[];
}

/** Step 2, inside the caller's transaction (see the module); `finished` is the store time (ms). */
export async function storeJudged(trx: Transaction<Database>, input: InputRow, judged: Judged, finished: number): Promise<Stored> {
  const known = await storedItemIds(trx, input.contractId, input.collectionId, judged.fresh.map((item) => item.id));
  const state = input.display ? 'published' : 'unpublished';
  // Items stored before go along too: a changed title, text or media updates the card.
  const again = judged.all.filter((item) => judged.stored.has(item.id));
  const { added, cards } = await storeNewItems(trx, { collectionId: input.collectionId, contractId: input.contractId, inputId: input.id, state, held: judged.held }, judged.accepted, ownsEntries, finished, known, again);
  // New cards with images wait for screening (collect/screening.ts) in a queue kept in the database.
  const byId = new Map(judged.accepted.map((item) => [item.id, item]));
  const toScreen = cards.filter((id) => hasUnscreened(byId.get(id) ?? { media: null }));
  await queueScreenings(trx, toScreen.map((itemId) => ({ collectionId: input.collectionId, itemId, contractId: input.contractId, inputId: input.id })), finished);
  const rejectedNow = rejections(judged.decisions, known);
  const newlyRejected = await recordRejections(trx, { inputId: input.id, contractId: input.contractId }, rejectedNow, finished);
  return { added, cards: cards.length, rejected: newlyRejected.length, events: itemEvents(input, state, judged.accepted, cards, rejectedNow, newlyRejected, judged.held) };
}

/**
 * Step 3: items pushed or streamed to `input` at `now` (ms) → judged, stored and recorded in one
 * transaction (see the module); answers how many new cards were stored. Throws what
 * `judgeItems` throws.
 */
export async function ingestPushed(db: Db, input: InputRow, items: ContentItem[], ctx: JudgeContext, now = Date.now()): Promise<number> {
  const judged = await judgeItems(db, input, items, ctx, now);
  const finished = Date.now();
  return db.transaction().execute(async (trx) => {
    const stored = await storeJudged(trx, input, judged, finished);
    if (!(await recordPushed(trx, input.contractId, input.id, { added: stored.added, rejected: stored.rejected, at: finished }))) {
      // Gone or deactivated meanwhile: undo what this transaction stored.
      throw new InputGone();
    }
    await emitEvents(trx, input.contractId, stored.events, finished);
    countCollectedItems(input.service, { stored: stored.cards, rejected: stored.rejected, duplicate: stored.added - stored.cards });
    return stored.added;
  }).catch((error: unknown) => {
    if (error instanceof InputGone) return 0;
    throw error;
  });
}

class InputGone extends Error {}

/**
 * The events of stored items (docs/api.md#webhook-events), in order: per new card
 * `item.collected` (with the item) and, when the input publishes at once and the item is not
 * held for review, `item.published`; per new rejection `item.rejected`.
 */
function itemEvents(
  input: InputRow,
  published: 'published' | 'unpublished',
  accepted: ContentItem[],
  cards: string[],
  rejected: NewRejection[],
  newlyRejected: string[],
  held: Map<string, Held>,
): NewEvent[] {
  const { contractId, collectionId } = input;
  const events: NewEvent[] = [];
  const byId = new Map(accepted.map((item) => [item.id, item]));
  for (const itemId of cards) {
    const subject = itemSubject(collectionId, itemId);
    const state = held.has(itemId) ? 'unpublished' : published;
    events.push({ type: 'item.collected', subject, data: { contractId, collectionId, inputId: input.id, item: { ...byId.get(itemId)!, state } } });
    if (state === 'published') events.push({ type: 'item.published', subject, data: { contractId, collectionId, itemId, state } });
  }
  const fresh = new Set(newlyRejected);
  for (const { item: _kept, ...rejection } of rejected) {
    if (!fresh.delete(rejection.itemId)) continue;
    events.push({ type: 'item.rejected', subject: itemSubject(collectionId, rejection.itemId), data: { contractId, collectionId, inputId: input.id, ...rejection } });
  }
  return events;
}

/** The rejections among `decisions`, leaving out items the collection already holds (`known`). */
function rejections(decisions: Map<ContentItem, Decision>, known: Set<string>): NewRejection[] {
  const rejected: NewRejection[] = [];
  for (const [item, decision] of decisions) {
    if (decision.accepted || decision.action === 'hold' || known.has(item.id)) continue;
    // The item is kept so that a moderator can publish it anyway (docs/api.md#rejections).
    rejected.push({ itemId: item.id, url: item.url, title: item.title ?? null, setId: decision.set.id, setName: decision.set.name, rule: decision.rule, reason: decision.reason, item: JSON.stringify(item) });
  }
  return rejected;
}
