/** The failure limits (rate-limit.ts): the delay curve, the wait rule, and a limiter over memory records. */
import { describe, expect, it } from 'vitest';
import { memoryFailureCounts } from '../store/rate-limits.ts';
import { FAILURE_POLICY, failureDelay, failureLimiter, failureWait } from './rate-limit.ts';

const T0 = 1_000_000;
const none = { count: 0, last: 0 };

describe('failureDelay', () => {
  it.each([
    [0, 0], [4, 0], [5, 1000], [6, 2000], [7, 4000], [10, 32_000], [11, 60_000], [1000, 60_000],
  ])('after %i failures: %i ms', (count, ms) => expect(failureDelay(count, 5)).toBe(ms));
});

describe('failureWait', () => {
  it.each<[string, { count: number; last: number }, { count: number; last: number } | undefined, number, number]>([
    ['a clean address, an identity under its free failures', none, { count: 4, last: T0 }, T0, 0],
    ['a clean address waits for the identity\'s next check', none, { count: 5, last: T0 }, T0 + 200, 800],
    ['… and no longer', none, { count: 5, last: T0 }, T0 + 1000, 0],
    ['the delay doubles per failure', none, { count: 8, last: T0 }, T0, 8000],
    ['and stops at the cap', none, { count: 60, last: T0 }, T0, 60_000],
    ['an address that failed on a delayed identity waits twice the delay after its own failure', { count: 1, last: T0 }, { count: 7, last: T0 + 1000 }, T0 + 1000, 7000],
    ['an address over its own free failures waits, whatever the identity (no secret)', { count: 11, last: T0 }, undefined, T0 + 500, 1500],
    ['an address under them does not', { count: 9, last: T0 }, undefined, T0, 0],
    ['without a secret the identity is not read', { count: 1, last: T0 }, undefined, T0, 0],
    ['under the free failures, claims stamped after now (simultaneous attempts) hold nothing back', { count: 9, last: T0 + 40 }, { count: 4, last: T0 + 40 }, T0, 0],
  ])('%s', (_name, pair, identity, now, expected) => expect(failureWait(pair, identity, now)).toBe(expected));
});

describe('failureLimiter over memory records', () => {
  const setup = () => {
    const counts = memoryFailureCounts({ entries: 100, forgetMs: FAILURE_POLICY.forgetMs });
    // The attempts below are left unsettled (as a wrong secret before `failed`): a short queue
    // keeps a refusal that only this process's own claims cause from waiting long for them.
    const limiter = failureLimiter(counts, 'failure:test:', { ...FAILURE_POLICY, queueMs: 50 });
    let now = T0;
    limiter.now = () => now;
    return { counts, limiter, at: (ms: number) => (now = T0 + ms) };
  };

  it('five wrong secrets from anywhere, then one check per growing delay from any address', async () => {
    const { limiter, at } = setup();
    for (let i = 0; i < 5; i++) expect(await limiter.attempt('alice', `10.0.0.${i}`, { secret: true })).not.toHaveProperty('retryAfter');
    expect(await limiter.attempt('alice', '10.0.1.1', { secret: true })).toEqual({ retryAfter: 1 });
    at(1000);
    expect(await limiter.attempt('alice', '10.0.1.1', { secret: true })).not.toHaveProperty('retryAfter');
    expect(await limiter.attempt('alice', '10.0.1.2', { secret: true })).toEqual({ retryAfter: 2 });
    // Another identity, and a request with no secret, are not held back.
    expect(await limiter.attempt('bob', '10.0.1.2', { secret: true })).not.toHaveProperty('retryAfter');
    expect(await limiter.attempt('alice', '10.0.1.3', { secret: false })).not.toHaveProperty('retryAfter');
  });

  it('a right secret gives its claim back; a cancelled attempt too; failures are forgotten after forgetMs', async () => {
    const { limiter, at } = setup();
    for (let i = 0; i < 4; i++) await limiter.attempt('alice', '10.0.0.1', { secret: true });
    for (let i = 0; i < 5; i++) {
      const attempt = await limiter.attempt('alice', '10.0.0.2', { secret: true });
      if ('retryAfter' in attempt) throw new Error('refused');
      await (i % 2 ? attempt.succeeded() : attempt.cancelled());
    }
    expect(await limiter.attempt('alice', '10.0.0.3', { secret: true })).not.toHaveProperty('retryAfter');
    expect(await limiter.attempt('alice', '10.0.0.4', { secret: true })).toEqual({ retryAfter: 1 });
    expect(await limiter.attempt('alice', '10.0.0.3', { secret: true })).toEqual({ retryAfter: 2 }); // its own failure: twice the delay
    at(FAILURE_POLICY.forgetMs);
    for (let i = 0; i < 5; i++) expect(await limiter.attempt('alice', '10.0.0.3', { secret: true })).not.toHaveProperty('retryAfter');
  });

  it('one IPv6 /64 is one address group; an IPv4-mapped address is its IPv4 address', async () => {
    const { limiter } = setup();
    for (let i = 1; i <= 10; i++) await limiter.attempt('client', `2001:db8:1:2::${i}`, { secret: false });
    expect(await limiter.attempt('client', '2001:db8:1:2:ffff::9', { secret: false })).toEqual({ retryAfter: 1 });
    expect(await limiter.attempt('client', '2001:db8:1:3::1', { secret: false })).not.toHaveProperty('retryAfter');
    for (let i = 0; i < 10; i++) await limiter.attempt('client', '10.9.0.1', { secret: false });
    expect(await limiter.attempt('client', '::ffff:10.9.0.1', { secret: false })).toEqual({ retryAfter: 1 });
  });

  it('keys are fixed-length digests and the table is bounded, whatever identities are sent', async () => {
    const { counts, limiter } = setup();
    for (let i = 0; i < 500; i++) await limiter.attempt(`${i}${'x'.repeat(10_000)}`, `10.1.${i >> 8}.${i & 255}`, { secret: true });
    const keys = await counts.keys();
    expect(keys).toHaveLength(100);
    for (const key of keys) expect(key).toMatch(/^failure:test:[A-Za-z0-9_-]{43}$/);
  });

  it('simultaneous right secrets of one client all pass: an attempt held back only by its own process’s unsettled claims queues for them', async () => {
    const limiter = failureLimiter(memoryFailureCounts({ entries: 100, forgetMs: FAILURE_POLICY.forgetMs }), 'failure:test:');
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const attempt = await limiter.attempt('website', `10.0.0.${i % 3}`, { secret: true });
        if ('retryAfter' in attempt) return attempt;
        await new Promise((resolve) => setTimeout(resolve, 5)); // the secret being compared
        await attempt.succeeded();
        return 'checked';
      }),
    );
    expect(results).toEqual(Array(12).fill('checked'));
  });

  it('simultaneous wrong secrets still get five checks: the queued ones look again once those failed, and are refused', async () => {
    const limiter = failureLimiter(memoryFailureCounts({ entries: 100, forgetMs: FAILURE_POLICY.forgetMs }), 'failure:test:');
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const attempt = await limiter.attempt('website', `10.0.0.${i}`, { secret: true });
        if ('retryAfter' in attempt) return attempt;
        await new Promise((resolve) => setTimeout(resolve, 5));
        await attempt.failed();
        return 'checked';
      }),
    );
    expect(results.filter((result) => result === 'checked')).toHaveLength(5);
    expect(results.filter((result) => result !== 'checked')).toEqual(Array(7).fill({ retryAfter: 1 }));
  });

  it('an attempt never settled holds the queue for queueMs at most, then the others are refused', async () => {
    const limiter = failureLimiter(memoryFailureCounts({ entries: 100, forgetMs: FAILURE_POLICY.forgetMs }), 'failure:test:', { ...FAILURE_POLICY, queueMs: 30 });
    for (let i = 0; i < 5; i++) expect(await limiter.attempt('website', '10.0.0.1', { secret: true })).not.toHaveProperty('retryAfter');
    expect(await limiter.attempt('website', '10.0.0.2', { secret: true })).toEqual({ retryAfter: 1 });
  });
});
