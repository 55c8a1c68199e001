/**
 * The image screener (docs/filters.md#image-screening): a pool of worker threads (piscina, as the
 * filter pool, filter/pool.ts) that run worker.ts, one NSFW model per thread, started on first
 * use and kept. Each image is one contract's task:
 *
 * - Shares: tasks wait in per-contract queues served in turns (fair-queue.ts, as the filter
 *   pool): one contract's flood delays another's image by about one image, not by the flood. At
 *   most `threads - 1` of one contract run at once (all of them with one thread).
 * - Back-pressure: at most `queuedPerContract` images of one contract wait at once; one more is
 *   refused at once (`screen` answers `{busy: true}`) and the caller keeps it for a later round
 *   (the screening job's queue is the database, collect/screening.ts).
 * - Time: an image that runs past `timeoutMs` (decode and classification; the model's load on a
 *   new thread counts) has its thread terminated and replaced; the image is `unscreenable`.
 *
 * Errors: none for a bad image (the outcome says `unscreenable` and why); the worker's own
 * failure (a crashed thread) is also answered as `unscreenable`, never thrown.
 */
import { Piscina } from 'piscina';
import type { ImageModeration } from '../../item.ts';
import { FairQueue, type ShareLimits } from '../fair-queue.ts';
import type { ScreenResult, ScreenTask } from './worker.ts';

/** Longest one image may run in its thread (ms): decode, classify, and a first model load. */
export const SCREEN_TIMEOUT_MS = 20_000;
/** Images of one contract waiting for a thread at once; more are refused (`busy`). */
export const SCREEN_QUEUED_PER_CONTRACT = 16;

/** The outcome of one image: its five scores, why it could not be screened, or refused for now. */
export type ScreenOutcome = { moderation: ImageModeration } | { unscreenable: string } | { busy: true };

export interface Screener {
  /** Screens `bytes` in `contractId`'s share (see the module). Never rejects. */
  screen(contractId: string, bytes: Uint8Array): Promise<ScreenOutcome>;
  readonly limits: ShareLimits;
  /** Stops the threads. */
  close(): Promise<void>;
}

export interface ScreenerOptions {
  /** Worker threads, each with its model (default 1: about 100 MB each). */
  threads?: number;
  queuedPerContract?: number;
  timeoutMs?: number;
}

/** Starts a screener; its threads start with the first image. */
export function createScreener(options: ScreenerOptions = {}): Screener {
  const threads = Math.max(1, options.threads ?? 1);
  const timeoutMs = options.timeoutMs ?? SCREEN_TIMEOUT_MS;
  let piscina: Piscina | undefined;
  const started = new Map<number, () => void>();
  const pool = () => {
    if (piscina) return piscina;
    piscina = new Piscina({
      filename: new URL('./worker.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: Infinity,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    piscina.on('error', () => {});
    piscina.on('message', (message: unknown) => {
      const token = (message as { started?: unknown } | null)?.started;
      if (typeof token === 'number') started.get(token)?.();
    });
    return piscina;
  };
  let next = 0;
  const limits: ShareLimits = { slots: threads, runningPerContract: Math.max(1, threads - 1), queuedPerContract: options.queuedPerContract ?? SCREEN_QUEUED_PER_CONTRACT };
  const shares = new FairQueue<() => void>(limits);
  const startNext = () => {
    for (let turn = shares.take(); turn; turn = shares.take()) turn.task();
  };

  async function run(bytes: Uint8Array): Promise<ScreenOutcome> {
    const abort = new AbortController();
    const token = next++;
    let timer: NodeJS.Timeout | undefined;
    started.set(token, () => {
      timer = setTimeout(() => abort.abort(), timeoutMs);
    });
    try {
      const task: ScreenTask = { token, bytes };
      return (await pool().run(task, { signal: abort.signal })) as ScreenResult;
    } catch {
      return { unscreenable: abort.signal.aborted ? `took longer than ${timeoutMs} ms` : 'the screening thread failed' };
    } finally {
      clearTimeout(timer);
      started.delete(token);
    }
  }

  return {
    limits,
    screen(contractId, bytes) {
      return new Promise<ScreenOutcome>((resolve) => {
        const start = () => {
          run(bytes)
            .then(resolve)
            .finally(() => {
              shares.finish(contractId);
              startNext();
            });
        };
        if (!shares.push(contractId, start, 'refuse')) return resolve({ busy: true });
        startNext();
      });
    },
    async close() {
      await piscina?.close();
      piscina = undefined;
    },
  };
}
