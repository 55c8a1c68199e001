/**
 * The judging step of the filter dry run (routes.ts, docs/api.md#filter-dry-run): the items go
 * to the filter pool's worker threads (`filter/pool.ts`) with the filter's source and the
 * contract's lists, under the filter's `lastModified` signature, so the event loop keeps serving
 * other requests while they are judged, and a worker reuses the compiled filter across requests.
 *
 * An unsaved set (`set` in the request, checked like a saved one before it gets here) is keyed
 * by a digest of its source and the lists, so a worker reuses it only for the same rules and lists.
 *
 * Errors (400 ValidationError naming `filterId`, or `set` for an unsaved set): the stored filter
 * cannot compile (the code of the problem: 1006 for a pattern, 1003 for a set over the
 * compiled-size bound, …), or it did not judge every item within DRY_RUN_BUDGET_MS of running
 * (code 1003, the message says how many it judged); a partial result is never answered.
 * The items are judged in the contract's share of the pool (docs/filters.md#bounds): a request
 * (`whenFull` `'refuse'`, the default) is refused with 429 RateLimitError when the share is full;
 * a job (`'wait'`) waits its turn.
 */
import { createHash } from 'node:crypto';
import { type Invalid, VALIDATION_CODES, validationError } from '../../errors.ts';
import { type Decision, FilterError, type FilterList, type FilterSource, type SetAction } from '../../filter/engine.ts';
import { withNsfw } from '../../filter/images/nsfw.ts';
import { DRY_RUN_BUDGET_MS, filterPool, type WhenShareFull } from '../../filter/pool.ts';
import { htmlText, plainTitle } from '../../lib/item-html.ts';
import type { Db } from '../../store/db.ts';
import { contractFilters, contractLists, filterSignature } from '../../store/filter-sources.ts';
import type { FilterTest } from './schema.ts';

/** The decision on each of `items`, in order, at `now`. Throws the 400 and 429 ApiErrors above. */
export async function judgeDryRun(
  db: Db,
  filterRef: { contractId: string; filterId?: string | undefined },
  loaded: { source: FilterSource; lists: FilterList[] },
  items: object[],
  now: number,
  whenFull: WhenShareFull = 'refuse',
): Promise<Decision[]> {
  const { contractId, filterId } = filterRef;
  const key = filterId
    ? `${contractId}/${filterId} ${filterSignature(await contractFilters(db, contractId), filterId)}`
    : `${contractId}/unsaved ${createHash('sha256').update(JSON.stringify(loaded)).digest('base64url')}`;
  const invalid = (message: string, code: number): Invalid =>
    filterId ? { propertyName: 'filterId', message, propertyValue: filterId, code } : { propertyName: 'set', message, code };
  let judged;
  try {
    // Items with screened images carry `media.nsfw` as the collector judges them (docs/filters.md#image-screening).
    const judging = items.map((item) => withNsfw(item as { media?: unknown }));
    judged = await filterPool().judge({ contractId, key, filter: loaded.source, lists: loaded.lists, items: judging, now }, DRY_RUN_BUDGET_MS, whenFull);
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    throw validationError([invalid(`the filter cannot compile: ${error.message}`, VALIDATION_CODES[error.kind])]);
  }
  if (!judged.complete) {
    const message = `the filter did not judge the ${items.length} items within ${DRY_RUN_BUDGET_MS} ms (judged ${judged.decisions.length}); send fewer items or simplify the filter`;
    throw validationError([invalid(message, VALIDATION_CODES.range)]);
  }
  return judged.decisions;
}

/** An unsaved set of a request (id '' until presented as null) with the contract's lists, ready for `compile`. */
export async function unsavedFilter(db: Db, contractId: string, set: NonNullable<FilterTest['set']>): Promise<{ source: FilterSource; lists: FilterList[] }> {
  const source = { kind: 'set' as const, set: { id: '', name: set.name ?? 'unsaved set', rules: set.rules, preCondition: set.preCondition, or: set.or === true, action: set.action ?? 'reject', active: true } };
  return { source, lists: await contractLists(db, contractId) };
}

export type DecisionResult = ReturnType<typeof presentDecision>;

/**
 * The decision on item `id` as the dry run answers it (`action`, `set`, `rule`, `reason` null when
 * accepted; `action` `hold` when a holding set matched, docs/filters.md#hold-for-review).
 */
export function presentDecision(id: string, decision: Decision) {
  return decision.accepted
    ? { id, accepted: true, action: null as SetAction | null, set: null, rule: null, reason: null }
    : { id, accepted: false, action: decision.action as SetAction | null, set: { id: decision.set.id || null, name: decision.set.name }, rule: decision.rule as number | null, reason: decision.reason as string | null };
}

/** Characters of an item's text that stand for its title when it has none. */
export const STORY_TEXT_CHARS = 100;

/**
 * How a dry run's result names the story it judged (docs/api.md#filter-dry-run): `title` the
 * item's title without tags, else the start of its text (STORY_TEXT_CHARS, tags removed, spaces
 * collapsed), else null; `date` its date as given, else null; `inputId` the input that collected
 * it (stored items), else null (items sent in the request).
 */
export function storyOf(item: object, inputId: string | null) {
  const { title: rawTitle, text: rawText, date } = item as { title?: unknown; text?: unknown; date?: unknown };
  const words = (value: unknown) => (typeof value === 'string' ? plainTitle(value).replace(/\s+/g, ' ').trim() : '');
  // The text is HTML (docs/api.md#content-item): its words, tags removed and entities decoded.
  const text = typeof rawText === 'string' ? htmlText(rawText) : '';
  const title = words(rawTitle) || (text.length > STORY_TEXT_CHARS ? `${text.slice(0, STORY_TEXT_CHARS).trimEnd()}…` : text) || null;
  return { title, date: typeof date === 'string' ? date : null, inputId };
}

export interface Hit {
  set: { id: string | null; name: string };
  rule: number;
  /** What the set did: reject, or hold for review. */
  action: SetAction;
  count: number;
}

/** Counts rejections and holds per set and rule as results come (a dry run's, or a filter application's pages). */
export class HitCounter {
  readonly #hits = new Map<string, Hit>();
  add(result: DecisionResult): void {
    if (result.accepted || !result.set) return;
    const key = `${result.set.id}/${result.rule}`;
    const hit = this.#hits.get(key) ?? { set: result.set, rule: result.rule!, action: result.action ?? 'reject', count: 0 };
    hit.count += 1;
    this.#hits.set(key, hit);
  }
  /** Rejections per set and rule, most first (ties: set name, then rule). */
  list(): Hit[] {
    return [...this.#hits.values()].sort((a, b) => b.count - a.count || a.set.name.localeCompare(b.set.name) || a.rule - b.rule);
  }
}

/** Rejections per set and rule of `results`, most first. */
export function hitsOf(results: DecisionResult[]): Hit[] {
  const counter = new HitCounter();
  for (const result of results) counter.add(result);
  return counter.list();
}
