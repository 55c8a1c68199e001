/**
 * A filter applied to stored items (docs/api.md#apply-a-filter): the collection's items dated in
 * the window are judged as the dry run judges them (dry-run.ts, the filter pool's worker threads,
 * `PAGE` items at a time so the event loop stays free and memory stays bounded), and the published
 * ones the filter rejects are unpublished — never deleted — and the published ones a holding set
 * matches (docs/filters.md#hold-for-review) are unpublished and held for review (`held`, the
 * queue's Held view), counted as `held`, not `rejected`; all in one transaction with one audit
 * entry (action `apply`) listing every item it changed, which `POST /collection/audit/{id}/revert`
 * undoes as one. Items already unpublished are judged and counted but not changed. Items a
 * moderator published anyway (`filter_override`, docs/api.md#rejections) are left alone: counted
 * as judged, never as rejected. With `dryRun` nothing changes and no entry is recorded: the
 * outcome's `wouldUnpublish` is how many items it would unpublish.
 *
 * Run in the request for up to APPLY_IN_REQUEST items, else as a job (kind `filter-apply`,
 * management/jobs/runner.ts) whose progress is the items judged; the job's change and its
 * finishing commit together, so a job run again after a crash does not apply twice.
 */
import { notFoundError } from '../../errors.ts';
import { type Actor, recordAudit } from '../../store/audit.ts';
import type { Db } from '../../store/db.ts';
import { loadFilter } from '../../store/filter-sources.ts';
import { storedItemsPage } from '../../store/items/find.ts';
import { changeStates, holdItems } from '../../store/items/moderate.ts';
import type { Held } from '../../store/items/rows.ts';
import { finishJob } from '../../store/jobs.ts';
import { HitCounter, judgeDryRun, presentDecision, unsavedFilter } from './dry-run.ts';
import type { FilterTest } from './schema.ts';

/** Items judged per round trip to the filter pool. */
const PAGE = 1000;

/** What a filter application is asked (stored as a job's params): times in ms. */
export interface ApplyParams {
  contractId: string;
  collectionId: string;
  filterId?: string;
  set?: NonNullable<FilterTest['set']>;
  sinceMs: number;
  untilMs: number;
  actor: Actor;
  /** Count, change nothing. */
  dryRun?: boolean;
}

export interface ApplyOutcome {
  judged: number;
  rejected: number;
  /** Items a holding set matched (published or not); the published ones are unpublished and held. */
  held: number;
  unpublished: number;
  hits: ReturnType<HitCounter['list']>;
  auditId: string | null;
  /** With `dryRun` only: the published items it would unpublish. */
  wouldUnpublish?: number;
}

/**
 * Applies the filter; `progress(done, total)` after each page; with `jobId`, finishes that job in
 * the change's transaction (throws when another runner finished it first: nothing is applied twice).
 * Throws the dry run's 400 ApiErrors (a filter that cannot compile or runs over its budget on a page).
 */
export async function applyFilter(db: Db, params: ApplyParams, total: number, progress: (done: number, total: number) => Promise<void>, jobId?: string): Promise<ApplyOutcome> {
  const { contractId, collectionId, filterId } = params;
  const loaded = filterId ? await loadFilter(db, contractId, filterId) : await unsavedFilter(db, contractId, params.set!);
  if (!loaded) throw notFoundError(`No filter set or chain ${filterId}.`, 'filterId', filterId);
  const window = { contractId, collectionId, sinceMs: params.sinceMs, untilMs: params.untilMs };
  const hits = new HitCounter();
  const toUnpublish: string[] = [];
  let judged = 0;
  let rejected = 0;
  const toHold = new Map<string, Held>();
  let held = 0;
  let after: { dateMs: number; id: string } | undefined;
  const now = Date.now();
  for (;;) {
    const page = await storedItemsPage(db, window, after, PAGE);
    if (!page.length) break;
    // A job waits its turn in the contract's share of the filter pool; a request is refused (429).
    const decisions = await judgeDryRun(db, { contractId, filterId }, loaded, page.map((stored) => stored.item), now, jobId ? 'wait' : 'refuse');
    page.forEach((stored, i) => {
      const result = presentDecision(stored.id, decisions[i]!);
      if (result.accepted || stored.override) return;
      hits.add(result);
      if (result.action === 'hold') {
        held += 1;
        if (stored.state === 'published') toHold.set(stored.id, { set: result.set!, rule: result.rule!, reason: result.reason! });
      } else rejected += 1;
      if (stored.state === 'published') toUnpublish.push(stored.id);
    });
    judged += page.length;
    const last = page.at(-1)!;
    after = { dateMs: last.dateMs, id: last.id };
    await progress(judged, Math.max(total, judged));
    if (page.length < PAGE) break;
  }
  return db.transaction().execute(async (trx) => {
    if (params.dryRun) {
      const outcome = { judged, rejected, held, unpublished: 0, hits: hits.list(), auditId: null, wouldUnpublish: toUnpublish.length };
      if (jobId && !(await finishJob(trx, jobId, outcome))) throw new Error(`job ${jobId} was finished by another runner`);
      return outcome;
    }
    const { before } = await changeStates(trx, contractId, collectionId, toUnpublish, 'unpublished', { onlyFrom: 'published' });
    await holdItems(trx, contractId, collectionId, new Map([...toHold].filter(([id]) => before.has(id))));
    const items = [...before].map(([itemId, was]) => ({ itemId, before: was, after: 'unpublished' }));
    const auditId = items.length
      ? await recordAudit(trx, { contractId, actor: params.actor, resource: 'item', resourceId: collectionId, action: 'apply', collectionId, items })
      : null;
    const outcome = { judged, rejected, held, unpublished: items.length, hits: hits.list(), auditId };
    if (jobId && !(await finishJob(trx, jobId, outcome))) throw new Error(`job ${jobId} was finished by another runner`);
    return outcome;
  });
}
