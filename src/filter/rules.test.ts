import { describe, expect, it } from 'vitest';
import { leaves } from './rules.ts';

describe('leaves', () => {
  it.each([
    [{ text: 'a' }, ['text'], ['a']],
    [{ tags: ['a', ['b', [null, 'c']]] }, ['tags'], ['a', 'b', 'c']],
    [{ author: [{ username: 'x' }, { username: ['y'] }] }, ['author', 'username'], ['x', 'y']],
    [{ text: null }, ['text'], []],
    [{ text: 'abc' }, ['text', 'length'], []],
  ])('%j at %j', (item, path, expected) => {
    expect(leaves(item, path)).toEqual(expected);
  });

  it('flattens an array nested 100 000 deep without exhausting the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(leaves({ text: deep }, ['text'])).toEqual(['x']);
  });
});
