/**
 * Fair shares of the filter pool between contracts (docs/filters.md#bounds): the order in which
 * the pool (pool.ts) starts the tasks waiting for its worker threads. Pure logic, no timers.
 *
 * - Each contract has its own first-in-first-out queue. When a slot frees, the contracts with
 *   tasks waiting take turns, one task per turn: the one with the fewest tasks running goes
 *   first, then the one served least recently (a contract new to the pool, or back after it had
 *   nothing waiting or running, before any served), then the one that waited first. So one
 *   contract's backlog delays another's task by about one task, not by the whole backlog.
 * - At most `slots` tasks run at once (the threads), and at most `runningPerContract` of one
 *   contract, so a contract with work waiting finds a thread even while another has a backlog
 *   (with 2 threads or more, `runningPerContract` < `slots`).
 * - At most `queuedPerContract` tasks of one contract that may be refused (`'refuse'`: an API
 *   request) wait at once: one more is refused (`push` answers false) and the caller answers 429.
 *   Tasks that wait whatever the load (`'wait'`: a poll, a job) are never refused and do not
 *   count; `'first'` (a task sent again, already admitted once) goes to the head of its queue.
 *
 * Written here rather than taken from a library: p-queue and piscina queue first-in-first-out
 * with priorities, not per key; this is the part of tenant isolation that must be exact.
 */

/** How a task meets a full share: refused at once, waiting its turn, or ahead of its contract's others. */
export type WhenFull = 'refuse' | 'wait' | 'first';

export interface ShareLimits {
  /** Tasks running at once (worker threads); at least 1. */
  slots: number;
  /** Tasks of one contract running at once; at least 1. */
  runningPerContract: number;
  /** Refusable tasks of one contract waiting at once; more are refused. */
  queuedPerContract: number;
}

interface Waiting<T> {
  task: T;
  refusable: boolean;
}

interface Share<T> {
  waiting: Waiting<T>[];
  running: number;
  /** Refusable tasks among `waiting`. */
  refusable: number;
  /** The turn it was last served (0: not yet). */
  served: number;
}

/** The tasks waiting for the pool, by contract; `T` is whatever the caller starts. */
export class FairQueue<T> {
  readonly limits: ShareLimits;
  /** Every contract with tasks waiting or running, in the order it came. */
  readonly #shares = new Map<string, Share<T>>();
  #running = 0;
  #turn = 0;

  constructor(limits: ShareLimits) {
    this.limits = limits;
  }

  /** Queues `task` of `contractId`; false (nothing queued) when refusable and its share is full. */
  push(contractId: string, task: T, whenFull: WhenFull): boolean {
    let share = this.#shares.get(contractId);
    const refusable = whenFull === 'refuse';
    if (refusable && (share?.refusable ?? 0) >= this.limits.queuedPerContract) return false;
    if (!share) this.#shares.set(contractId, (share = { waiting: [], running: 0, refusable: 0, served: 0 }));
    if (whenFull === 'first') share.waiting.unshift({ task, refusable });
    else share.waiting.push({ task, refusable });
    if (refusable) share.refusable += 1;
    return true;
  }

  /**
   * The next task to start (counted as running until `finish`), or undefined when every slot is
   * taken or no contract with tasks waiting is under its running cap. Whose turn: see the module.
   */
  take(): { contractId: string; task: T } | undefined {
    if (this.#running >= this.limits.slots) return undefined;
    let next: [string, Share<T>] | undefined;
    for (const entry of this.#shares) {
      const share = entry[1];
      if (!share.waiting.length || share.running >= this.limits.runningPerContract) continue;
      if (!next || share.running < next[1].running || (share.running === next[1].running && share.served < next[1].served)) next = entry;
    }
    if (!next) return undefined;
    const [contractId, share] = next;
    const { task, refusable } = share.waiting.shift()!;
    if (refusable) share.refusable -= 1;
    share.running += 1;
    share.served = ++this.#turn;
    this.#running += 1;
    return { contractId, task };
  }

  /** A task of `contractId` returned by `take` has ended. */
  finish(contractId: string): void {
    const share = this.#shares.get(contractId);
    if (!share || share.running === 0) throw new Error(`no task of ${contractId} is running`);
    share.running -= 1;
    this.#running -= 1;
    if (share.running === 0 && !share.waiting.length) this.#shares.delete(contractId);
  }

  /** Tasks waiting and running of `contractId` (for tests and metrics). */
  of(contractId: string): { waiting: number; running: number } {
    const share = this.#shares.get(contractId);
    return { waiting: share?.waiting.length ?? 0, running: share?.running ?? 0 };
  }
}
