/**
 * The search query language (docs/api.md#search): table tests of the parser and of the FTS5 and
 * tsquery texts it makes, and every hostile input run through a real FTS5 MATCH (in memory): a
 * result or a `SearchQueryError`, never a syntax error.
 */
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { collectionScope, foldDiacritics, ftsMatch, parseSearch, scopedWords, SearchQueryError, searchText, tsqueryText } from './search-query.ts';

describe('parseSearch', () => {
  it.each([
    ['harbour festival', 'harbour festival', '("harbour" AND "festival")', "'harbour' & 'festival'"],
    ['  Harbour   FESTIVAL ', 'harbour festival', '("harbour" AND "festival")', "'harbour' & 'festival'"],
    ['"harbour festival" boats', '[harbour festival] boats', '("harbour festival" AND "boats")', "('harbour' <-> 'festival') & 'boats'"],
    ['harbour -council', 'harbour -council', '("harbour") NOT ("council")', "'harbour' & !'council'"],
    ['harbour -"city council" -vote', 'harbour -[city council] -vote', '("harbour") NOT ("city council" OR "vote")', "'harbour' & !('city' <-> 'council') & !'vote'"],
    ['harb*', 'harb*', '("harb" *)', "'harb':*"],
    ['"fresh fi"*', '[fresh fi]*', '("fresh fi" *)', "('fresh' <-> 'fi':*)"],
    ['café CAFÉ Ærø', 'cafe cafe æro', '("cafe" AND "cafe" AND "æro")', "'cafe' & 'cafe' & 'æro'"],
    ['e-mail', '[e mail]', '("e mail")', "('e' <-> 'mail')"],
    ['harbour OR festival', 'harbour or festival', '("harbour" AND "or" AND "festival")', "'harbour' & 'or' & 'festival'"],
    // Punctuation inside a term joins its words into a phrase, as the index reads `near(harbour`.
    ['NEAR(harbour festival)', '[near harbour] festival', '("near harbour" AND "festival")', "('near' <-> 'harbour') & 'festival'"],
    ['"unclosed phrase', '[unclosed phrase]', '("unclosed phrase")', "('unclosed' <-> 'phrase')"],
    ['a"b c"', 'a [b c]', '("a" AND "b c")', "'a' & ('b' <-> 'c')"],
    ["it's", '[it s]', '("it s")', "('it' <-> 's')"],
    ['- harbour -', 'harbour', '("harbour")', "'harbour'"],
    ['中文 привет', '中文 привет', '("中文" AND "привет")', "'中文' & 'привет'"],
  ])('%j → %s', (input, terms, fts, tsquery) => {
    const query = parseSearch(input);
    const show = (t: { words: string[]; prefix: boolean }) => (t.words.length > 1 ? `[${t.words.join(' ')}]` : t.words[0]!) + (t.prefix ? '*' : '');
    expect([...query.include.map(show), ...query.exclude.map((t) => `-${show(t)}`)].join(' ')).toBe(terms);
    expect(ftsMatch(query)).toBe(fts);
    expect(tsqueryText(query)).toBe(tsquery);
  });

  it.each([['"'], ['*'], ['-'], ['""'], ['-harbour'], ['-"a b"'], ['!!!'], ['h*'], ['é*'], ['\u0301'], ['x '.repeat(17)], [`"${'w '.repeat(33)}"`]])('%j → SearchQueryError', (input) => {
    expect(() => parseSearch(input)).toThrow(SearchQueryError);
  });

  it('gives FTS5 only valid MATCH expressions, whatever the input', () => {
    const sqlite = new SqliteDatabase(':memory:');
    sqlite.exec("create virtual table t using fts5(title, text, tokenize = 'unicode61 remove_diacritics 2'); insert into t values ('Harbour festival', 'a café by the quay')");
    const select = sqlite.prepare('select rowid from t where t match ?');
    const inputs = ['"', '*', '-', 'NEAR(', 'NEAR(a b', 'a OR b', 'AND', 'NOT x', '^a', 'title:a', 'a:*', '{title text}: a', "'a'", '(a', 'a)', '"a" + "b"', 'a\u0000b', '🙂 a', '\u0301a', 'ꙮ', '0', '½ a', 'x '.repeat(16)];
    for (let i = 0; i < 200; i++) inputs.push(Array.from({ length: 12 }, (_, k) => '"*-()^:{}+ aé中\u0301'[(i * 7 + k * 13) % 18]).join(''));
    let parsed = 0;
    for (const input of inputs) {
      let match: string;
      try {
        match = ftsMatch(parseSearch(input));
      } catch (error) {
        expect(error).toBeInstanceOf(SearchQueryError);
        continue;
      }
      parsed++;
      expect(() => select.all(match), `${JSON.stringify(input)} → ${match}`).not.toThrow();
    }
    expect(parsed).toBeGreaterThan(50);
    expect(select.all(ftsMatch(parseSearch('CAFÉ quay')))).toEqual([{ rowid: 1 }]);
    sqlite.close();
  });
});

describe('foldDiacritics and searchText', () => {
  it.each([
    ['Café', 'cafe'],
    ['ÉCOLE', 'ecole'],
    ['Straße', 'straße'],
    ['Søren Łódź Đakovo', 'soren lodz dakovo'],
    ['naïve São Paulo', 'naive sao paulo'],
    ['Ελληνικά', 'ελληνικα'],
    ['हिन्दी', 'हिन्दी'],
  ])('%s → %s', (text, folded) => expect(foldDiacritics(text)).toBe(folded));

  it.each([
    ['<p>Boats and <b>music</b></p>', ' Boats and  music  '],
    ['<a href="https://x.example/harbour">link</a>', ' link '],
    ['fish &amp; chips&#8217;', 'fish   chips '],
    [null, null],
  ])('%j → %j', (html, text) => expect(searchText(html)).toBe(text));
});

describe('scopedWords and ftsMatch in a scope (the SQLite index, migration 2026-12-23-item-search-scoped)', () => {
  const id = '65a1b2c3d4e5f60718293a4b';
  it.each([
    ['<p>Café <b>e-mail</b></p>', `c${id}Café c${id}e c${id}mail`],
    ['fish &amp; chips', `c${id}fish c${id}chips`],
    ['', ''],
    [null, null],
  ])('%j → %j', (html, words) => expect(scopedWords(id, html)).toBe(words));

  it('puts every word of every term, excluded ones too, in the scope; a word found in the index as FTS5 folds it', () => {
    expect(collectionScope(id)).toBe(`c${id}`);
    const scope = collectionScope(id);
    expect(ftsMatch(parseSearch('café "e-mail" -"city hall" harb*'), scope)).toBe(`("${scope}cafe" AND "${scope}e ${scope}mail" AND "${scope}harb" *) NOT ("${scope}city ${scope}hall")`);
    const sqlite = new SqliteDatabase(':memory:');
    sqlite.exec("create virtual table t using fts5(title, text, tokenize = 'unicode61 remove_diacritics 2')");
    sqlite.prepare('insert into t values (?, ?)').run(scopedWords(id, 'Le CAFÉ du port'), scopedWords(id, 'an e-mail from the harbour'));
    sqlite.prepare('insert into t values (?, ?)').run(scopedWords('65a1b2c3d4e5f60718293a4c', 'Le café du port'), null);
    const select = sqlite.prepare('select rowid from t where t match ?').pluck();
    expect(select.all(ftsMatch(parseSearch('cafe "e-mail" harb*'), scope))).toEqual([1]);
    expect(select.all(ftsMatch(parseSearch('café'), collectionScope('65a1b2c3d4e5f60718293a4c')))).toEqual([2]);
  });
});
