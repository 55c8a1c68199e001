/**
 * The checkpoint thread of store/checkpointer.ts: holds one connection per SQLite file that the
 * process has open and, every `intervalMs`, copies what the write-ahead log holds into the
 * database file (`PRAGMA wal_checkpoint(PASSIVE)`: never waits for, nor blocks, a reader or the
 * writer; SQLite, "Write-Ahead Logging", §Checkpointing). A stronger mode would hold the write
 * lock while it waits for readers, and a transaction that has read and then writes gets
 * SQLITE_BUSY at once instead of waiting (SQLite, "sqlite3_busy_handler": deadlock avoidance), so
 * bounding the log is left to the writer's own checkpoint (checkpointer.ts).
 *
 * Messages (from store/checkpointer.ts): `{op: 'open', path, ack}` and `{op: 'close', path, ack}`;
 * the thread answers each by writing into the shared Int32Array `ack` (1 done; 2 the file could
 * not be opened here) and waking its waiter, so a database closed by the process is closed here
 * before the close returns (the last connection to close checkpoints the log and removes it). A
 * file that fails to open or to checkpoint is left to the next interval; nothing here throws.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

export interface CheckpointSettings {
  intervalMs: number;
}

export type CheckpointMessage = { op: 'open' | 'close'; path: string; ack: Int32Array };

const settings = workerData as CheckpointSettings;
const files = new Map<string, { database: SqliteDatabase.Database; users: number }>();

/** Answers a message: 1 done, 2 the file could not be opened here. */
function answer(ack: Int32Array, outcome: 1 | 2 = 1): void {
  Atomics.store(ack, 0, outcome);
  Atomics.notify(ack, 0);
}

function checkpoint(database: SqliteDatabase.Database): void {
  try {
    database.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or the file is gone: the next interval tries again, or the file is closed meanwhile.
  }
}

parentPort!.on('message', (message: CheckpointMessage) => {
  const file = files.get(message.path);
  if (message.op === 'open') {
    if (file) file.users++;
    else {
      try {
        const database = new SqliteDatabase(message.path, { fileMustExist: true });
        files.set(message.path, { database, users: 1 });
      } catch {
        // Not a file this thread can open: the connection keeps SQLite's own checkpoints (checkpointer.ts).
        answer(message.ack, 2);
        return;
      }
    }
  } else if (file && --file.users === 0) {
    files.delete(message.path);
    try {
      file.database.close();
    } catch {
      // Already closed.
    }
  }
  answer(message.ack);
});

setInterval(() => {
  for (const { database } of files.values()) checkpoint(database);
}, settings.intervalMs);
