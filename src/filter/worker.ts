/**
 * The filter worker: runs in a worker thread of the pool (pool.ts), never on the event loop.
 * A task is plain data (a filter's source, the contract's lists, items); the worker compiles the
 * filter, keeping compiled filters by the caller's key (the `lastModified` signature of the
 * filter, its sets and the contract's lists), and returns plain decisions. A task may leave the
 * source out when the pool has sent that key before: a worker that does not hold it answers
 * `{missing: true}` and the pool sends the task again with it.
 *
 * - `judge`: decides on the items in order, `evaluate` of engine.ts at the task's `now`, and
 *   stops after the first item that ends past `budgetMs` of running: `decisions` then holds the
 *   items judged so far and `complete` is false.
 * - `check`: compiles the filter and reports why it cannot be used (FilterError as data), or
 *   nothing.
 * - `problems`: the problems of a list's entries or a set's rules as they are saved
 *   (`entryProblems`, `setRuleProblems` of rules.ts), which compile every pattern.
 * A filter that cannot compile gives `{error}` (FilterError's data), never a throw. The worker
 * posts `{started: token}` to the pool as it starts a task, so the pool's hard limit counts
 * running time, not time spent waiting in the queue.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { compile, type CompiledFilter, type Decision, evaluate, FilterError, type FilterList, type FilterProblem, type FilterSource, type Rule } from './engine.ts';
import { entryProblems, type ListType, setRuleProblems } from './rules.ts';

/** The nice value of a filter worker thread (0 = normal, 19 = lowest). */
const WORKER_NICE = 10;

export interface JudgeTask {
  op: 'judge';
  token: number;
  /** Cache key: equal keys promise the same filter and lists. */
  key: string;
  /** The filter and lists; left out when the pool expects the worker to hold `key` already. */
  source?: { filter: FilterSource; lists: FilterList[] };
  items: object[];
  /** ms since the epoch, for `datediff`. */
  now: number;
  budgetMs: number;
}

export interface CheckTask {
  op: 'check';
  token: number;
  filter: FilterSource;
  lists: FilterList[];
}

export interface ProblemsTask {
  op: 'problems';
  token: number;
  /** A list's entries, or a set's rules and preCondition each with its path (`rules[2]`). */
  of: { list: { type: ListType; entries: string[] } } | { set: [Rule, string][] };
}

/** A FilterError as plain data (structured clone drops class and own fields of errors). */
export interface FilterErrorData {
  message: string;
  path: string;
  value: unknown;
  position: number | undefined;
  reason: string | undefined;
  kind: FilterError['kind'];
  setId: string | undefined;
}

/** `missing`: the task came without `source` and this worker does not hold `key`: send it again with it. */
export type JudgeResult = { decisions: Decision[]; complete: boolean } | { error: FilterErrorData } | { missing: true };
export type CheckResult = { error?: FilterErrorData };

// Filters yield the CPU to the event loop: on Linux a thread's nice value is its own, so this
// lowers the priority of this worker thread only (setpriority(2), "NOTES": per-thread nice).
try {
  setPriority(WORKER_NICE);
} catch {
  // not permitted on this platform: the thread keeps the process's priority
}

/** Compiled filters (or why they cannot compile) by key, most recently used last. */
const compiled = new Map<string, CompiledFilter | FilterErrorData>();
const MAX_COMPILED = 100;

function compiledFor(key: string, source: JudgeTask['source']): CompiledFilter | FilterErrorData | undefined {
  let entry = compiled.get(key);
  if (entry === undefined) {
    if (!source) return undefined;
    entry = compileOrError(source.filter, source.lists);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  }
  compiled.delete(key);
  compiled.set(key, entry);
  return entry;
}

function compileOrError(filter: FilterSource, lists: FilterList[]): CompiledFilter | FilterErrorData {
  try {
    return compile(filter, lists);
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    const { message, path, value, position, reason, kind, setId } = error;
    return { message, path, value, position, reason, kind, setId };
  }
}

/** Runs one task (piscina's default export). */
export default function run(task: JudgeTask | CheckTask | ProblemsTask): JudgeResult | CheckResult | FilterProblem[] {
  parentPort?.postMessage({ started: task.token });
  if (task.op === 'problems') return 'list' in task.of ? entryProblems(task.of.list.type, task.of.list.entries) : setRuleProblems(task.of.set);
  if (task.op === 'check') {
    const result = compileOrError(task.filter, task.lists);
    return 'sets' in result ? {} : { error: result };
  }
  const start = performance.now();
  const filter = compiledFor(task.key, task.source);
  if (!filter) return { missing: true };
  if (!('sets' in filter)) return { error: filter };
  const decisions: Decision[] = [];
  for (const item of task.items) {
    decisions.push(evaluate(filter, item, task.now));
    if (performance.now() - start > task.budgetMs) break;
  }
  return { decisions, complete: decisions.length === task.items.length };
}
