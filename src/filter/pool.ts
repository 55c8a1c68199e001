/**
 * Filters run off the event loop (docs/filters.md#bounds): a maintained pool of worker threads
 * (piscina) runs worker.ts, so a costly filter of one tenant never delays the health check, a
 * public read or another tenant's request. The threads are started once and kept (each keeps its
 * compiled filters); tasks wait in their contract's queue when all are busy (Shares, below).
 *
 * Budgets. A task may run `budgetMs` (DRY_RUN_BUDGET_MS for the dry run, POLL_BUDGET_MS for a
 * poll): the worker stops judging after the item that ends past it and returns what it judged
 * (`complete: false`). A single item or a compile that runs HARD_LIMIT_MS past the budget (the
 * worker cannot stop inside one) is cut off: its thread is terminated and replaced, and the
 * judgement is `{decisions: [], complete: false}`. Time spent waiting in the queue does not
 * count (the worker reports when it starts). A task sent again because its worker lacked the
 * filter (see worker.ts) gets a budget of its own.
 *
 * Shares (docs/filters.md#bounds). Every task is one contract's: the tasks wait in per-contract
 * queues served in turns (fair-queue.ts) rather than in piscina's first-in-first-out queue, at
 * most `threads - 1` of one contract run at once (so with 2 threads or more one is left for the
 * others), and at most QUEUED_PER_CONTRACT of one contract's API requests (dry runs, the checks
 * of a set or list being saved: `'refuse'`) wait at once; one more is refused at once with 429
 * RateLimitError and `Retry-After` (RETRY_AFTER_S). A poll's or a job's judging (`'wait'`) always
 * waits its turn: it is never refused, and does not count towards that cap.
 *
 * Errors: a filter that cannot compile rejects with FilterError (as engine.ts `compile`); a
 * refused task rejects with the 429 ApiError (errors.ts `rateLimitError`).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { rateLimitError } from '../errors.ts';
import { type Decision, FilterError, type FilterList, type FilterProblem, type FilterSource } from './engine.ts';
import { FairQueue, type ShareLimits } from './fair-queue.ts';
import { sizeProblem } from './rules.ts';
import type { CheckResult, CheckTask, FilterErrorData, JudgeResult, JudgeTask, ProblemsTask } from './worker.ts';

/** Running time one dry run may spend judging (ms). */
export const DRY_RUN_BUDGET_MS = 5_000;
/** Running time one poll may spend judging its new items (ms). */
export const POLL_BUDGET_MS = 5_000;

/** The governing filter did not judge every new item of a poll or push within POLL_BUDGET_MS (thrown by `collect/ingest.ts`: nothing is stored). */
export class FilterBudgetError extends Error {}

/** How long past its budget a task may run before its thread is terminated (ms). */
const HARD_LIMIT_MS = 1_000;
/** API requests (dry runs, checks of a set or list being saved) of one contract waiting at once; more → 429. */
export const QUEUED_PER_CONTRACT = 4;
/** `Retry-After` of a refused task (s): the longest one task of the contract may still run. */
export const RETRY_AFTER_S = Math.ceil((Math.max(DRY_RUN_BUDGET_MS, POLL_BUDGET_MS) + HARD_LIMIT_MS) / 1000);
/** Keys remembered as sent to the workers (each worker keeps its last 100 compiled filters). */
const MAX_SENT_KEYS = 100;

/** Decisions on the first `decisions.length` items; `complete` when every item was judged. */
export interface Judgement {
  decisions: Decision[];
  complete: boolean;
}

/** What the pool judges: the filter's source and the contract's lists, under a cache key. */
export interface JudgeJob {
  /** The contract whose work it is (its share of the pool). */
  contractId: string;
  /** Equal keys promise the same filter and lists (the `lastModified` signature). */
  key: string;
  filter: FilterSource;
  lists: FilterList[];
  items: object[];
  /** ms since the epoch, for `datediff`. */
  now: number;
}

/** How a task meets its contract's full share: `'refuse'` (an API request: 429 at once) or `'wait'` (a poll, a job). */
export type WhenShareFull = 'refuse' | 'wait';

export interface FilterPool {
  /**
   * Judges `job.items` within `budgetMs` of running, in `job.contractId`'s share; `whenFull`
   * defaults to `'wait'`. Rejects with FilterError, or with the 429 ApiError when refused.
   */
  judge(job: JudgeJob, budgetMs: number, whenFull?: WhenShareFull): Promise<Judgement>;
  /**
   * Compiles the filter off the event loop, in `contractId`'s share (`'refuse'`); the FilterError
   * that stops it, or undefined. Rejects with the 429 ApiError when refused.
   */
  check(contractId: string, filter: FilterSource, lists: FilterList[]): Promise<FilterError | undefined>;
  /**
   * The problems of a list's entries or of a set's rules (with their paths) as they are saved,
   * checked off the event loop (every pattern is compiled) in `contractId`'s share
   * (`'refuse'`); empty when they may be saved. Rejects with the 429 ApiError when refused.
   */
  problems(contractId: string, of: ProblemsTask['of']): Promise<FilterProblem[]>;
  /** The shares the pool keeps (docs/filters.md#bounds). */
  readonly limits: ShareLimits;
  /** Stops the threads. */
  close(): Promise<void>;
}

/**
 * Worker threads: one less than the cores, at least 2 (so that one contract, which may run one
 * less than all, leaves one to the others) and at most 4. They run at a lower CPU priority than
 * the event loop (worker.ts), so a second thread on a 2-core machine does not slow the answers.
 */
function defaultThreads(): number {
  return Math.max(2, Math.min(4, availableParallelism() - 1));
}

/** Starts a pool of `threads` workers. */
export function createFilterPool(threads = defaultThreads()): FilterPool {
  const piscina = new Piscina({
    filename: new URL('./worker.ts', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Infinity,
    resourceLimits: { maxOldGenerationSizeMb: 512 },
  });
  // A task aborted as its answer arrives makes piscina report an unexpected message: harmless.
  piscina.on('error', () => {});
  const started = new Map<number, () => void>();
  piscina.on('message', (message: unknown) => {
    const token = (message as { started?: unknown } | null)?.started;
    if (typeof token === 'number') started.get(token)?.();
  });
  let next = 0;
  // Keys already sent to some worker: later tasks leave the filter and lists out (a list of
  // thousands of patterns is costly to copy per poll); a worker that lacks one asks again.
  const sent = new Set<string>();
  const remember = (key: string) => {
    sent.delete(key);
    sent.add(key);
    if (sent.size > MAX_SENT_KEYS) sent.delete(sent.keys().next().value!);
  };

  const limits: ShareLimits = { slots: threads, runningPerContract: Math.max(1, threads - 1), queuedPerContract: QUEUED_PER_CONTRACT };
  const shares = new FairQueue<() => void>(limits);
  /** Starts the tasks whose turn it is while threads are free (at most `threads` a call). */
  const startNext = () => {
    for (let turn = shares.take(); turn; turn = shares.take()) turn.task();
  };

  /**
   * Runs `task` in `contractId`'s share (fair-queue.ts); rejects with the 429 ApiError when it is
   * refused. `'first'`: a task sent again, ahead of its contract's others, never refused.
   */
  function inShare<T>(contractId: string, whenFull: WhenShareFull | 'first', task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        task()
          .then(resolve, reject)
          .finally(() => {
            shares.finish(contractId);
            startNext();
          });
      };
      if (!shares.push(contractId, start, whenFull)) return reject(rateLimitError(RETRY_AFTER_S));
      startNext();
    });
  }

  /** Runs a task, cutting it off HARD_LIMIT_MS past `budgetMs` of running; undefined when cut off. */
  async function run<T>(task: JudgeTask | CheckTask | ProblemsTask, budgetMs: number): Promise<T | undefined> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    started.set(task.token, () => {
      timer = setTimeout(() => abort.abort(), budgetMs + HARD_LIMIT_MS);
    });
    try {
      return (await piscina.run(task, { signal: abort.signal })) as T;
    } catch (error) {
      if (abort.signal.aborted) return undefined;
      throw error;
    } finally {
      clearTimeout(timer);
      started.delete(task.token);
    }
  }

  return {
    limits,
    async judge(job, budgetMs, whenFull = 'wait') {
      const { contractId, key, filter, lists, items, now } = job;
      const task = (withSource: boolean): JudgeTask => ({ op: 'judge', token: next++, budgetMs, key, items, now, ...(withSource ? { source: { filter, lists } } : {}) });
      let result = await inShare(contractId, whenFull, () => run<JudgeResult>(task(!sent.has(key)), budgetMs));
      if (result && 'missing' in result) result = await inShare(contractId, 'first', () => run<JudgeResult>(task(true), budgetMs));
      remember(key);
      if (!result) return { decisions: [], complete: false };
      if ('error' in result) throw revive(result.error);
      if ('missing' in result) throw new Error('a filter worker lost a filter it was just sent');
      return result;
    },
    async check(contractId, filter, lists) {
      const result = await inShare(contractId, 'refuse', () => run<CheckResult>({ op: 'check', token: next++, filter, lists }, POLL_BUDGET_MS));
      if (!result) {
        return new FilterError('filter', { path: 'rules', message: `compiling takes longer than ${POLL_BUDGET_MS} ms; simplify its patterns`, kind: 'range' });
      }
      return result.error && revive(result.error);
    },
    async problems(contractId, of) {
      const result = await inShare(contractId, 'refuse', () => run<FilterProblem[]>({ op: 'problems', token: next++, of }, POLL_BUDGET_MS));
      return result ?? [sizeProblem('list' in of ? 'entries' : 'rules', `compiling takes longer than ${POLL_BUDGET_MS} ms; simplify the patterns`)];
    },
    close: () => piscina.close(),
  };
}

function revive(data: FilterErrorData): FilterError {
  const { message, setId, ...problem } = data;
  const error = new FilterError('', { ...problem, message }, setId);
  error.message = message;
  return error;
}

let shared: FilterPool | undefined;

/** The process-wide pool, started on first use. */
export function filterPool(): FilterPool {
  return (shared ??= createFilterPool());
}
