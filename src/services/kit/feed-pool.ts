/**
 * Feeds are read off the event loop (docs/services.md#rss, "Entries per poll"): a pool of worker
 * threads (piscina) runs `feed-worker.ts`, so a large or costly document of one tenant never
 * delays the health check, a public read or another tenant's request. Every path that reads a
 * feed from a source (the `rss` connector, Flickr's public feed, WebSub notifications) reads it
 * through `readFeed`.
 *
 * Bounds per document: at most `maxEntries` entries (MAX_FEED_ENTRIES, the newest: `feed-entries.ts`);
 * at most READ_LIMIT_MS of running time and READ_HEAP_MB of heap. A task past either is cut off
 * (its thread is terminated and replaced when next needed) and the read fails with a SourceError
 * saying so: the poll records it as `lastError` and backs off, other inputs go on. Threads exit
 * after IDLE_MS without work, so the memory of a large read is given back.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { SourceError } from '../connector.ts';
import type { FeedResult } from './feed.ts';
import { MAX_FEED_ENTRIES } from './feed-entries.ts';
import type { FeedAnswer, FeedTask } from './feed-worker.ts';

/** Running time one document may take to read (ms). */
export const READ_LIMIT_MS = 10_000;
/** Heap one reading thread may use (MB, V8's old generation). */
export const READ_HEAP_MB = 256;
/** A thread without work for this long exits (ms). */
const IDLE_MS = 60_000;

let piscina: Piscina | undefined;
const started = new Map<number, () => void>();
let next = 0;

/** The process's pool, started on first use: at most 2 threads (one less than the cores, at least 1). */
function pool(): Piscina {
  if (piscina) return piscina;
  piscina = new Piscina({
    filename: new URL('./feed-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(2, availableParallelism() - 1)),
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: READ_HEAP_MB },
  });
  // A task aborted as its answer arrives makes piscina report an unexpected message: harmless.
  piscina.on('error', () => {});
  piscina.on('message', (message: unknown) => {
    const token = (message as { started?: unknown } | null)?.started;
    if (typeof token === 'number') started.get(token)?.();
  });
  return piscina;
}

/** The bounds of one read; the defaults are the module's (tests set smaller ones). */
export interface FeedBounds {
  /** Entries kept (MAX_FEED_ENTRIES). */
  maxEntries: number;
  /** Running time (ms, READ_LIMIT_MS). */
  limitMs: number;
}

/**
 * `parseFeed` (`feed.ts`) of the document in a worker thread, within `bounds` (see the module).
 *
 * @throws SourceError `not a feed: …` as `parseFeed` does; `not read: …` when the document takes
 *   longer than `bounds.limitMs` or more than READ_HEAP_MB to read.
 */
export async function readFeed(
  body: Uint8Array, contentType: string | undefined, feedUrl: string, now: Date, bounds: Partial<FeedBounds> = {},
): Promise<FeedResult> {
  const { maxEntries = MAX_FEED_ENTRIES, limitMs = READ_LIMIT_MS } = bounds;
  const task: FeedTask = { token: next++, body, contentType, feedUrl, now: now.getTime(), maxEntries };
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  started.set(task.token, () => {
    timer = setTimeout(() => abort.abort(), limitMs);
  });
  let answer: FeedAnswer;
  try {
    answer = (await pool().run(task, { signal: abort.signal })) as FeedAnswer;
  } catch (error) {
    if (abort.signal.aborted) throw new SourceError(`not read: the feed took longer than ${limitMs} ms to read`);
    if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new SourceError(`not read: the feed needs more than ${READ_HEAP_MB} MB of memory to read`, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    started.delete(task.token);
  }
  if ('error' in answer) throw new SourceError(answer.error);
  return answer;
}
