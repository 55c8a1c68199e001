import { describe, expect, it } from 'vitest';
import { isId, newId } from './ids.ts';
import { slugify, uniqueSlug } from './slug.ts';

describe('ids', () => {
  it('are 24 lower-case hex characters, time-ordered', () => {
    const early = newId(Date.UTC(2026, 0, 1));
    const late = newId(Date.UTC(2026, 0, 2));
    expect(early).toMatch(/^[0-9a-f]{24}$/);
    expect(early.slice(0, 8)).toBe((Date.UTC(2026, 0, 1) / 1000).toString(16));
    expect(early < late).toBe(true);
    expect(newId()).not.toBe(newId());
  });

  it('sort in creation order within one second', () => {
    const now = Date.now();
    const ids = Array.from({ length: 50 }, () => newId(now));
    expect([...ids].sort()).toEqual(ids);
  });

  it.each([
    ['6b03480c7c162578e4c32e1d', true],
    ['6B03480C7C162578E4C32E1D', false],
    ['6b03480c7c162578e4c32e1', false],
    ['zz03480c7c162578e4c32e1d', false],
    [42, false],
  ])('isId(%j) is %s', (value, expected) => expect(isId(value)).toBe(expected));
});

describe('slugs', () => {
  it.each([
    ['World News', 'world-news'],
    ['  Ça va — Straße! ', 'ca-va-strasse'],
    ['Crème brûlée', 'creme-brulee'],
    ['Æsir Øl', 'aesir-ol'],
    ['Новости', 'item'],
    ['a'.repeat(80), 'a'.repeat(64)],
  ])('slugify(%j) is %j', (name, slug) => expect(slugify(name)).toBe(slug));

  it('adds a numeric suffix on a clash', () => {
    expect(uniqueSlug('news', new Set())).toBe('news');
    expect(uniqueSlug('news', new Set(['news', 'news-2']))).toBe('news-3');
  });
});
