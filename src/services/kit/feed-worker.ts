/**
 * The feed worker: runs in a worker thread of the feed pool (`feed-pool.ts`), never on the event
 * loop. A task is plain data (the document's bytes, its `Content-Type`, URL, the poll's time
 * and the entry bound); the answer is `parseFeed`'s result (`feed.ts`), or the message of the
 * SourceError that refused the document (structured clone keeps no class). The worker posts
 * `{started: token}` as it starts a task, so the pool's deadline counts running time, not time
 * spent waiting in the queue. The thread runs at a lower priority (nice 10) than the event loop's.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { SourceError } from '../connector.ts';
import { type FeedResult, parseFeed } from './feed.ts';

/** The nice value of a feed worker thread (0 = normal, 19 = lowest): the event loop's thread goes first. */
const WORKER_NICE = 10;

// On Linux, setPriority(0 = this thread's id) lowers the priority of this worker thread only
// (setpriority(2), "NOTES": per-thread nice), as the filter workers do (filter/worker.ts).
try {
  setPriority(WORKER_NICE);
} catch {
  // not permitted on this platform: the thread keeps the process's priority
}

/** One document to read. */
export interface FeedTask {
  token: number;
  body: Uint8Array;
  contentType: string | undefined;
  feedUrl: string;
  /** The poll's time, ms since the epoch. */
  now: number;
  maxEntries: number;
}

/** The items, or why the document is not a feed (a SourceError's message). */
export type FeedAnswer = FeedResult | { error: string };

/** Reads one document (piscina calls the default export). Throws only for a fault of ours. */
export default function read(task: FeedTask): FeedAnswer {
  parentPort?.postMessage({ started: task.token });
  try {
    return parseFeed(task.body, task.contentType, task.feedUrl, new Date(task.now), task.maxEntries);
  } catch (error) {
    if (error instanceof SourceError) return { error: error.message };
    throw error;
  }
}
