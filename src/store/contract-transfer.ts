/**
 * Moving one contract between installations (docs/operations.md#export-and-import): `exportContract`
 * writes the contract's whole data as JSON Lines, `importContract` reads such a file into another
 * installation (SQLite or PostgreSQL, either way), ids kept, in one transaction.
 *
 * The file: a header line `{"format": "sluice-export", "version": 1, "contract": {id, slug, name},
 * "schema": <last migration>, "exported": <ISO 8601>}`, then one line per row,
 * `{"table": <name>, "row": {<column>: <value>}}`, table names and columns as the code names them
 * (camelCase, src/store/tables.ts), rows as stored. Tables in `MOVED` order, which is the order of
 * their references (a collection before its items).
 *
 * What moves: the contract, its collections, inputs, filter lists, sets and chains,
 * customizations and their versions, credentials and webhooks (their secrets still sealed with
 * the source installation's key: the file holds no readable secret), items with their
 * de-duplication keys and merged duplicates (an item removed at the source without its content:
 * `portable`), rejections, the audit trail with its items, jobs, blocked authors, and the items'
 * image screening queue.
 * What does not: grants and consumers (people and clients are the installation's: grant them
 * again), tokens and sessions, connect flows under way, pending webhook deliveries and their
 * attempts, the erased items' ids kept an hour for the streams (`erasedItems`, store/erasures.ts),
 * quota counters, rate-limit counters, the Mastodon apps Sluice registered.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { type Kysely, sql, type Transaction } from 'kysely';
import { type ApiError, conflictError, notFoundError, validationError, VALIDATION_CODES } from '../errors.ts';
import { open, seal, type SecretKey } from '../lib/secret-box.ts';
import { inShape } from '../item.ts';
import { findContract } from './contracts.ts';
import { itemBody } from './items/rows.ts';
import { type Db, isPostgres } from './db.ts';
import { MIGRATIONS } from './migrate.ts';
import type { Database, LooseDatabase } from './tables.ts';

export const EXPORT_FORMAT = 'sluice-export';
export const EXPORT_VERSION = 1;

type Scope = 'contract' | 'collection' | 'entry';
interface Moved {
  table: keyof Database & string;
  /** The primary key, in order (pages are read by it). */
  key: string[];
  /** How its rows belong to the contract: its own id, `contractId`, a collection of the contract, an audit entry of the contract. */
  scope: Scope | 'self';
}

/** The tables that move, in the order of their references. */
export const MOVED: Moved[] = [
  { table: 'contracts', key: ['id'], scope: 'self' },
  { table: 'collections', key: ['id'], scope: 'contract' },
  { table: 'filterLists', key: ['id'], scope: 'contract' },
  { table: 'filterSets', key: ['id'], scope: 'contract' },
  { table: 'filterChains', key: ['id'], scope: 'contract' },
  { table: 'customizations', key: ['id'], scope: 'contract' },
  { table: 'customizationVersions', key: ['id'], scope: 'contract' },
  { table: 'credentials', key: ['id'], scope: 'contract' },
  { table: 'webhooks', key: ['id'], scope: 'contract' },
  { table: 'inputs', key: ['id'], scope: 'contract' },
  { table: 'items', key: ['collectionId', 'id'], scope: 'collection' },
  { table: 'itemUrls', key: ['collectionId', 'urlHash'], scope: 'collection' },
  { table: 'itemPrints', key: ['collectionId', 'bandKey', 'dateMs', 'itemId'], scope: 'collection' },
  { table: 'itemDuplicates', key: ['collectionId', 'id'], scope: 'collection' },
  { table: 'rejections', key: ['inputId', 'itemId'], scope: 'contract' },
  { table: 'auditEntries', key: ['id'], scope: 'contract' },
  { table: 'auditItems', key: ['entryId', 'itemId'], scope: 'entry' },
  { table: 'jobs', key: ['id'], scope: 'contract' },
  // Erased authors stay blocked where the contract moves (docs/api.md#erasure).
  { table: 'blockedAuthors', key: ['id'], scope: 'contract' },
  // Items still waiting for image screening are screened where the contract moves (docs/filters.md#image-screening).
  { table: 'imageScreenings', key: ['collectionId', 'itemId'], scope: 'contract' },
];

const BY_NAME = new Map(MOVED.map((moved) => [moved.table, moved]));
/** Tables whose `secret` is sealed with the installation's key (`keyId`). */
const SEALED = new Set(['credentials', 'webhooks']);
const PAGE = 500;

/** The progress of a long command: `done` of `total` rows (total 0 when not known). */
export type Progress = (done: number, total: number) => void;

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The stored row as the file holds it: an item's document as JSON text on both databases (jsonb
 * on PostgreSQL). An item removed at the source (docs/api.md#removed-at-the-source) moves without
 * its content: its document keeps only `id`, `service`, `type` and `date`, enough for the target
 * to know it and never collect it again.
 */
function portable(table: string, row: Record<string, unknown>): Record<string, unknown> {
  if (table === 'items' && row.state === 'removed') {
    const { id, service, type, date } = inShape(itemBody(row.body));
    return { ...row, body: JSON.stringify(inShape({ id, service, type, date })) };
  }
  if (table === 'items' && typeof row.body === 'object' && row.body !== null) return { ...row, body: JSON.stringify(row.body) };
  return row;
}

/** Where the rows of `moved` that belong to the contract are: a query of them (untyped: generic over tables). */
function scoped(db: Kysely<LooseDatabase>, moved: Moved, contractId: string, collectionIds: string[]) {
  const query = db.selectFrom(moved.table).selectAll();
  switch (moved.scope) {
    case 'self':
      return query.where('id', '=', contractId);
    case 'contract':
      return query.where('contractId', '=', contractId);
    case 'collection':
      return query.where('collectionId', 'in', collectionIds.length ? collectionIds : ['']);
    case 'entry':
      return query.where('entryId', 'in', db.selectFrom('auditEntries').select('id').where('contractId', '=', contractId));
  }
}

/**
 * Writes the contract `idOrSlug` as JSON Lines to `write` (one call per line, with its newline;
 * awaited, so a slow file applies back-pressure). Reads each table in pages of its primary key
 * (no offset scans, no table held in memory). Throws ApiError 404 naming `--contract` for an
 * unknown contract. Resolves to the rows written per table.
 */
export async function exportContract(db: Db, idOrSlug: string, write: (line: string) => Promise<void>, progress?: Progress, now = new Date()): Promise<Record<string, number>> {
  const contract = await findContract(db, idOrSlug);
  if (!contract) throw notFoundError(`No contract ${idOrSlug}.`, '--contract', idOrSlug);
  const loose = db as unknown as Kysely<LooseDatabase>;
  const collectionIds = (await db.selectFrom('collections').select('id').where('contractId', '=', contract.id).execute()).map((row) => row.id);
  let total = 0;
  for (const moved of MOVED) {
    const row = await scoped(loose, moved, contract.id, collectionIds).clearSelect().select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
    total += Number((row as { n?: unknown } | undefined)?.n ?? 0);
  }
  const header = { format: EXPORT_FORMAT, version: EXPORT_VERSION, contract: { id: contract.id, slug: contract.slug, name: contract.name }, schema: MIGRATIONS.at(-1), exported: now.toISOString() };
  await write(`${JSON.stringify(header)}\n`);
  const counts: Record<string, number> = {};
  let done = 0;
  progress?.(0, total);
  for (const moved of MOVED) {
    counts[moved.table] = 0;
    let after: unknown[] | undefined;
    for (;;) {
      let query = scoped(loose, moved, contract.id, collectionIds);
      if (after) query = query.where(sql<boolean>`(${sql.join(moved.key.map((k) => sql.ref(k)))}) > (${sql.join(after)})`);
      for (const k of moved.key) query = query.orderBy(k);
      const rows = (await query.limit(PAGE).execute()) as Record<string, unknown>[];
      for (const row of rows) await write(`${JSON.stringify({ table: moved.table, row: portable(moved.table, row) })}\n`);
      counts[moved.table] += rows.length;
      done += rows.length;
      progress?.(done, total);
      if (rows.length < PAGE) break;
      after = moved.key.map((k) => rows.at(-1)![k]);
    }
  }
  return counts;
}

/** The columns of each table of the installation, by their code names (camelCase). */
async function columnsOf(db: Db): Promise<Map<string, Set<string>>> {
  const result = new Map<string, Set<string>>();
  const names = new Map(MOVED.map((moved) => [snake(moved.table), moved.table]));
  if (isPostgres(db)) {
    const { rows } = await sql<{ table: string; column: string }>`
      select table_name as "table", column_name as "column" from information_schema.columns where table_schema = current_schema()`.execute(db.withoutPlugins());
    for (const row of rows) {
      const table = names.get(row.table);
      if (table) (result.get(table) ?? result.set(table, new Set()).get(table)!).add(row.column);
    }
  } else {
    for (const table of await db.withoutPlugins().introspection.getTables()) {
      const name = names.get(table.name);
      if (name) result.set(name, new Set(table.columns.map((c) => c.name)));
    }
  }
  return result;
}

/** A problem with line `line` of the file: 400 naming `--from` and the line. */
function lineError(line: number, message: string, code: number = VALIDATION_CODES.format): ApiError {
  return validationError([{ propertyName: '--from', message: `line ${line}: ${message}`, propertyValue: `line ${line}`, code }]);
}

export interface ImportKeys {
  /** The installation's key: sealed secrets end up sealed with it. */
  target: SecretKey;
  /** The source installation's key, when it is another one (SLUICE_SOURCE_SECRET_KEY). */
  source?: SecretKey;
}

export interface ImportResult {
  contract: { id: string; slug: string; name: string };
  rows: Record<string, number>;
  /** Credentials and webhook secrets re-encrypted from the source key to this installation's. */
  resealed: number;
}

/**
 * Reads an export (`lines`, a readable stream of its text) into the installation, in one
 * transaction: all or nothing. Throws ApiError 400 naming `--from` and the line for a line that is
 * not JSON, not `{table, row}`, names a table that does not move or a column the table lacks,
 * or a row of another contract or collection than the file's; 409 naming the table and id when
 * a record with that id (or the contract's slug) already exists; 400 naming
 * SLUICE_SOURCE_SECRET_KEY when a secret is sealed with a key other than this installation's and
 * the source key is not given. `progress` gets the rows read so far (the total is not known: 0).
 * `lines` must not have been read from yet (no `data` listener: its lines would be lost).
 */
export async function importContract(db: Db, lines: Readable, keys: ImportKeys, progress?: Progress): Promise<ImportResult> {
  const columns = await columnsOf(db);
  return db.transaction().execute(async (trx) => {
    let header: { contract: { id: string; slug: string; name: string } } | undefined;
    const collections = new Set<string>();
    const entries = new Set<string>();
    const rows: Record<string, number> = Object.fromEntries(MOVED.map((moved) => [moved.table, 0]));
    let pending: { table: string; rows: Record<string, unknown>[]; lines: number[] } = { table: '', rows: [], lines: [] };
    let resealed = 0;
    let count = 0;
    let n = 0;

    const flush = async () => {
      if (!pending.rows.length) return;
      await checkConflicts(trx, pending.table, pending.rows, pending.lines);
      const loose = trx as unknown as Kysely<LooseDatabase>;
      await loose.insertInto(pending.table as keyof LooseDatabase).values(pending.rows).execute();
      rows[pending.table] = (rows[pending.table] ?? 0) + pending.rows.length;
      pending = { table: '', rows: [], lines: [] };
    };

    // The reader starts here, right before its lines are consumed: lines read while nothing
    // iterates yet (a PostgreSQL round trip) would be lost, and the iteration would wait for ever.
    const reader = createInterface({ input: lines, crlfDelay: Infinity });
    for await (const text of reader) {
      n++;
      if (!text.trim()) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw lineError(n, `not JSON (${(error as Error).message})`);
      }
      if (!header) {
        header = checkHeader(parsed, n);
        continue;
      }
      const { table, row } = (parsed ?? {}) as { table?: unknown; row?: unknown };
      if (typeof table !== 'string' || typeof row !== 'object' || row === null || Array.isArray(row)) throw lineError(n, 'expected {"table": <name>, "row": {…}}');
      const moved = BY_NAME.get(table as keyof Database & string);
      if (!moved) throw lineError(n, `table ${table} is not one an export holds (${MOVED.map((m) => m.table).join(', ')})`, VALIDATION_CODES.enum);
      const record = { ...(row as Record<string, unknown>) };
      const known = columns.get(table)!;
      for (const column of Object.keys(record)) if (!known.has(snake(column))) throw lineError(n, `table ${table} has no column ${column}`);
      const contractId = header.contract.id;
      if (moved.scope === 'self' && record.id !== contractId) throw lineError(n, `the contract row is not the header's contract ${contractId}`);
      if ('contractId' in record && record.contractId !== contractId) throw lineError(n, `a row of contract ${String(record.contractId)}, not of ${contractId}`);
      if (moved.scope === 'collection' && !collections.has(String(record.collectionId))) throw lineError(n, `collection ${String(record.collectionId)} is not one of the file's collections`);
      if (moved.scope === 'entry' && !entries.has(String(record.entryId))) throw lineError(n, `audit entry ${String(record.entryId)} is not one of the file's entries`);
      if (table === 'collections') collections.add(String(record.id));
      if (table === 'auditEntries') entries.add(String(record.id));
      if (table === 'items' && typeof record.body === 'object' && record.body !== null) record.body = JSON.stringify(record.body);
      if (SEALED.has(table) && record.keyId !== keys.target.id) {
        if (!keys.source || record.keyId !== keys.source.id) {
          throw validationError([
            {
              propertyName: 'SLUICE_SOURCE_SECRET_KEY',
              message: `line ${n}: the ${table === 'credentials' ? 'credential' : 'webhook'} ${String(record.id)} is sealed with key ${String(record.keyId)}, not with this installation's key ${keys.target.id}: set SLUICE_SOURCE_SECRET_KEY to the source installation's key (docs/operations.md#export-and-import)`,
              code: VALIDATION_CODES.required,
            },
          ]);
        }
        try {
          record.secret = seal(keys.target, open(keys.source, String(record.secret)));
        } catch (error) {
          throw lineError(n, `the secret cannot be decrypted with SLUICE_SOURCE_SECRET_KEY (${(error as Error).message})`);
        }
        record.keyId = keys.target.id;
        resealed++;
      }
      if (pending.table !== table || pending.rows.length >= 200) await flush();
      pending.table = table;
      pending.rows.push(record);
      pending.lines.push(n);
      count++;
      if (count % PAGE === 0) progress?.(count, 0);
    }
    await flush();
    if (!header) throw lineError(1, 'the file is empty: expected the export header', VALIDATION_CODES.required);
    if (!rows.contracts) throw lineError(n, 'the file holds no contract row', VALIDATION_CODES.required);
    progress?.(count, count);
    return { contract: header.contract, rows, resealed };
  });
}

function checkHeader(parsed: unknown, n: number): { contract: { id: string; slug: string; name: string } } {
  const header = (parsed ?? {}) as { format?: unknown; version?: unknown; contract?: { id?: unknown; slug?: unknown; name?: unknown }; schema?: unknown };
  if (header.format !== EXPORT_FORMAT) throw lineError(n, `expected the header of a Sluice export ({"format": "${EXPORT_FORMAT}", …})`);
  if (header.version !== EXPORT_VERSION) throw lineError(n, `export version ${String(header.version)} is not supported (this version reads ${EXPORT_VERSION})`);
  if (typeof header.schema !== 'string' || !MIGRATIONS.includes(header.schema)) {
    throw lineError(n, `the export was made by a Sluice whose schema (${String(header.schema)}) this version does not know: upgrade this installation first`);
  }
  const contract = header.contract;
  if (typeof contract?.id !== 'string' || typeof contract.slug !== 'string' || typeof contract.name !== 'string') throw lineError(n, 'the header names no contract {id, slug, name}');
  return { contract: { id: contract.id, slug: contract.slug, name: contract.name } };
}

/** 409 when a row of `rows` has the id of a record the installation already holds (or the contract's slug is taken). */
async function checkConflicts(trx: Transaction<Database>, table: string, rows: Record<string, unknown>[], lines: number[]): Promise<void> {
  const moved = BY_NAME.get(table as keyof Database & string)!;
  const loose = trx as unknown as Kysely<LooseDatabase>;
  if (table === 'contracts') {
    const slug = rows[0]!.slug as string;
    const taken = await loose.selectFrom('contracts').select(['id', 'slug']).where((eb) => eb.or([eb('id', '=', rows[0]!.id), eb('slug', '=', slug)])).executeTakeFirst();
    if (taken) {
      const what = taken.id === rows[0]!.id ? `id ${taken.id}` : `slug ${slug}`;
      throw conflictError(`line ${lines[0]}: this installation already has a contract with the ${what}; nothing was imported.`, '--from', `line ${lines[0]}`);
    }
    return;
  }
  // Rows keyed by a collection or an entry of the file cannot clash (those are new); records with an id of their own can.
  if (moved.key.length !== 1) return;
  const ids = rows.map((row) => row.id as string);
  const clash = await loose.selectFrom(table as keyof LooseDatabase).select('id').where('id', 'in', ids).executeTakeFirst();
  if (clash) {
    const id = String(clash.id);
    const line = lines[ids.indexOf(id)];
    throw conflictError(`line ${line}: this installation already has a row of ${table} with the id ${id}; nothing was imported.`, '--from', `line ${line}`);
  }
}
