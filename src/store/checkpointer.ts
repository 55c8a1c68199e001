/**
 * Checkpoints of SQLite's write-ahead log off the event loop (docs/operations.md#sqlite-checkpoints).
 *
 * By default the connection that commits the 1 000th page of the log copies the log into the
 * database file and syncs it, inside that commit: at a million items most of a collector's time
 * in the database went there (bench:dedupe, bench:collect), waiting on the disk with the event
 * loop stopped. Instead, each file-backed database the process opens is registered with one
 * thread per process (checkpoint-worker.ts) that checkpoints it every `CHECKPOINT_INTERVAL_MS`,
 * and the process's own connection checkpoints only past `WRITER_CHECKPOINT_PAGES` pages of log.
 * The log starts over whenever a write transaction begins with every frame checkpointed and no
 * reader in it; a writer that never pauses long enough for that has it start over through its own
 * checkpoint (of the few frames the thread has not copied yet), so the log stays under about
 * 64 MiB, and `journal_size_limit` truncates the file when it starts over.
 *
 * Registering and closing wait (at most `ACK_MS`) for the thread's answer, so a database closed
 * here is closed by the thread too when `close` returns. Should the thread fail to start, fail to
 * open the file, or stop, the connections fall back to SQLite's own checkpoints.
 */
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import type { CheckpointMessage, CheckpointSettings } from './checkpoint-worker.ts';

/** How often the thread checkpoints (ms). */
export const CHECKPOINT_INTERVAL_MS = 50;
/** Pages of log (of 4 KiB: 64 MiB) past which the writer checkpoints itself. */
export const WRITER_CHECKPOINT_PAGES = 16_384;
/** The size the log file is truncated to when it restarts (bytes). */
const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;
/** SQLite's default `wal_autocheckpoint` (pages), restored when the thread is gone. */
const SQLITE_AUTOCHECKPOINT = 1000;
/** How long registering or closing waits for the thread (ms). */
const ACK_MS = 5000;

const settings: CheckpointSettings = { intervalMs: CHECKPOINT_INTERVAL_MS };
let worker: Worker | undefined;
/** The connections whose checkpoints the thread makes. */
const registered = new Set<SqliteDatabase.Database>();

function fallBack(): void {
  worker = undefined;
  for (const database of registered) if (database.open) database.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
  registered.clear();
}

function thread(): Worker {
  if (!worker) {
    const started = new Worker(new URL('./checkpoint-worker.ts', import.meta.url), { workerData: settings });
    started.unref();
    started.on('error', fallBack);
    started.on('exit', () => {
      if (worker === started) fallBack();
    });
    worker = started;
  }
  return worker;
}

/** Sends a message and waits for its answer: 1 done, 2 refused, 0 no answer within ACK_MS. */
function ask(op: CheckpointMessage['op'], path: string): number {
  const ack = new Int32Array(new SharedArrayBuffer(4));
  thread().postMessage({ op, path, ack } satisfies CheckpointMessage);
  Atomics.wait(ack, 0, 0, ACK_MS);
  return Atomics.load(ack, 0);
}

/**
 * Moves the checkpoints of `database` (a connection to the file at `path`, in WAL mode) to the
 * checkpoint thread; returns what to call just before closing the connection. An in-memory
 * database is left as it is.
 */
export function checkpointInBackground(database: SqliteDatabase.Database, path: string): () => void {
  if (path === ':memory:' || path === '') return () => {};
  const file = resolve(path);
  const opened = ask('open', file);
  if (opened !== 1) {
    // No answer in time: should the thread open the file later, it lets go of it again.
    if (opened === 0) worker?.postMessage({ op: 'close', path: file, ack: new Int32Array(new SharedArrayBuffer(4)) } satisfies CheckpointMessage);
    return () => {};
  }
  database.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  database.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  registered.add(database);
  return () => {
    if (!registered.delete(database)) return;
    if (worker) ask('close', file);
  };
}
