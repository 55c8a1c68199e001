import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './outbox.ts';

describe('retryDelayMs', () => {
  it.each([
    // attempt, base, cap, random → delay: base × 2^(attempt-1), capped, × (0.5 + random/2)
    [1, 5000, 3_600_000, 0, 2500],
    [1, 5000, 3_600_000, 1, 5000],
    [2, 5000, 3_600_000, 0, 5000],
    [4, 5000, 3_600_000, 0.5, 30_000],
    [11, 5000, 3_600_000, 0, 1_800_000],
    [20, 5000, 3_600_000, 1, 3_600_000],
    [1000, 5000, 3_600_000, 0, 1_800_000],
    [0, 20, 3_600_000, 0, 10],
    [1, 1, 3_600_000, 0, 1],
  ])('attempt %i, base %i, cap %i, random %f → %i ms', (attempt, base, cap, random, expected) => {
    expect(retryDelayMs(attempt, base, cap, () => random)).toBe(expected);
  });
});
