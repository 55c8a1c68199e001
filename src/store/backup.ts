/**
 * Backup and restore of a SQLite installation (docs/operations.md#backup-and-restore), through
 * SQLite's online backup API (https://www.sqlite.org/backup.html, better-sqlite3's `backup()`):
 * a consistent copy made page by page while the service keeps reading and writing. A step that
 * finds the source changed by another connection starts the copy over; after the first such
 * restart the rest is copied in one step (one read transaction: under WAL the writers go on), so
 * a busy database cannot keep the backup from finishing. The copy holds every transaction
 * committed before its last step began.
 *
 * PostgreSQL installations use pg_dump and pg_restore (docs/operations.md#backup-and-restore).
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { conflictError, validationError, VALIDATION_CODES } from '../errors.ts';
import { isPostgresUrl } from './db.ts';
import type { Progress } from './contract-transfer.ts';

/** The file of a `sqlite:<path>` URL; throws ApiError naming DATABASE_URL for PostgreSQL. */
export function sqlitePath(databaseUrl: string, command: 'backup' | 'restore'): string {
  if (isPostgresUrl(databaseUrl)) {
    const tool = command === 'backup' ? 'pg_dump --format=custom --file=sluice.dump "$DATABASE_URL"' : 'pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" sluice.dump';
    throw validationError([
      { propertyName: 'DATABASE_URL', message: `sluice ${command} copies SQLite databases; on PostgreSQL use ${command === 'backup' ? 'pg_dump' : 'pg_restore'}: ${tool} (docs/operations.md#backup-and-restore)`, code: VALIDATION_CODES.format },
    ]);
  }
  return databaseUrl.slice('sqlite:'.length);
}

/** Copies `source` (an open database) to the file `to`, written beside it and renamed into place; resolves to the pages copied. */
async function copy(source: SqliteDatabase.Database, to: string, progress?: Progress): Promise<number> {
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  let restarted = false;
  let lastRemaining = Infinity;
  try {
    const { totalPages } = await source.backup(partial, {
      progress({ totalPages, remainingPages }) {
        progress?.(totalPages - remainingPages, totalPages);
        // The remaining pages went up: the copy started over (another connection wrote).
        if (remainingPages > lastRemaining) restarted = true;
        lastRemaining = remainingPages;
        return restarted ? 2 ** 30 : Math.max(100, Math.ceil(totalPages / 50));
      },
    });
    renameSync(partial, to);
    return totalPages;
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/**
 * `sluice backup --to <file>`: a consistent copy of the SQLite database at `databaseUrl` while the
 * service runs. Refuses (409 naming `--to`) to overwrite an existing file.
 */
export async function backupSqlite(databaseUrl: string, to: string, progress?: Progress): Promise<{ file: string; pages: number; integrity: string }> {
  const path = sqlitePath(databaseUrl, 'backup');
  if (existsSync(to)) throw conflictError(`${to} exists; give another file.`, '--to', to);
  if (!existsSync(path)) throw validationError([{ propertyName: 'DATABASE_URL', message: `no database at ${path}`, code: VALIDATION_CODES.required }]);
  const source = new SqliteDatabase(path, { fileMustExist: true });
  source.pragma('busy_timeout = 5000');
  let pages: number;
  try {
    pages = await copy(source, to, progress);
  } finally {
    source.close();
  }
  const copyDb = new SqliteDatabase(to, { readonly: true });
  try {
    return { file: to, pages, integrity: String(copyDb.pragma('quick_check', { simple: true })) };
  } finally {
    copyDb.close();
  }
}

/**
 * `sluice restore --from <file> [--force]`: replaces the SQLite database at `databaseUrl` with the
 * backup `from` (checked first: a SQLite file that passes `quick_check` and has Sluice's schema
 * table). Refuses (409 naming `--force`) when the database holds any contract, unless `force`.
 * Stop the service first: it would see its data change under it.
 */
export async function restoreSqlite(databaseUrl: string, from: string, force: boolean, progress?: Progress): Promise<{ file: string; pages: number; replaced: boolean }> {
  const path = sqlitePath(databaseUrl, 'restore');
  if (!existsSync(from)) throw validationError([{ propertyName: '--from', message: `no file ${from}`, propertyValue: from, code: VALIDATION_CODES.required }]);
  let backup: SqliteDatabase.Database;
  try {
    backup = new SqliteDatabase(from, { readonly: true, fileMustExist: true });
    const check = String(backup.pragma('quick_check', { simple: true }));
    if (check !== 'ok') throw new Error(check);
    if (!backup.prepare(`select 1 from sqlite_schema where type = 'table' and name = 'schema_migrations'`).get()) throw new Error('it has no Sluice schema');
  } catch (error) {
    throw validationError([{ propertyName: '--from', message: `${from} is not a Sluice SQLite backup (${(error as Error).message})`, propertyValue: from, code: VALIDATION_CODES.format }]);
  }
  try {
    let replaced = false;
    if (existsSync(path)) {
      const current = new SqliteDatabase(path, { readonly: true });
      try {
        const hasContracts = current.prepare(`select 1 from sqlite_schema where type = 'table' and name = 'contracts'`).get() && current.prepare('select 1 from contracts limit 1').get();
        if (hasContracts && !force) {
          throw conflictError(`The database ${path} holds data; stop the service and give --force to replace it with ${from}.`, '--force');
        }
        replaced = Boolean(hasContracts);
      } finally {
        current.close();
      }
    }
    // Through the backup API into the database file itself: SQLite replaces its pages under its
    // own locks (and its write-ahead log), never leaving a half-copied file.
    const { totalPages } = await backup.backup(path, {
      progress({ totalPages, remainingPages }) {
        progress?.(totalPages - remainingPages, totalPages);
        return Math.max(100, Math.ceil(totalPages / 50));
      },
    });
    return { file: path, pages: totalPages, replaced };
  } finally {
    backup.close();
  }
}
