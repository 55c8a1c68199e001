import { describe, expect, it } from 'vitest';
import { inShape } from './item.ts';

const base = { id: 'rss_1', service: 'rss', type: 'link', text: 't', tags: [], url: 'https://example.org/1', date: '2024-01-01T00:00:00.000Z',
  author: { name: null, username: null, userid: null, url: null }, media: null, kudos: { score: 0 } };

describe('inShape', () => {
  it.each([
    ['keeps its own url', {}, 'https://example.org/1'],
    ['takes the first medium when url is null', { url: null, media: [{ type: 'image', url: 'https://img.example/1.jpg' }] }, 'https://img.example/1.jpg'],
    ['takes the author page after the media', { url: null, author: { url: 'https://example.org/@a' } }, 'https://example.org/@a'],
    ['gives an empty string when nothing is a URL', { url: null }, ''],
  ])('url: %s', (_, change, url) => {
    expect(inShape({ ...base, ...change } as never).url).toBe(url);
  });

  it('gives children an array, in shape, and drops what has the wrong type or is not a field', () => {
    const item = inShape({ ...base, title: 3, tags: ['a', 2], kudos: { score: 2, rss_x: 'y' }, language: null, location: { latitude: 'n' }, extra: 1,
      children: [{ id: 'c', url: null, children: 'no' }, 'junk'] } as never);
    expect(item.children).toEqual([expect.objectContaining({ id: 'c', url: 'https://example.org/1', children: [], text: '', tags: [] })]);
    expect(item).not.toHaveProperty('title');
    expect(item).not.toHaveProperty('extra');
    expect(item).not.toHaveProperty('language');
    expect(item).not.toHaveProperty('location');
    expect(item.tags).toEqual(['a']);
    expect(item.kudos).toEqual({ score: 2 });
    expect(inShape({ ...base } as never).children).toEqual([]);
  });

  it.each([
    ['keeps the five class scores', { drawing: 0.9, hentai: 0.01, neutral: 0.08, porn: 0, sexy: 0.01 }, true],
    ['drops scores with a class missing', { drawing: 0.9, hentai: 0.01, neutral: 0.08, porn: 0 }, false],
    ['drops scores that are not numbers', { drawing: '0.9', hentai: 0, neutral: 0, porn: 0, sexy: 0 }, false],
    ['drops scores that are not an object', [0.9, 0, 0, 0, 0], false],
  ])('media moderation: %s', (_, moderation, kept) => {
    const [medium] = inShape({ ...base, media: [{ type: 'image', url: 'https://img.example/1.jpg', moderation, extra: 1 }] } as never).media!;
    expect(medium).toEqual({ type: 'image', url: 'https://img.example/1.jpg', ...(kept && { moderation }) });
  });

  it('bounds how deep children of children go', () => {
    let child: Record<string, unknown> = { ...base, id: 'leaf' };
    for (let i = 0; i < 50; i++) child = { ...base, id: `c${i}`, children: [child] };
    let depth = 0;
    for (let node = inShape(child as never); node.children?.length; node = node.children[0]!) depth++;
    expect(depth).toBe(3);
  });
});

describe('inShape: duplicates', () => {
  const author = { name: 'A', username: 'a', userid: null, url: null };
  it.each([
    ['absent when none', undefined, undefined],
    ['absent when empty', [], undefined],
    ['absent when not an array', 'x', undefined],
    ['kept in shape', [{ id: 'twitter_1', service: 'twitter', url: 'https://x.com/a/status/1', author, extra: 1 }], [{ id: 'twitter_1', service: 'twitter', url: 'https://x.com/a/status/1', author }]],
    ['fields of a wrong type emptied', [{ id: 5, service: null, author: 'x' }], [{ id: '5', service: '', url: '', author: { name: null, username: null, userid: null, url: null } }]],
  ] as [string, unknown, unknown][])('%s', (_name, duplicates, expected) => {
    const item = inShape({ id: 'rss_1', service: 'rss', url: 'https://example.com/a', duplicates });
    expect(item.duplicates).toEqual(expected);
    expect('duplicates' in item).toBe(expected !== undefined);
  });

  it('leaves duplicates off children', () => {
    const item = inShape({ id: 'rss_1', children: [{ id: 'c', duplicates: [{ id: 'x' }] }], duplicates: [{ id: 'twitter_1' }] });
    expect(item.duplicates).toHaveLength(1);
    expect('duplicates' in item.children![0]!).toBe(false);
  });
});
