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
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), plugins: [new CamelCasePlugin()] });
}

/**
 * Kysely prepares a statement for every query; each holds native memory until garbage
 * collected, which under load grew the server past 1 GB (bench/content.ts). Reusing prepared
 * statements by SQL text (at most 500) saves that memory and the preparing. Safe because
 * better-sqlite3 runs one statement at a time and Kysely's driver serializes queries.
 */
function withStatementCache(sqlite: SqliteDatabase.Database) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text);
      } else {
        statement = sqlite.prepare(text);
        if (statements.size >= 500) statements.delete(statements.keys().next().value!);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}
