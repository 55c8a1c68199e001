import { describe, expect, it } from 'vitest';
import { scrub } from './audit.ts';

describe('scrub: what an audit entry may record', () => {
  it.each([
    ['a plain record', { name: 'Sports', active: true }, { name: 'Sports', active: true }],
    ['secret-named fields at any depth', { name: 'x', clientSecret: 's', nested: { passwordHash: 'h', bearerToken: 't', apiKey: 'k', keep: 1 } }, { name: 'x', nested: { keep: 1 } }],
    ['inside arrays', [{ accessToken: 'a', id: '1' }], [{ id: '1' }]],
    ["a credential's masked hints (the API's own masked form)", { hints: { bearerToken: '…k7Qz' }, secret: 'sealed' }, { hints: { bearerToken: '…k7Qz' } }],
    ['scalars and null', null, null],
  ])('%s', (_label, value, expected) => {
    const before = JSON.stringify(value);
    expect(scrub(value)).toEqual(expected);
    expect(JSON.stringify(value)).toBe(before);
  });
});
