import { describe, expect, it } from 'vitest';
import type { ContentItem } from '../item.ts';
import { askedIds, askedItems, leftOut } from './connector.ts';

const item = (id: string, score: number) => ({ id, kudos: { score } }) as ContentItem;

describe('askedItems (docs/services.md#re-verification)', () => {
  it.each([
    ['every asked item answered', ['a', 'b'], [item('a', 1), item('b', 2)], { a: 1, b: 2 }],
    ['an item the source no longer has is left out', ['a', 'b'], [item('a', 1)], { a: 1 }],
    ['what the source sent along unasked is ignored', ['a'], [item('a', 1), item('z', 9)], { a: 1 }],
    ['answers the connector could not read are skipped', ['a', 'b'], [null, item('b', 2)], { b: 2 }],
    ['nothing asked, nothing kept', [], [item('a', 1)], {}],
  ] as const)('%s', (_name, asked, read, expected) => {
    const found = askedItems([...asked], read);
    expect(Object.fromEntries([...found].map(([id, found]) => [id, found.kudos.score]))).toEqual(expected);
  });
});

describe('askedIds', () => {
  it.each([
    ['the source ids of matching item ids, in order', ['twitter_2', 'twitter_1'], ['2', '1']],
    ['ids of other kinds are left out', ['twitter_1', 'twitter_x', 'youtube_1', 'twitter_'], ['1']],
    ['none asked', [], []],
  ] as const)('%s', (_name, itemIds, expected) => {
    expect(askedIds([...itemIds], /^twitter_(\d+)$/)).toEqual(expected);
  });
});

// Only for answers that list every asked item that exists (YouTube videos.list, Bluesky getPosts).
describe('leftOut (docs/services.md#re-verification)', () => {
  it.each([
    ['an asked item the answer left out is gone', ['a', 'b'], [item('a', 1)], { b: 'gone' }],
    ['every asked item answered: none gone', ['a'], [item('a', 1)], {}],
    ['nothing asked, nothing gone', [], [], {}],
  ] as const)('%s', (_name, asked, read, expected) => {
    expect(Object.fromEntries(leftOut([...asked], askedItems([...asked], read)))).toEqual(expected);
  });
});
