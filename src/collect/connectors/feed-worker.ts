/**
 * The feed worker: runs in a worker thread of the feed pool (`feed-pool.ts`), never on the event
 * loop. A task is plain data (the document's bytes, its `Content-Type`, URL, the poll's time
 * and the entry bound); the answer is `parseFeed`'s result (`feed.ts`), or the message of the
 * SourceError that refused the document (structured clone keeps no class). The worker posts
 * `{started: token}` as it starts a task, so the pool's deadline counts running time, not time
 * spent waiting in the queue.
 */
import { parentPort } from 'node:worker_threads';
import { SourceError } from '../connector.ts';
import { type FeedResult, parseFeed } from './feed.ts';

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
