/** Presenting items for the wall: relative times and what a card shows (pure, table-driven). */
import { describe, expect, it } from 'vitest';
import { mediaRatio, presentItem, relativeTime } from './present.ts';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

describe('relativeTime', () => {
  it.each([
    [NOW - 10_000, 'just now'],
    [NOW - 5 * 60_000, '5 min. ago'],
    [NOW - 3 * 3_600_000, '3 hr. ago'],
    [NOW - 26 * 3_600_000, 'yesterday'],
    [NOW - 9 * 86_400_000, 'last wk.'],
    [NOW - 400 * 86_400_000, 'last yr.'],
    [NOW + 2 * 3_600_000, 'in 2 hr.'],
  ])('%i → %s', (at, text) => {
    expect(relativeTime(at, NOW)).toBe(text);
  });
});

describe('relativeTime in the wall\'s language (Intl.RelativeTimeFormat; words.ts for "just now")', () => {
  it.each([
    ['nl', NOW - 10_000, 'zojuist'],
    ['nl', NOW - 5 * 60_000, '5 min. geleden'],
    ['de', NOW - 26 * 3_600_000, 'gestern'],
    ['pt-BR', NOW - 26 * 3_600_000, 'ontem'],
    ['ja', NOW - 10_000, '今'], // no words of its own: Intl's "now"
  ])('%s: %i → %s', (language, at, text) => {
    expect(relativeTime(at, NOW, language)).toBe(text);
  });
});

describe('mediaRatio: the picture box nearest to the picture, so nothing moves when it loads', () => {
  it.each([
    [undefined, undefined, '4-3'],
    [800, undefined, '4-3'],
    [0, 600, '4-3'],
    [800, 600, '4-3'],
    [1080, 1350, '4-5'],
    [1080, 1920, '4-5'], // taller pictures are cropped to 4:5
    [1000, 1000, '1-1'],
    [1920, 1080, '16-9'],
    [3000, 1000, '2-1'],
  ])('%s × %s → %s', (width, height, ratio) => {
    expect(mediaRatio(width, height)).toBe(ratio);
  });
});

describe('presentItem', () => {
  const base = { id: 'x_1', service: 'x', tags: [], date: '2026-11-22T11:00:00.000Z', kudos: { score: 5, x_likes: 4, x_shares: 1 } };
  it('keeps only safe URLs and images and labels an item without a title by its text', () => {
    const view = presentItem(
      {
        ...base,
        type: 'image',
        text: '<p>Hello <b>world</b> &amp; more</p>',
        url: 'javascript:alert(1)',
        author: { name: null, username: 'jo', userid: null, url: 'javascript:x' },
        media: [{ type: 'image', url: 'http://insecure.test/a.png' }, { type: 'image', url: 'https://cdn.test/b.png', width: 4, height: 3 }],
      },
      NOW,
    );
    expect(view).toMatchObject({
      url: undefined,
      site: undefined,
      label: 'Hello world & more',
      ago: '1 hr. ago',
      author: { name: 'jo', username: 'jo', url: undefined, initial: 'J' },
      image: { url: 'https://cdn.test/b.png', width: 4, height: 3 },
      embedHtml: undefined,
      kudos: { score: 5, detail: 'likes: 4, shares: 1' },
    });
  });

  it('gives a link card its site and a video its sanitized player', () => {
    const view = presentItem(
      {
        ...base,
        type: 'video',
        title: 'T',
        text: '',
        url: 'https://www.news.test/a',
        author: { name: null, username: null, userid: null, url: null },
        media: [{ type: 'embed', embed: '<iframe src="https://evil.test/x"></iframe>' }, { type: 'embed', embed: '<iframe src="https://player.vimeo.com/video/1"></iframe>' }],
      },
      NOW,
    );
    expect(view.site).toBe('news.test');
    expect(view.author).toBeUndefined();
    expect(view.embedHtml).toMatch(/^<iframe src="https:\/\/player.vimeo.com\/video\/1"/);
  });
});
