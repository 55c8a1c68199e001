/**
 * Opens the database named by `DATABASE_URL` (docs/configuration.md#database) as a Kysely instance:
 * SQLite (better-sqlite3) is the embedded default, its file's folder created when missing;
 * `postgres://…` (or `postgresql://…`) opens PostgreSQL (15 or newer) through a `pg` pool, so that
 * several processes on several machines share one state.
 *
 * Everything dialect-specific lives here and in `store/`: the rest of the code sees one
 * `Kysely<Database>` and gets the same JavaScript values from both databases. In particular
 * PostgreSQL's `bigint` (ms times, counts) comes back as a JavaScript number, not a string, as
 * SQLite's integers do (safe: ms times and row counts stay far below 2^53).
 *
 * A PostgreSQL URL may choose the schema with libpq's `options` parameter, e.g.
 * `postgres://u:p@host/db?options=-c%20search_path%3Dsluice` (the tests give each test its own
 * schema this way); the default is the role's search path (`public`).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { CamelCasePlugin, type Compilable, type CompiledQuery, createQueryId, type DatabaseIntrospector, Kysely, PostgresAdapter, PostgresDialect, PostgresIntrospector, sql, SqliteDialect, type TableMetadata, type Transaction } from 'kysely';
import pg from 'pg';
import { trackPgPool, trackSqliteFile } from '../lib/metrics.ts';
import { distanceMeters } from '../lib/geo.ts';
import { scopedWords, searchText } from '../lib/search-query.ts';
import { nearRests } from '../lib/simhash.ts';
import { politenessKey } from '../lib/politeness.ts';
import { checkpointInBackground } from './checkpointer.ts';
import type { Database } from './tables.ts';

export type Db = Kysely<Database>;

/** Connections per process to PostgreSQL (each HTTP request or poll holds one at most briefly). */
export const PG_POOL_SIZE = 10;

/** Whether a `DATABASE_URL` names PostgreSQL. */
export function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}

/** Whether this Kysely instance talks to PostgreSQL (else SQLite). */
export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** PostgreSQL's type ids whose text form `pg` leaves as strings: int8 (bigint, count(*)) and numeric. */
const NUMERIC_TYPES = new Set([20, 1700]);

/** `pg`'s type parsers for our pool only (the global ones stay untouched for pg-boss). */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (NUMERIC_TYPES.has(oid) && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/**
 * Kysely's PostgreSQL introspector lists the tables of every schema of the database, calling
 * `pg_get_serial_sequence` on each: a schema dropped at that moment by another client (another
 * installation, or a test's own schema) makes the listing fail with "schema … does not exist".
 * Sluice, and Kysely's Migrator, only ask about tables of the connection's current schema, so the
 * introspector lists those alone (names; columns are not needed and not read).
 */
class OwnSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }
  getSchemas() {
    return new PostgresIntrospector(this.#db).getSchemas();
  }
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select n.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v')`.execute(this.#db);
    return rows.map((row) => ({ schema: row.schema, name: row.name, isView: row.kind === 'v', isForeign: false, columns: [] }));
  }
}

class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}

/** How SQLite's write-ahead log is checkpointed: by the committing connection (SQLite's default), or by a thread (store/checkpointer.ts). */
export type Checkpoints = 'inline' | 'thread';

/**
 * Opens the database; throws when the URL's scheme is not supported. `checkpoints` (SQLite only):
 * `thread` for a process that writes much (the collector: docs/operations.md#sqlite-checkpoints),
 * else SQLite's own.
 */
export function openDb(databaseUrl: string, options: { checkpoints?: Checkpoints } = {}): Db {
  // Nested keys stay as stored: jsonb documents (items' body on PostgreSQL) keep their own names.
  const plugins = [new CamelCasePlugin({ maintainNestedObjectKeys: true })];
  if (isPostgresUrl(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: PG_POOL_SIZE, types: pgTypes, application_name: 'sluice' });
    // An idle connection that the server drops must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    trackPgPool(pool);
    return new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }), plugins });
  }
  if (!databaseUrl.startsWith('sqlite:')) throw new Error('DATABASE_URL must be sqlite:<path> or postgres://…');
  const path = databaseUrl.slice('sqlite:'.length);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  trackSqliteFile(sqlite, path);
  const stopCheckpoints = options.checkpoints === 'thread' ? checkpointInBackground(sqlite, path) : () => {};
  // The near check of de-duplication lookups (store/items/dedupe.ts `nearCandidates`): one call per
  // probed row costs a third of the same check written as SQL bit arithmetic, which SQLite
  // evaluates without sharing subexpressions (bench:dedupe).
  sqlite.function('near_rests', { deterministic: true }, (a, b) => (nearRests(Number(a), Number(b)) ? 1 : 0));
  // The exact check of a `location` read (store/items/read-sql.ts `whereSql`): one call per row of the
  // bounding box costs less than the haversine formula written in SQL, a dozen SQL function calls
  // (bench:content, the queue with every filter).
  sqlite.function('distance_m', { deterministic: true }, (latitude, longitude, fromLatitude, fromLongitude) =>
    distanceMeters({ latitude: Number(latitude), longitude: Number(longitude) }, { latitude: Number(fromLatitude), longitude: Number(fromLongitude) }),
  );
  // The politeness key of an input (lib/politeness.ts), for the claims of due inputs (store/inputs.ts
  // `claimDueInputs`); PostgreSQL has the same rule in SQL.
  sqlite.function('politeness_key', { deterministic: true }, (service, input, contractId, credentialId) =>
    politenessKey({ service: String(service), input: String(input), contractId: String(contractId), credentialId: credentialId === null ? null : String(credentialId) }),
  );
  // The words of an item's title and text for the full-text index's triggers (migration 2026-12-06-item-search).
  sqlite.function('search_text', { deterministic: true }, (html) => searchText(html));
  // The same words, each in its collection's scope (migration 2026-12-23-item-search-scoped).
  sqlite.function('search_words', { deterministic: true }, (collectionId, html) => scopedWords(collectionId, html));
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, stopCheckpoints) }), plugins });
}

/**
 * Kysely prepares a statement for every query; each holds native memory until garbage
 * collected, which under load grew the server past 1 GB (bench/content.ts). Reusing prepared
 * statements by SQL text (at most 200) saves that memory and the preparing. Safe because
 * better-sqlite3 runs one statement at a time and Kysely's driver serializes queries.
 * `beforeClose` runs as the connection closes (the checkpoint thread lets go of the file first).
 */
function withStatementCache(sqlite: SqliteDatabase.Database, beforeClose: () => void) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => {
      beforeClose();
      sqlite.close();
    },
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text);
      } else {
        statement = sqlite.prepare(text);
        if (statements.size >= 200) statements.delete(statements.keys().next().value!);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

/**
 * A one-row read built and compiled once per dialect, then run with new values. Kysely builds a
 * query on every call (an operation tree, the plugins' transforms, the SQL text); for the lookups
 * every token-bearing request makes (token, consumer, contract, grant, collection) that cost more
 * than SQLite's own work: prepared, they took the queue read with every filter, on
 * bench:content's database of 1 000 000 items, from about 1 600 to 1 950 requests/s
 * (docs/operations.md#reads-at-scale).
 *
 * `build` is called once per dialect, with stand-ins for its values; each must reach the query as
 * a bound parameter unchanged (a `where` operand, not a name nor something computed from it).
 * Throws at that first call when a stand-in is not among the compiled parameters. The returned
 * function resolves to the first row, or undefined.
 */
export function preparedLookup<A extends string[], R>(build: (db: Db, ...values: A) => Compilable<R>): (db: Db, ...values: A) => Promise<R | undefined> {
  const compiled = new Map<boolean, { query: CompiledQuery<R>; slots: number[] }>();
  return async (db, ...values) => {
    const postgres = isPostgres(db);
    let prepared = compiled.get(postgres);
    if (!prepared) {
      const standIns = values.map((_, i) => `\u0000stand-in ${i}`) as A;
      const query = build(db, ...standIns).compile();
      const slots = query.parameters.map((parameter) => standIns.indexOf(parameter as string));
      if (standIns.some((_, i) => !slots.includes(i))) throw new Error(`preparedLookup: a value does not reach ${query.sql} as a parameter`);
      compiled.set(postgres, (prepared = { query, slots }));
    }
    const { query, slots } = prepared;
    const parameters = slots.map((slot, i) => (slot < 0 ? query.parameters[i] : values[slot]));
    const next: CompiledQuery<R> = { ...query, parameters, queryId: createQueryId() };
    return (await db.executeQuery(next)).rows[0];
  };
}

/** The PostgreSQL schema unqualified names resolve to (first of the search path); undefined on SQLite. */
export async function currentSchema<DB>(db: Kysely<DB>): Promise<string | undefined> {
  if (!isPostgres(db)) return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}

/**
 * pg-boss's schema beside Sluice's: `pgboss` next to `public`, `<schema>_pgboss` next to any
 * other schema (so that Sluice installations in separate schemas of one database never share
 * jobs). Shared by the collector's polls and the management API's jobs.
 */
export function bossSchema(schema: string | undefined): string {
  return !schema || schema === 'public' ? 'pgboss' : `${schema}_pgboss`;
}

/**
 * Runs `work` while holding a database-wide lock named by `key`, so that processes starting at
 * once against one PostgreSQL do it one after the other (schema migration, first-start
 * bootstrap). On SQLite, where one process owns the file, it just runs `work`.
 */
export async function withStartupLock<DB, T>(db: Kysely<DB>, key: string, work: () => Promise<T>): Promise<T> {
  if (!isPostgres(db)) return work();
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(hashtext(${key}))`.execute(conn);
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn);
    }
  });
}

/** Whether `error` is a unique (or primary key) constraint violation, on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || code === '23505');
}

/** PostgreSQL's "try again" errors: serialization failure and deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Runs `work` in one SERIALIZABLE transaction, retried (up to `attempts` times) when PostgreSQL
 * aborts it for a conflict with a concurrent one. For read-then-write changes whose reads must
 * still hold at commit across processes (a free slug, a state to move from, a bulk change judged
 * on what it read). SQLite transactions are serializable anyway (one writer at a time).
 * Single-statement changes (ON CONFLICT inserts, conditional updates, `x = x + n` counters) are
 * safe under the default READ COMMITTED and need no such transaction.
 */
export async function serializable<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().setIsolationLevel('serializable').execute(work);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= attempts || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
    }
  }
}
