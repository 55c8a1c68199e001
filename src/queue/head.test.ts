import { describe, expect, it } from 'vitest';
import { random } from '../../bench/random.ts';
import type { HeadRow, ItemQuery, Page } from '../store/items/read-sql.ts';
import { HEAD_SIZE, headOf, headServes, pageFromHead } from './head.ts';

const MIN = 60_000;
const NOW = 1_800_000_000_000;

/** `n` published items, newest first as the head's statement reads them (date, then id, descending); many equal dates. */
function collection(n: number, rnd: () => number): HeadRow[] {
  const rows = Array.from({ length: n }, (_, k) => ({
    collectionId: 'c1',
    id: `rss_${String(k).padStart(4, '0')}`,
    seq: k + 1,
    state: 'published' as const,
    dateMs: NOW - Math.floor(rnd() * 40) * MIN,
    language: rnd() < 0.1 ? null : ['en', 'de', 'fr'][Math.floor(rnd() * 3)]!,
    service: ['rss', 'mastodon'][Math.floor(rnd() * 2)]!,
    type: ['link', 'image'][Math.floor(rnd() * 2)]!,
  }));
  return rows.sort((a, b) => b.dateMs - a.dateMs || (a.id < b.id ? 1 : -1));
}

/** What the SQL read answers (store/items/read-sql.ts `whereSql` and `orderSql`), over the whole collection. */
function reference(all: HeadRow[], query: ItemQuery, page: Page): string[] {
  const selected = all.filter(
    (row) =>
      row.dateMs > query.sinceMs &&
      row.dateMs <= query.untilMs &&
      (!query.services || query.services.includes(row.service)) &&
      (!query.types || query.types.includes(row.type)) &&
      (!query.languages || (row.language !== null && query.languages.includes(row.language))),
  );
  const ordered = page.order === 'desc' ? selected : [...selected].reverse();
  return ordered.slice(page.offset, page.offset + page.count).map((row) => row.id);
}

const base: ItemQuery = { contractId: 'k1', collectionId: 'c1', state: 'published', sinceMs: NOW - 60 * MIN, untilMs: NOW };
const page: Page = { count: 20, offset: 0, sort: 'time', order: 'desc' };

describe('headServes', () => {
  it.each([
    ['the default content read', base, page, true],
    ['a page that ends at the head size', base, { ...page, offset: HEAD_SIZE - 20 }, true],
    ['a page past the head size', base, { ...page, offset: HEAD_SIZE - 19 }, false],
    ['sort=kudos', base, { ...page, sort: 'kudos' as const }, false],
    ['sort=trending', base, { ...page, sort: 'trending' as const }, false],
    ['a location', { ...base, location: { latitude: 0, longitude: 0, radius: 10 } }, page, false],
    ['unpublished items (the queue)', { ...base, state: 'unpublished' as const }, page, false],
    ['every state (the queue)', { ...base, state: undefined }, page, false],
    ['held items', { ...base, held: true }, page, false],
  ])('%s: %s', (_name, query, paging, serves) => {
    expect(headServes(query, paging)).toBe(serves);
  });
});

describe('pageFromHead', () => {
  const rnd = random(7);
  const all = collection(500, rnd);
  const head = all.slice(0, HEAD_SIZE);
  const compiled = headOf(head, false);

  it.each([
    ['newest page', base, page],
    ['until inside the head', { ...base, untilMs: NOW - 5 * MIN }, page],
    ['until on a date many items share', { ...base, untilMs: head[30]!.dateMs }, page],
    ['since inside the head: a short window', { ...base, sinceMs: head[10]!.dateMs }, page],
    ['one language', { ...base, languages: ['de'] }, page],
    ['a service and a type', { ...base, services: ['rss'], types: ['image'] }, page],
    ['offset', base, { ...page, offset: 40, count: 7 }],
    ['oldest first over a window inside the head', { ...base, sinceMs: head[50]!.dateMs }, { ...page, order: 'asc' as const }],
  ])('%s: the page the SQL read answers', (_name, query, paging) => {
    const keys = pageFromHead(compiled, query, paging);
    expect(keys).toBeDefined();
    expect(keys!.map((key) => key.id)).toEqual(reference(all, query, paging));
    expect(Object.keys(keys![0] ?? { collectionId: 1, id: 1, seq: 1, state: 1 }).sort()).toEqual(['collectionId', 'id', 'seq', 'state']);
  });

  it.each([
    ['a window reaching past the head, oldest first', { ...base, sinceMs: 0 }, { ...page, order: 'asc' as const }],
    ['until older than every item of the head', { ...base, untilMs: head.at(-1)!.dateMs - 1, sinceMs: 0 }, page],
    ['a filter the head holds too few of', { ...base, sinceMs: 0, languages: ['fr'], types: ['image'], services: ['mastodon'] }, { ...page, count: 100 }],
  ])('%s: undefined (read with SQL)', (_name, query, paging) => {
    expect(pageFromHead(compiled, query, paging)).toBeUndefined();
  });

  it('answers everything from the head of a collection it holds whole (`complete`)', () => {
    const small = all.slice(0, 120);
    for (const order of ['asc', 'desc'] as const) {
      const query = { ...base, sinceMs: 0, untilMs: NOW };
      const paging = { ...page, order, count: 50, offset: 100 };
      expect(pageFromHead(headOf(small, true), query, paging)!.map((key) => key.id)).toEqual(reference(small, query, paging));
    }
  });

  it('never answers differently from the SQL read: 2 000 random reads', () => {
    const draw = random(11);
    const pick = <T>(values: T[]) => values[Math.floor(draw() * values.length)]!;
    let answered = 0;
    for (let n = 0; n < 2000; n++) {
      // Mostly within the 16 minutes the head holds, some beyond.
      const untilMs = NOW - Math.floor(draw() * 20) * MIN + pick([0, 1, -1]);
      const query: ItemQuery = {
        ...base,
        untilMs,
        sinceMs: untilMs - Math.floor(draw() * 30) * MIN,
        ...(draw() < 0.3 ? { languages: [pick(['en', 'de', 'fr'])] } : {}),
        ...(draw() < 0.2 ? { services: [pick(['rss', 'mastodon'])] } : {}),
        ...(draw() < 0.2 ? { types: ['link', 'image'].slice(0, 1 + Math.floor(draw() * 2)) } : {}),
      };
      const paging: Page = { ...page, count: 1 + Math.floor(draw() * 40), offset: Math.floor(draw() * 60), order: pick(['asc', 'desc'] as const) };
      const keys = pageFromHead(compiled, query, paging);
      if (!keys) continue;
      answered++;
      expect(keys.map((key) => key.id), JSON.stringify({ query, paging })).toEqual(reference(all, query, paging));
    }
    // Most random reads fall within the head: the test checks answers, not only refusals.
    expect(answered).toBeGreaterThan(500);
  });
});
