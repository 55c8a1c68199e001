import { describe, expect, it } from 'vitest';
import { askedIds, askedKudos } from './connector.ts';

const item = (id: string, score: number) => ({ id, kudos: { score } });

describe('askedKudos (docs/services.md#kudos-refresh)', () => {
  it.each([
    ['every asked item answered', ['a', 'b'], [item('a', 1), item('b', 2)], { a: 1, b: 2 }],
    ['an item the source no longer has is left out', ['a', 'b'], [item('a', 1)], { a: 1 }],
    ['what the source sent along unasked is ignored', ['a'], [item('a', 1), item('z', 9)], { a: 1 }],
    ['answers the connector could not read are skipped', ['a', 'b'], [null, item('b', 2)], { b: 2 }],
    ['nothing asked, nothing kept', [], [item('a', 1)], {}],
  ] as const)('%s', (_name, asked, read, expected) => {
    const found = askedKudos([...asked], read);
    expect(Object.fromEntries([...found].map(([id, kudos]) => [id, kudos.score]))).toEqual(expected);
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
