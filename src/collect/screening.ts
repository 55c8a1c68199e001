/**
 * The image screening job of a collector process (docs/filters.md#image-screening): off the
 * poll's path, it screens the images of the items the collector stored (queued in the database in
 * the storing transaction, store/image-screenings.ts, so the queue survives a restart and is
 * shared by the collector processes), and judges again the items a `media.nsfw` rule held while
 * they waited.
 *
 * A round (every SCREEN_TICK_MS, rounds back to back while there is work, at most MAX_ROUNDS a
 * tick) claims for LEASE_MS the oldest pending items, at most PER_CONTRACT of each contract, taken
 * in turns between contracts; as many items at once as the screener has threads, each image
 * followed by a rest as long as it took (REST_RATIO), so that screening takes about half of the
 * CPU it could and the polls keep theirs. Per item:
 * 1. each image not yet scored (at most MAX_IMAGES an item) is fetched through the guarded fetch
 *    `fetch` (collect/fetch.ts: no non-public address, at most MEDIA_MAX_BYTES, a time limit) and
 *    screened by the screener (filter/images/screener.ts) in the contract's share; a refusal
 *    (`busy`: the contract's share is full) gives the item back for a later round;
 * 2. in one transaction: the scores are written into the stored item's `media[].moderation`
 *    (the collection version bumped, store/items/cards.ts `setImageScores`); an item held with
 *    AWAITING_SCREENING is judged again by its governing filter (the item with `media.nsfw` and
 *    its spam score, in the filter pool): accepted → released (published when its input
 *    publishes at once, `item.published`), held → held with the rule's reason, rejected → stays
 *    unpublished with a rejection recorded (`item.rejected`); the queue row is deleted.
 * An image that cannot be screened (refused by the guard, an error status, not an image, a
 * corrupt file, too many pixels or bytes, a timeout) makes the item `unscreenable`: its row is
 * kept with the reason, and an item held while awaiting screening stays held for a moderator
 * with the reason `image could not be screened: …` (never shown unscreened).
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Decision, FilterError } from '../filter/engine.ts';
import { AWAITING_SCREENING, imagesOf, UNSCREENABLE, withNsfw } from '../filter/images/nsfw.ts';
import type { Screener } from '../filter/images/screener.ts';
import { filterPool, type FilterPool, POLL_BUDGET_MS } from '../filter/pool.ts';
import { type ContentItem, type ImageModeration, inShape } from '../item.ts';
import type { SourceFetch } from '../services/connector.ts';
import type { Db } from '../store/db.ts';
import { claimScreenings, finishScreening, markUnscreenable, releaseScreening, type Screening } from '../store/image-screenings.ts';
import { findInput } from '../store/inputs.ts';
import { setImageScores } from '../store/items/cards.ts';
import { findItem } from '../store/items/find.ts';
import { changeStates, setHeld } from '../store/items/moderate.ts';
import { type Held, itemBody } from '../store/items/rows.ts';
import { emitEvents, itemSubject } from '../store/outbox.ts';
import { recordRejections } from '../store/rejections.ts';
import { type FilterCache, filterCache } from './filter-cache.ts';
import { withSpamScores } from './ingest.ts';
import { startTicker, type Ticker } from './ticker.ts';

/** Time between two looks for pending items (ms). */
export const SCREEN_TICK_MS = 1000;
/** A process's hold on a claimed item (ms): longer than MAX_IMAGES fetches and screenings. */
export const LEASE_MS = 5 * 60_000;
/** Items of one contract claimed per round (its share of a round). */
export const PER_CONTRACT = 8;
/** Contracts served per round. */
const CONTRACTS_PER_ROUND = 50;
/** Rounds back to back in one tick, at most. */
const MAX_ROUNDS = 20;
/** After each image the job rests this many times as long as the image took (at most MAX_REST_MS): screening's share of the CPU. */
export const REST_RATIO = 1;
const MAX_REST_MS = 1000;
/** Images screened per item, at most; an item with more is unscreenable (held for a moderator). */
export const MAX_IMAGES = 8;

export interface ScreeningDeps {
  db: Db;
  /** The guarded fetch of images (collect/fetch.ts, at most MEDIA_MAX_BYTES). */
  fetch: SourceFetch;
  screener: Screener;
  filters?: FilterCache;
  pool?: FilterPool;
  log?: FastifyBaseLogger;
}

/** What a round did, counted in items. */
export interface RoundResult {
  screened: number;
  unscreenable: number;
  /** Given back for a later round (their contract's share was full). */
  deferred: number;
}

/** One round (see the module); `now` is the claim time (ms). */
export async function screenRound(deps: ScreeningDeps, now = Date.now()): Promise<RoundResult> {
  const claimed = inTurns(await claimScreenings(deps.db, now, LEASE_MS, PER_CONTRACT, CONTRACTS_PER_ROUND));
  const result: RoundResult = { screened: 0, unscreenable: 0, deferred: 0 };
  let next = 0;
  const worker = async () => {
    while (next < claimed.length) {
      const row = claimed[next++]!;
      try {
        result[await screenItem(deps, row)] += 1;
      } catch (err) {
        deps.log?.error({ err, item: row.itemId }, 'image screening failed');
        await releaseScreening(deps.db, row);
        result.deferred += 1;
      }
    }
  };
  // As many items at once as the screener has threads: no more main-thread work than it can classify.
  await Promise.all(Array.from({ length: Math.min(deps.screener.limits.slots, claimed.length) }, worker));
  return result;
}

/** The claimed rows in turns: each contract's first, then each one's second, … */
function inTurns(rows: Screening[]): Screening[] {
  const byContract = new Map<string, Screening[]>();
  for (const row of rows) byContract.set(row.contractId, [...(byContract.get(row.contractId) ?? []), row]);
  const queues = [...byContract.values()];
  const out: Screening[] = [];
  for (let i = 0; out.length < rows.length; i++) for (const queue of queues) if (queue[i]) out.push(queue[i]!);
  return out;
}

/** Why an image could not be fetched, in an operator's words. */
function fetchProblem(error: unknown): string {
  const kind = (error as { kind?: string }).kind;
  if (kind === 'blocked') return 'its address is not public (refused by the outbound guard)';
  if (kind === 'too_large') return 'larger than the bytes Sluice reads';
  if (kind === 'timeout') return 'its server did not answer in time';
  if (kind === 'protocol') return 'its address is not an http(s) URL Sluice fetches';
  return `it could not be fetched (${kind ?? 'network'})`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Screens one claimed item (see the module, 1–2). */
async function screenItem(deps: ScreeningDeps, row: Screening): Promise<keyof RoundResult> {
  const { db } = deps;
  const stored = await findItem(db, row.contractId, row.collectionId, row.itemId);
  if (!stored) {
    await finishScreening(db, row);
    return 'screened';
  }
  const item = inShape(itemBody(stored.body));
  const todo = imagesOf(item).filter((image) => !image.moderation);
  const scores = new Map<string, ImageModeration>();
  let problem: string | undefined = todo.length > MAX_IMAGES ? `more than ${MAX_IMAGES} images` : undefined;
  for (const [i, image] of todo.slice(0, MAX_IMAGES).entries()) {
    if (scores.has(image.url)) continue;
    let bytes: Uint8Array;
    try {
      const response = await deps.fetch(image.url, { accept: 'image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1' });
      if (response.status < 200 || response.status >= 300) {
        problem ??= `image ${i}: its server answered ${response.status}`;
        continue;
      }
      bytes = response.body;
    } catch (error) {
      problem ??= `image ${i}: ${fetchProblem(error)}`;
      continue;
    }
    const began = performance.now();
    const outcome = await deps.screener.screen(row.contractId, bytes);
    // Rest as long as the image took: screening keeps to about half of a core, the polls the rest.
    await sleep(Math.min(MAX_REST_MS, (performance.now() - began) * REST_RATIO));
    if ('busy' in outcome) {
      await releaseScreening(db, row);
      return 'deferred';
    }
    if ('unscreenable' in outcome) problem ??= `image ${i}: ${outcome.unscreenable}`;
    else scores.set(image.url, outcome.moderation);
  }
  const screened: ContentItem = { ...item, media: item.media && item.media.map((m) => (m.type === 'image' && scores.has(m.url) ? { ...m, moderation: scores.get(m.url)! } : m)) };
  const held = stored.held ? (JSON.parse(stored.held) as Held) : undefined;
  const awaiting = stored.state === 'unpublished' && held?.reason === AWAITING_SCREENING;
  const decision = awaiting && !problem ? await judgeAgain(deps, row, screened) : undefined;

  const finished = Date.now();
  await db.transaction().execute(async (trx) => {
    if (scores.size) await setImageScores(trx, row.contractId, row.collectionId, row.itemId, scores);
    if (problem) {
      await markUnscreenable(trx, row, problem);
      // Held for a moderator rather than shown unscreened.
      if (awaiting) await setHeld(trx, row.contractId, row.collectionId, row.itemId, { ...held!, reason: `${UNSCREENABLE}: ${problem}` });
      return;
    }
    await finishScreening(trx, row);
    if (!decision) return;
    // A moderator may have acted meanwhile: only an item still waiting is judged again.
    const now = await trx.selectFrom('items').select(['state', 'held']).where('contractId', '=', row.contractId).where('collectionId', '=', row.collectionId).where('id', '=', row.itemId).executeTakeFirst();
    if (!now || now.state !== 'unpublished' || !now.held || (JSON.parse(now.held) as Held).reason !== AWAITING_SCREENING) return;
    if (decision.outcome.accepted) {
      await setHeld(trx, row.contractId, row.collectionId, row.itemId, null);
      if (decision.display) await changeStates(trx, row.contractId, row.collectionId, [row.itemId], 'published', { onlyFrom: 'unpublished' });
    } else if (decision.outcome.action === 'hold') {
      await setHeld(trx, row.contractId, row.collectionId, row.itemId, { set: { id: decision.outcome.set.id || null, name: decision.outcome.set.name }, rule: decision.outcome.rule, reason: decision.outcome.reason });
    } else {
      const { set, rule, reason } = decision.outcome;
      await setHeld(trx, row.contractId, row.collectionId, row.itemId, null);
      const rejection = { itemId: row.itemId, url: screened.url, title: screened.title ?? null, setId: set.id, setName: set.name, rule, reason, item: JSON.stringify(screened) };
      const fresh = await recordRejections(trx, { inputId: row.inputId, contractId: row.contractId }, [rejection], finished);
      if (fresh.length) {
        const { item: _kept, ...data } = rejection;
        await emitEvents(trx, row.contractId, [{ type: 'item.rejected', subject: itemSubject(row.collectionId, row.itemId), data: { contractId: row.contractId, collectionId: row.collectionId, inputId: row.inputId, ...data } }], finished);
      }
    }
  });
  return problem ? 'unscreenable' : 'screened';
}

/**
 * The governing filter's decision on the screened item (with `media.nsfw` and its spam score), and
 * whether its input publishes at once; no filter (or no input any more) → accepted; a filter that
 * cannot judge it (past its time, or not compiling) → held with why.
 */
async function judgeAgain(deps: ScreeningDeps, row: Screening, item: ContentItem): Promise<{ outcome: Decision; display: boolean }> {
  const input = await findInput(deps.db, row.contractId, row.inputId);
  if (!input) return { outcome: { accepted: true }, display: false };
  const governing = await (deps.filters ?? filterCache(deps.db)).governing(input);
  if (!governing) return { outcome: { accepted: true }, display: Boolean(input.display) };
  const now = Date.now();
  const [scored] = await withSpamScores(deps.db, row.contractId, row.collectionId, [item], now);
  const { key, filter, lists } = governing;
  // Not judged (in time, or at all: a filter that cannot compile): stays held, the moderator decides.
  const stay = (reason: string): Decision => ({ accepted: false, action: 'hold', set: { id: '', name: 'image screening' }, rule: -1, reason });
  try {
    const judged = await (deps.pool ?? filterPool()).judge({ contractId: row.contractId, key, filter, lists, items: [withNsfw(scored!)], now }, POLL_BUDGET_MS);
    return { outcome: judged.decisions[0] ?? stay('the filter did not judge the screened item in time'), display: Boolean(input.display) };
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    return { outcome: stay(`the filter cannot judge the screened item: ${error.message}`), display: Boolean(input.display) };
  }
}

/** The job of a collector process: `screenRound` every SCREEN_TICK_MS (see the module). */
export function startScreening(deps: ScreeningDeps, tickMs = SCREEN_TICK_MS): Ticker {
  return startTicker(
    async () => {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const done = await screenRound(deps);
        if (done.screened + done.unscreenable === 0) break;
      }
    },
    tickMs,
    deps.log,
  );
}
