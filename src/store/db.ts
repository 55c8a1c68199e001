/**
 * Opens the database named by `DATABASE_URL` (decisions §1) as a Kysely instance. SQLite
 * (better-sqlite3) is the embedded default; its file's folder is created when missing.
 * PostgreSQL arrives with the multi-machine release: a `postgres://` URL is refused for now.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { CamelCasePlugin, Kysely, SqliteDialect } from 'kysely';
import type { Database } from './tables.ts';

export type Db = Kysely<Database>;

/** Opens the database; throws when the URL's scheme is not supported yet. */
export function openDb(databaseUrl: string): Db {
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new Error('Only sqlite: databases are supported by this version (PostgreSQL comes later).');
  }
  const path = databaseUrl.slice('sqlite:'.length);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), plugins: [new CamelCasePlugin()] });
}
