/**
 * Full-text search of items (issue 36, docs/api.md#search): an index of every item's title and
 * text, kept in step with `items` by the database itself, built here for the items that exist.
 * Frozen: a later change is a new migration. Idempotent: what exists is left as it is.
 *
 * SQLite: `items_search`, an FTS5 table with external content (https://www.sqlite.org/fts5.html#external_content_tables):
 * it stores only the index; its content is the view `items_search_source` (the title and text of
 * each item's document, HTML tags and entities removed by `search_text`, a function store/db.ts
 * registers on every connection), keyed by the items' rowid. Tokenizer unicode61 with
 * `remove_diacritics 2`: words are folded to lowercase without diacritics. Triggers on `items`
 * keep it in step: a new row is indexed, a deleted one removed (its old values given to the
 * 'delete' command, as FTS5 requires), an update that changes the title, text or collection re-indexed. They
 * fire on every write, whichever code made it (collection, edits at the source, splits,
 * retention, deletes cascading from a collection).
 *
 * PostgreSQL: `items.search`, a stored generated `tsvector` (title weighted A, text B) read with
 * the text search configuration of the item's `language` (`CONFIGS`; `simple`, no stemming,
 * for any other or none), and the GIN index `items_search`. Diacritics are folded in the
 * expression itself (`fold`: NFD, combining marks U+0300–U+036F removed, ø ł đ ħ → o l d h) rather
 * than with the `unaccent` extension: unaccent's function is not IMMUTABLE (a generated column
 * cannot call it without a wrapper), and installing an extension needs rights a deployment may not
 * grant. `normalize` needs a UTF8 database.
 *
 * Both also index the item's collection as one more word, `c<collection id>` (SQLite: column
 * `collection`; PostgreSQL: a lexeme of weight D, the title and text being A and B), which a
 * search requires beside its own words (store/item-search.ts): the index then yields the matches
 * of one collection, not of every collection to be filtered afterwards (at 1 000 000 items in 100
 * collections, a hundredth of the rows). User words never match it (column or weight filter).
 *
 * Adding the column rewrites the items table once (PostgreSQL computes it for every row).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

/** ISO 639-1 code → PostgreSQL text search configuration (those PostgreSQL 15 ships). Also in store/item-search.ts. */
export const CONFIGS: Record<string, string> = {
  ar: 'arabic', hy: 'armenian', eu: 'basque', ca: 'catalan', da: 'danish', nl: 'dutch', en: 'english', fi: 'finnish',
  fr: 'french', de: 'german', el: 'greek', hi: 'hindi', hu: 'hungarian', id: 'indonesian', ga: 'irish', it: 'italian',
  lt: 'lithuanian', ne: 'nepali', no: 'norwegian', nb: 'norwegian', nn: 'norwegian', pt: 'portuguese', ro: 'romanian',
  ru: 'russian', sr: 'serbian', es: 'spanish', sv: 'swedish', ta: 'tamil', tr: 'turkish', yi: 'yiddish',
};

/** SQL folding diacritics out of text expression `x` (the same steps as lib/search-query.ts `foldDiacritics`, which the query side uses). */
const fold = (x: string) => `normalize(regexp_replace(normalize(translate(lower(${x}), 'øłđħ', 'oldh'), NFD), U&'[\\0300-\\036F]', '', 'g'), NFC)`;
/** SQL of the words of an HTML field: tags and character references become spaces. */
const words = (field: string) => fold(`regexp_replace(coalesce(body ->> '${field}', ''), '<[^>]*>|&#?[a-zA-Z0-9]+;', ' ', 'g')`);
const config = `case language ${Object.entries(CONFIGS).map(([code, name]) => `when '${code}' then '${name}'::regconfig`).join(' ')} else 'simple'::regconfig end`;
const VECTOR = `setweight(to_tsvector(${config}, ${words('title')}), 'A') || setweight(to_tsvector(${config}, ${words('text')}), 'B') || setweight(array_to_tsvector(array['c' || collection_id]), 'D')`;

/** The SQLite title and text of an item row `row` (`new`, `old`, or the table) as indexed. */
const title = (row: string) => `search_text(json_extract(${row}.body, '$.title'))`;
const text = (row: string) => `search_text(json_extract(${row}.body, '$.text'))`;
const collection = (row: string) => `'c' || ${row}.collection_id`;
const fields = (row: string) => `${title(row)}, ${text(row)}, ${collection(row)}`;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'items' and column_name = 'search'`.execute(db);
    if (!rows.length) await sql.raw(`alter table items add column search tsvector generated always as (${VECTOR}) stored`).execute(db);
    await sql`create index if not exists items_search on items using gin (search)`.execute(db);
    return;
  }
  await sql.raw(`create view if not exists items_search_source as select rowid as item_row, ${title('items')} as title, ${text('items')} as text, ${collection('items')} as collection from items`).execute(db);
  const { rows } = await sql`select 1 from sqlite_master where name = 'items_search'`.execute(db);
  if (rows.length) return;
  await sql`create virtual table items_search using fts5(title, text, collection, content = 'items_search_source', content_rowid = 'item_row', tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
  await sql.raw(`create trigger items_search_insert after insert on items begin
    insert into items_search (rowid, title, text, collection) values (new.rowid, ${fields('new')}); end`).execute(db);
  await sql.raw(`create trigger items_search_delete after delete on items begin
    insert into items_search (items_search, rowid, title, text, collection) values ('delete', old.rowid, ${fields('old')}); end`).execute(db);
  await sql.raw(`create trigger items_search_update after update of body, collection_id on items
    when json_extract(old.body, '$.title') is not json_extract(new.body, '$.title') or json_extract(old.body, '$.text') is not json_extract(new.body, '$.text')
      or old.collection_id is not new.collection_id begin
    insert into items_search (items_search, rowid, title, text, collection) values ('delete', old.rowid, ${fields('old')});
    insert into items_search (rowid, title, text, collection) values (new.rowid, ${fields('new')}); end`).execute(db);
  await sql`insert into items_search (items_search) values ('rebuild')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop index if exists items_search`.execute(db);
    await sql`alter table items drop column if exists search`.execute(db);
    return;
  }
  for (const trigger of ['items_search_insert', 'items_search_delete', 'items_search_update']) await sql.raw(`drop trigger if exists ${trigger}`).execute(db);
  await sql`drop table if exists items_search`.execute(db);
  await sql`drop view if exists items_search_source`.execute(db);
}
