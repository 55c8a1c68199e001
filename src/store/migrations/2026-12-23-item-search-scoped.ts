/**
 * The SQLite full-text index with every word in its collection's scope (issue 36: a two-word
 * search at 1 000 000 items within 10 ms). Migration 2026-12-06-item-search indexed each item's
 * words as written plus its collection as one more word: a search then read the whole index's
 * postings of its words, and `bm25()` counted each word's documents over the whole index (FTS5
 * reads a phrase's entire posting list for it), tens of milliseconds for common words whatever
 * the few matches of the collection. Here `items_search` holds `search_words(collection_id,
 * field)` (lib/search-query.ts `scopedWords`, registered by store/db.ts): each word after
 * `c<collection id>`, so a term is one collection's and a search reads that collection's postings
 * only (store/item-search.ts, store/related.ts). The `collection` column goes.
 *
 * Same table name, same triggers (insert, delete with the old values, update of title, text or
 * collection), same tokenizer (`unicode61 remove_diacritics 2`); rebuilt from the items once.
 * PostgreSQL is unchanged. Frozen; idempotent: an index already scoped is left as it is.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';
import { down as dropUnscoped, up as createUnscoped } from './2026-12-06-item-search.ts';

const title = (row: string) => `search_words(${row}.collection_id, json_extract(${row}.body, '$.title'))`;
const text = (row: string) => `search_words(${row}.collection_id, json_extract(${row}.body, '$.text'))`;
const fields = (row: string) => `${title(row)}, ${text(row)}`;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where name = 'items_search_source'`.execute(db);
  if (rows[0]?.sql.includes('search_words')) return;
  await dropUnscoped(db);
  await sql.raw(`create view items_search_source as select rowid as item_row, ${title('items')} as title, ${text('items')} as text from items`).execute(db);
  await sql`create virtual table items_search using fts5(title, text, content = 'items_search_source', content_rowid = 'item_row', tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
  await sql.raw(`create trigger items_search_insert after insert on items begin
    insert into items_search (rowid, title, text) values (new.rowid, ${fields('new')}); end`).execute(db);
  await sql.raw(`create trigger items_search_delete after delete on items begin
    insert into items_search (items_search, rowid, title, text) values ('delete', old.rowid, ${fields('old')}); end`).execute(db);
  await sql.raw(`create trigger items_search_update after update of body, collection_id on items
    when json_extract(old.body, '$.title') is not json_extract(new.body, '$.title') or json_extract(old.body, '$.text') is not json_extract(new.body, '$.text')
      or old.collection_id is not new.collection_id begin
    insert into items_search (items_search, rowid, title, text) values ('delete', old.rowid, ${fields('old')});
    insert into items_search (rowid, title, text) values (new.rowid, ${fields('new')}); end`).execute(db);
  await sql`insert into items_search (items_search) values ('rebuild')`.execute(db);
}

/** Back to the index of migration 2026-12-06-item-search. */
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await dropUnscoped(db);
  await createUnscoped(db);
}
