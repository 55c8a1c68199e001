/**
 * The search query language of the content read's `search` and the queue read's `text`
 * (docs/api.md#search): parsed here, by our own code, into terms that the store turns into an
 * SQLite FTS5 MATCH expression or a PostgreSQL `to_tsquery` text (`ftsMatch`, `tsqueryText`).
 * Neither output can hold an operator or quote the user typed: every word is reduced to letters,
 * digits and combining marks, then quoted. So no input can make a syntax error or inject an
 * operator; an input that leaves nothing to find is refused (`SearchQueryError`).
 *
 * The language:
 * - words separated by spaces or punctuation: every word must occur (AND), in the title or text;
 * - `"two words"`: a phrase, its words adjacent and in that order (an unclosed quote runs to the end);
 * - `-word`, `-"a phrase"`: items containing it are left out;
 * - `word*`: any word starting with it (at least `MIN_PREFIX` characters);
 * - case and diacritics are ignored (`café` finds `cafe` and `CAFÉ`, and the other way round);
 * - `OR`, `AND`, `NOT`, `NEAR` and any other punctuation are ordinary words or separators.
 *
 * Words are what SQLite's unicode61 tokenizer and PostgreSQL's default parser take as words:
 * runs of letters and digits (Unicode categories L and N, with combining marks M). A word with
 * inner punctuation (`e-mail`, `3.5`) is the phrase of its parts, as both index it.
 */

/** Most terms (words and phrases, excluded ones included) one query may have. */
export const MAX_TERMS = 16;
/** Most words over all terms of one query. */
export const MAX_WORDS = 32;
/** Fewest characters of a prefix (`ab*`): a one-letter prefix would read most of the index. */
export const MIN_PREFIX = 2;

/** A word or phrase: its words (folded: lowercase, no diacritics), the last one a prefix when `prefix`. */
export interface SearchTerm {
  words: string[];
  prefix: boolean;
}

/** A parsed query: terms every item must contain, and terms none may contain. */
export interface SearchQuery {
  include: SearchTerm[];
  exclude: SearchTerm[];
}

/** A query that cannot be searched: `message` says why, for the 400 naming the parameter. */
export class SearchQueryError extends Error {}

/** Letters and digits with their combining marks: what a word is made of. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** A word must have a letter or digit (not only combining marks). */
const HAS_LETTER = /[\p{L}\p{N}]/u;
/** The combining diacritical marks that folding removes (U+0300–U+036F, what NFD splits off Latin, Greek and Cyrillic letters). */
const DIACRITICS = /[\u0300-\u036f]/g;
/** Letters with a stroke, which NFD does not split: folded to their base letter like the others. */
const STROKES: Record<string, string> = { ø: 'o', ł: 'l', đ: 'd', ħ: 'h' };

/**
 * `text` folded as the index folds it: lowercase (Unicode default case mapping), canonical
 * decomposition (NFD) with the combining diacritical marks U+0300–U+036F dropped, then NFC;
 * ø, ł, đ, ħ as o, l, d, h. The PostgreSQL index applies the same steps in SQL (migration
 * 2026-12-06-item-search); SQLite's unicode61 tokenizer with `remove_diacritics 2` does it itself.
 */
export function foldDiacritics(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(DIACRITICS, '')
    .normalize('NFC')
    .replace(/[øłđħ]/g, (c) => STROKES[c]!);
}

/** The words of `text`, folded. */
function wordsOf(text: string): string[] {
  return (foldDiacritics(text).match(WORD) ?? []).filter((word) => HAS_LETTER.test(word));
}

/**
 * Parses `input` (see the module's description). Throws `SearchQueryError` when it leaves no term
 * to find (only punctuation, or only excluded terms), has more than `MAX_TERMS` terms or
 * `MAX_WORDS` words, or a prefix shorter than `MIN_PREFIX`.
 */
export function parseSearch(input: string): SearchQuery {
  const query: SearchQuery = { include: [], exclude: [] };
  let words = 0;
  let i = 0;
  // Bounded: every pass consumes at least one character.
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    let negated = false;
    if (c === '-') {
      negated = true;
      i++;
    }
    let raw: string;
    let prefix = false;
    if (input[i] === '"') {
      const end = input.indexOf('"', i + 1);
      raw = input.slice(i + 1, end < 0 ? input.length : end);
      i = end < 0 ? input.length : end + 1;
      if (input[i] === '*') {
        prefix = true;
        i++;
      }
    } else {
      let end = i;
      while (end < input.length && !/\s/u.test(input[end]!) && !(end > i && input[end] === '"')) end++;
      raw = input.slice(i, end);
      i = end;
      if (raw.endsWith('*')) {
        prefix = true;
        raw = raw.replace(/\*+$/, '');
      }
    }
    const termWords = wordsOf(raw);
    if (!termWords.length) continue;
    if (prefix && [...termWords.at(-1)!].length < MIN_PREFIX) throw new SearchQueryError(`a prefix needs at least ${MIN_PREFIX} characters before *`);
    (negated ? query.exclude : query.include).push({ words: termWords, prefix });
    words += termWords.length;
    if (query.include.length + query.exclude.length > MAX_TERMS) throw new SearchQueryError(`at most ${MAX_TERMS} words or phrases`);
    if (words > MAX_WORDS) throw new SearchQueryError(`at most ${MAX_WORDS} words`);
  }
  if (!query.include.length) throw new SearchQueryError('nothing to search for: give at least one word that is not excluded (-word)');
  return query;
}

/** An FTS5 string (double-quoted, inner quotes doubled), each word after `scope`, with `*` for a prefix. */
function ftsTerm(term: SearchTerm, scope: string): string {
  return `"${term.words.map((word) => scope + word).join(' ').replaceAll('"', '""')}"${term.prefix ? ' *' : ''}`;
}

/**
 * The FTS5 MATCH expression of `query` (https://www.sqlite.org/fts5.html#full_text_query_syntax):
 * `(t1 AND t2) NOT (e1 OR e2)`, each term a quoted string (a phrase when it has several words).
 * With `scope` (`collectionScope`), every word is the word of that collection, as the SQLite
 * index holds it (`scopedWords`); without, the words as written.
 */
export function ftsMatch(query: SearchQuery, scope = ''): string {
  const term = (t: SearchTerm) => ftsTerm(t, scope);
  const include = `(${query.include.map(term).join(' AND ')})`;
  return query.exclude.length ? `${include} NOT (${query.exclude.map(term).join(' OR ')})` : include;
}

/**
 * The letters the SQLite index puts before each word of an item of collection `collectionId`:
 * `c` and the id's letters and digits (ids are 24 hexadecimal digits, lib/ids.ts, so one
 * collection's scope never ends where another's word begins).
 */
export function collectionScope(collectionId: string): string {
  return `c${collectionId.replace(/[^0-9a-zA-Z]/g, '')}`;
}

/**
 * The words of an HTML field of an item of collection `collectionId` as the SQLite index holds
 * them (migration 2026-12-23-item-search-scoped, SQL function `search_words`): the words of
 * `searchText` (runs of letters, digits and marks, as the query's words), each after the
 * collection's scope, separated by spaces; null kept. Every term of the index is then one
 * collection's: a search reads the postings of its collection only, and BM25's document
 * frequencies (which FTS5 counts by reading a word's whole posting list) are the collection's,
 * not the whole index's (docs/operations.md#reads-at-scale). The tokenizer (unicode61
 * remove_diacritics 2) still folds case and diacritics. Frozen as `searchText` is.
 */
export function scopedWords(collectionId: unknown, html: unknown): string | null {
  const text = searchText(html);
  if (text === null) return null;
  const scope = collectionScope(String(collectionId));
  return (text.match(WORD) ?? []).map((word) => scope + word).join(' ');
}

/** A tsquery operand: a quoted lexeme, `:*` for a prefix. */
function tsWord(word: string, prefix: boolean, weights: string): string {
  // Words hold only letters, digits and marks: no quote or backslash to escape; replaced anyway.
  const label = `${prefix ? '*' : ''}${weights}`;
  return `'${word.replace(/['\\]/g, '')}'${label ? `:${label}` : ''}`;
}

function tsTerm(term: SearchTerm, weights: string): string {
  const parts = term.words.map((word, i) => tsWord(word, term.prefix && i === term.words.length - 1, weights));
  return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`;
}

/**
 * The `to_tsquery` text of `query` (https://www.postgresql.org/docs/current/datatype-textsearch.html#DATATYPE-TSQUERY):
 * `t1 & t2 & !e1`, a phrase as `(a <-> b)`, a prefix as `'w':*`; with `weights` (`AB`), each
 * word only matches lexemes of those weights (`'w':AB`, `'w':*AB`). The configuration it is read
 * with stems and drops stop words as for the indexed text.
 */
export function tsqueryText(query: SearchQuery, weights = ''): string {
  const term = (t: SearchTerm) => tsTerm(t, weights);
  return [...query.include.map(term), ...query.exclude.map((t) => `!${term(t)}`)].join(' & ');
}

/** HTML tags and character references, which the index leaves out of an item's words. */
const MARKUP = /<[^>]*>|&#?[a-zA-Z0-9]+;/g;

/**
 * The searchable text of an HTML field (an item's title or text): tags and character references
 * replaced by spaces, null kept. SQLite's index calls it as the SQL function `search_text`
 * (registered by store/db.ts; migration 2026-12-06-item-search); the PostgreSQL index applies the
 * same pattern in SQL. Frozen: a change would make FTS5's 'delete' of rows indexed before miss;
 * it needs a migration that rebuilds the index.
 */
export function searchText(html: unknown): string | null {
  return html == null ? null : String(html).replace(MARKUP, ' ');
}
