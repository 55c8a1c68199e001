import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_ARRAY, MAX_BULK, MAX_STRING, oversized } from './limits.ts';
import { dropEmpty } from './validate.ts';

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['{}', 1],
    ['[[1],[2,[3]]]', 3],
    ['{"a":"[[[[{{{{"}', 1],
    ['{"a":"\\"[[["}', 1],
    ['["\\\\",[1]]', 2],
  ])('%s is %i deep', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });

  it('stops counting past the limit, however deep the text', () => {
    expect(jsonDepth('['.repeat(1_000_000), 32)).toBe(33);
  });
});

describe('oversized', () => {
  it.each([
    ['a bulk body of the bound', Array(MAX_BULK).fill({}), undefined],
    ['a bulk body over the bound', Array(MAX_BULK + 1).fill({}), 'body'],
    ['an inner array of the bound', { entries: Array(MAX_ARRAY).fill('w') }, undefined],
    ['an inner array over the bound', { rules: [{ value: Array(MAX_ARRAY + 1).fill(1) }] }, 'rules[0].value'],
    ['a string over the bound', [{ input: 'x'.repeat(MAX_STRING + 1) }], '[0].input'],
    ['a key over the bound', { ['k'.repeat(MAX_STRING + 1)]: 1 }, 'body'],
    ['a string holding U+0000', { rules: [{ value: ['a', 'b\u0000'] }] }, 'rules[0].value[1]'],
    ['a key holding U+0000', { ['a\u0000']: 1 }, 'body'],
    ['scalars', 5, undefined],
  ])('%s', (_, value, propertyName) => {
    expect(oversized(value)?.propertyName).toBe(propertyName);
  });
});

describe('dropEmpty', () => {
  it.each([
    [{ callback: '', q: 'news' }, { q: 'news' }],
    [{ count: ['', '5'] }, { count: '5' }],
    [{ service: ['', ''] }, {}],
    [{ service: ['rss', '', 'vk'] }, { service: ['rss', 'vk'] }],
    [{ since: '0' }, { since: '0' }],
  ])('%j → %j', (query, expected) => {
    const copy = structuredClone(query);
    dropEmpty(copy);
    expect(copy).toEqual(expected);
  });
});
