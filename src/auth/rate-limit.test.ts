/** The failure limiter (rate-limit.ts): keyed on identity and address together, bounded. */
import { describe, expect, it } from 'vitest';
import { failureLimiter } from './rate-limit.ts';

const T0 = 1_000_000;

type Step = ['fail' | 'wait', string, string, number, number?];

describe('failureLimiter', () => {
  // Each case: steps of ['fail', identity, address, at] and ['wait', identity, address, at, expected seconds].
  it.each<[string, Step[]]>([
    ['max failures of one identity from one address, then that pair waits', [
      ['fail', 'alice', 'a', T0], ['fail', 'alice', 'a', T0 + 1], ['wait', 'alice', 'a', T0 + 2, 0],
      ['fail', 'alice', 'a', T0 + 2], ['wait', 'alice', 'a', T0 + 10, 60], ['wait', 'alice', 'a', T0 + 30_000, 30],
      ['wait', 'alice', 'a', T0 + 60_001, 0], // the first failure left the window
    ]],
    ['another identity from the same address is not held back', [
      ['fail', 'ghost-1', 'a', T0], ['fail', 'ghost-2', 'a', T0], ['fail', 'ghost-3', 'a', T0],
      ['fail', 'ghost-1', 'a', T0], ['fail', 'ghost-1', 'a', T0], ['wait', 'ghost-1', 'a', T0 + 1, 60],
      ['wait', 'bob', 'a', T0 + 1, 0],
    ]],
    ['the same identity from another address is not held back', [
      ['fail', 'alice', 'a', T0], ['fail', 'alice', 'a', T0], ['fail', 'alice', 'a', T0],
      ['wait', 'alice', 'a', T0 + 1, 60], ['wait', 'alice', 'b', T0 + 1, 0],
    ]],
    ['an identity over its limit across addresses: addresses that failed wait, clean ones do not', [
      ['fail', 'alice', 'a', T0], ['fail', 'alice', 'b', T0 + 1000], ['fail', 'alice', 'c', T0 + 2000],
      ['fail', 'alice', 'd', T0 + 3000], ['fail', 'alice', 'e', T0 + 4000],
      ['wait', 'alice', 'a', T0 + 5000, 55], ['wait', 'alice', 'e', T0 + 5000, 55], ['wait', 'alice', 'clean', T0 + 5000, 0],
      ['wait', 'bob', 'a', T0 + 5000, 0],
      ['wait', 'alice', 'b', T0 + 60_500, 0], // under the identity limit again
    ]],
    ['the empty identity holds back only identity-less requests', [
      ['fail', '', 'a', T0], ['fail', '', 'a', T0], ['fail', '', 'a', T0],
      ['wait', '', 'a', T0, 60], ['wait', 'alice', 'a', T0, 0],
    ]],
    ['identities and addresses are not confused by joining them', [
      ['fail', 'a\nb', 'c', T0], ['fail', 'a\nb', 'c', T0], ['fail', 'a\nb', 'c', T0],
      ['wait', 'a', 'b\nc', T0, 0], ['wait', 'a\nb', 'c', T0, 60],
    ]],
  ])('%s', (_name, steps) => {
    const limiter = failureLimiter({ max: 3, identityMax: 5, windowMs: 60_000 });
    for (const [action, identity, address, at, expected] of steps) {
      if (action === 'fail') limiter.fail(identity, address, at);
      else expect(limiter.retryAfter(identity, address, at), `${identity}@${address} at +${at - T0}`).toBe(expected);
    }
  });

  it('keeps keys of fixed length and the table bounded, whatever the identities', () => {
    const limiter = failureLimiter({ max: 3, entries: 100 });
    const long = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 1000; i++) limiter.fail(`${long}${i}`, `10.0.${i >> 8}.${i & 255}`, T0 + i);
    expect(limiter.size).toBe(100);
    const keys = [...limiter.keys()];
    expect(keys).toHaveLength(100);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('keeps the pair under attack when other entries come and go (least recently used go first)', () => {
    const limiter = failureLimiter({ max: 3, entries: 50 });
    for (let i = 0; i < 3; i++) limiter.fail('alice', 'a', T0);
    for (let i = 0; i < 200; i++) {
      expect(limiter.retryAfter('alice', 'a', T0 + i)).toBe(60);
      limiter.fail(`other-${i}`, 'z', T0 + i);
    }
    expect(limiter.size).toBeLessThanOrEqual(50);
  });
});
