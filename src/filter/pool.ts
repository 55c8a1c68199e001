/**
 * Filters run off the event loop (docs/filters.md#bounds): a maintained pool of worker threads
 * (piscina) runs worker.ts, so a costly filter of one tenant never delays the health check, a
 * public read or another tenant's request. The threads are started once and kept (each keeps its
 * compiled filters); tasks wait in the pool's queue when all are busy.
 *
 * Budgets. A task may run `budgetMs` (DRY_RUN_BUDGET_MS for the dry run, POLL_BUDGET_MS for a
 * poll): the worker stops judging after the item that ends past it and returns what it judged
 * (`complete: false`). A single item or a compile that runs HARD_LIMIT_MS past the budget (the
 * worker cannot stop inside one) is cut off: its thread is terminated and replaced, and the
 * judgement is `{decisions: [], complete: false}`. Time spent waiting in the queue does not
 * count (the worker reports when it starts). A task sent again because its worker lacked the
 * filter (see worker.ts) gets a budget of its own.
 *
 * Errors: a filter that cannot compile rejects with FilterError (as engine.ts `compile`).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type Decision, FilterError, type FilterList, type FilterProblem, type FilterSource } from './engine.ts';
import { sizeProblem } from './rules.ts';
import type { CheckResult, CheckTask, FilterErrorData, JudgeResult, JudgeTask, ProblemsTask } from './worker.ts';

/** Running time one dry run may spend judging (ms). */
export const DRY_RUN_BUDGET_MS = 5_000;
/** Running time one poll may spend judging its new items (ms). */
export const POLL_BUDGET_MS = 5_000;
/** How long past its budget a task may run before its thread is terminated (ms). */
const HARD_LIMIT_MS = 1_000;
/** Keys remembered as sent to the workers (each worker keeps its last 100 compiled filters). */
const MAX_SENT_KEYS = 100;

/** Decisions on the first `decisions.length` items; `complete` when every item was judged. */
export interface Judgement {
  decisions: Decision[];
  complete: boolean;
}

/** What the pool judges: the filter's source and the contract's lists, under a cache key. */
export interface JudgeJob {
  /** Equal keys promise the same filter and lists (the `lastModified` signature). */
  key: string;
  filter: FilterSource;
  lists: FilterList[];
  items: object[];
  /** ms since the epoch, for `datediff`. */
  now: number;
}

export interface FilterPool {
  /** Judges `job.items` within `budgetMs` of running. Rejects with FilterError. */
  judge(job: JudgeJob, budgetMs: number): Promise<Judgement>;
  /** Compiles the filter off the event loop; the FilterError that stops it, or undefined. */
  check(filter: FilterSource, lists: FilterList[]): Promise<FilterError | undefined>;
  /**
   * The problems of a list's entries or of a set's rules (with their paths) as they are saved,
   * checked off the event loop (every pattern is compiled); empty when they may be saved.
   */
  problems(of: ProblemsTask['of']): Promise<FilterProblem[]>;
  /** Stops the threads. */
  close(): Promise<void>;
}

/** Worker threads: one less than the cores, at least 1 and at most 4. */
function defaultThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
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
    async judge(job, budgetMs) {
      const { key, filter, lists, items, now } = job;
      const task = (withSource: boolean): JudgeTask => ({ op: 'judge', token: next++, budgetMs, key, items, now, ...(withSource ? { source: { filter, lists } } : {}) });
      let result = await run<JudgeResult>(task(!sent.has(key)), budgetMs);
      if (result && 'missing' in result) result = await run<JudgeResult>(task(true), budgetMs);
      remember(key);
      if (!result) return { decisions: [], complete: false };
      if ('error' in result) throw revive(result.error);
      if ('missing' in result) throw new Error('a filter worker lost a filter it was just sent');
      return result;
    },
    async check(filter, lists) {
      const result = await run<CheckResult>({ op: 'check', token: next++, filter, lists }, POLL_BUDGET_MS);
      if (!result) {
        return new FilterError('filter', { path: 'rules', message: `compiling takes longer than ${POLL_BUDGET_MS} ms; simplify its patterns`, kind: 'range' });
      }
      return result.error && revive(result.error);
    },
    async problems(of) {
      const result = await run<FilterProblem[]>({ op: 'problems', token: next++, of }, POLL_BUDGET_MS);
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
