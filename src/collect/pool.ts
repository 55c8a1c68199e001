/**
 * The pool of polls both collectors run (docs/services.md#polling): in-process on SQLite
 * (`scheduler.ts`) and per process on PostgreSQL (`postgres-collector.ts`); they differ only in how they take
 * due inputs from the database (on PostgreSQL only those whose politeness key has a free slot
 * across the installation) and give them back.
 *
 * - At most `concurrency` polls under way; when one ends, the next waiting input starts at once,
 *   without waiting for the tick, so a process makes about `concurrency` ÷ (mean poll time)
 *   polls a second, however short or long its polls are.
 * - Due inputs are taken from the database in batches, as many as there are slots that no
 *   waiting input can fill, into a waiting list: again once a quarter of the slots are free
 *   (not one query per freed slot) while the last batch was full (more are due), else at the
 *   next `fill()` (the collector's tick). A process never takes more than it has slots for.
 * - Politeness: at most `hostConcurrency` polls of one politeness key (a remote host, or an API
 *   account: lib/politeness.ts) under way at once in the process. On SQLite an input whose host
 *   is busy waits in the list while inputs of other hosts start, and batches keep coming while
 *   nothing else can start, so a thousand due feeds on one host do not hold up the others (the
 *   list holds at most `MAX_WAITING` inputs); on PostgreSQL the take itself leaves such inputs
 *   in the database, for any process (`postgres-collector.ts`). The fetcher bounds the requests
 *   themselves per origin (`fetch.ts`), which also covers redirects and API calls to other hosts.
 * - An input taken but not started within `maxWaitMs` (a busy host) is dropped from the list and
 *   handed to `release`: it is still due and is taken again.
 * - When a poll ends, `finished` runs first (on PostgreSQL: the claim's host slot is freed), then
 *   the next waiting input starts; if the last take left due inputs for want of a free slot of
 *   their key (`held`), the pool takes again at once, as the slot just freed may be theirs.
 * - `stop()`: nothing new starts, the inputs waiting are handed to `release`, the polls under way
 *   finish.
 */
import type { FastifyBaseLogger } from 'fastify';
import { politenessKey } from '../lib/politeness.ts';
import type { InputRow } from '../store/tables.ts';

/** Most inputs waiting for a free slot or host in one process. */
export const MAX_WAITING = 5000;

export interface PollPoolOptions {
  /** Polls under way at once (COLLECT_CONCURRENCY). */
  concurrency: number;
  /** Polls of one politeness key under way at once (COLLECT_HOST_CONCURRENCY). */
  hostConcurrency: number;
  /**
   * Up to `limit` due inputs, soonest due first, none of `exclude` (the ids waiting or under way);
   * `held`: due inputs were left because their politeness key had no free slot.
   */
  take(limit: number, exclude: string[]): Promise<{ inputs: InputRow[]; held: boolean }>;
  /** Polls one input; a rejection is logged. */
  poll(input: InputRow): Promise<unknown>;
  /** Runs when a poll has ended, before anything else starts (e.g. to free its claim's host slot); a rejection is logged. */
  finished?(input: InputRow): Promise<void>;
  /** An input waiting longer than this (ms) is dropped; default: never. */
  maxWaitMs?: number;
  /** Receives the inputs dropped, and those still waiting when the pool stops (e.g. to give their claims back). */
  release?(inputs: InputRow[]): Promise<void>;
  log?: FastifyBaseLogger;
}

export interface PollPool {
  /** Takes due inputs now (unless a take is under way: then joins it) and starts what it can. */
  fill(): Promise<void>;
  /** Resolves when no poll is under way and no take is (the inputs due now are all polled). */
  idle(): Promise<void>;
  /** Starts nothing more, releases the waiting inputs, resolves when the polls under way end. */
  stop(): Promise<void>;
}

interface Waiting {
  input: InputRow;
  host: string;
  /** When it was taken, ms. */
  since: number;
}

/** Starts the pool of the module's rules; it takes its first inputs at the first `fill()`. */
export function startPollPool(options: PollPoolOptions): PollPool {
  const { concurrency, hostConcurrency, take, log } = options;
  const waiting: Waiting[] = [];
  const running = new Map<string, Promise<void>>();
  const busy = new Map<string, number>();
  let filling: Promise<void> | undefined;
  /** The last take returned a full batch: more inputs are probably due. */
  let more = false;
  /** The last take left due inputs whose politeness key had no free slot. */
  let held = false;
  /** A poll ended during a take: take again after it. */
  let again = false;
  let stopping = false;

  const hostFree = (host: string) => (busy.get(host) ?? 0) < hostConcurrency;
  const startable = () => waiting.reduce((n, w) => (hostFree(w.host) ? n + 1 : n), 0);

  function launch(entry: Waiting): void {
    const { input, host } = entry;
    busy.set(host, (busy.get(host) ?? 0) + 1);
    const poll = options
      .poll(input)
      .then(
        () => undefined,
        (err: unknown) => log?.error({ err, input: input.id }, 'poll failed'),
      )
      .then(() => options.finished?.(input))
      .catch((err: unknown) => log?.error({ err, input: input.id }, 'ending a poll failed'))
      .finally(() => {
        running.delete(input.id);
        const left = busy.get(host)! - 1;
        if (left > 0) busy.set(host, left);
        else busy.delete(host);
        start();
        if (held && unfilled() >= 1) {
          if (filling) again = true;
          else void fill();
        } else if (more && unfilled() >= Math.max(1, Math.floor(concurrency / 4))) void fill();
      });
    running.set(input.id, poll);
  }

  /** Starts waiting inputs while slots are free, skipping those whose host is busy. */
  function start(): void {
    if (stopping) return;
    const now = Date.now();
    const dropped: InputRow[] = [];
    for (let i = 0; i < waiting.length && running.size < concurrency; ) {
      const entry = waiting[i]!;
      if (options.maxWaitMs !== undefined && now - entry.since > options.maxWaitMs) {
        dropped.push(waiting.splice(i, 1)[0]!.input);
      } else if (!hostFree(entry.host)) {
        i++;
      } else {
        waiting.splice(i, 1);
        launch(entry);
      }
    }
    if (dropped.length && options.release) void options.release(dropped).catch((err: unknown) => log?.error({ err }, 'releasing inputs failed'));
  }

  /** Slots that no waiting input can fill now. */
  const unfilled = () => concurrency - running.size - startable();

  async function takeBatches(): Promise<void> {
    // Bounded: each round either adds a full batch (the list is capped) or ends. Only as many as
    // there are slots to fill: a process does not hoard due inputs (claims) it cannot start.
    while (!stopping && unfilled() > 0 && waiting.length < MAX_WAITING) {
      const limit = Math.min(unfilled(), MAX_WAITING - waiting.length);
      const exclude = [...running.keys(), ...waiting.map((w) => w.input.id)];
      const taken = await take(limit, exclude);
      const now = Date.now();
      for (const input of taken.inputs) waiting.push({ input, host: politenessKey(input), since: now });
      more = taken.inputs.length === limit;
      held = taken.held;
      start();
      if (!more) break;
    }
  }

  /** Takes batches, again (a bounded number of times) while polls ended during the take. */
  async function takeRounds(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      again = false;
      await takeBatches();
      if (!again || stopping) break;
    }
  }

  function fill(): Promise<void> {
    return (filling ??= takeRounds()
      .catch((err: unknown) => log?.error({ err }, 'taking due inputs failed'))
      .finally(() => (filling = undefined)));
  }

  return {
    fill,
    async idle() {
      for (let rounds = 0; (filling || running.size) && rounds < 1_000_000; rounds++) await Promise.all([filling, ...running.values()]);
    },
    async stop() {
      stopping = true;
      await filling;
      const left = waiting.splice(0).map((w) => w.input);
      if (left.length && options.release) await options.release(left).catch((err: unknown) => log?.error({ err }, 'releasing inputs failed'));
      await Promise.all(running.values());
    },
  };
}
