import { describe, expect, it } from 'vitest';
import { kudosRefreshInterval, trendingScore } from './ranking.ts';

const T = Date.parse('2026-11-23T12:00:00Z');
const H = 3_600_000;

describe('trendingScore: properties (docs/api.md#trending)', () => {
  // [what, higher (score, date), lower (score, date)]
  it.each([
    ['newer beats older at equal engagement', [10, T], [10, T - H]],
    ['newer beats older without engagement (feeds rank by time)', [0, T], [0, T - 1000]],
    ['much more engagement beats a little newer', [1000, T - H], [10, T]],
    ['ten times the engagement beats 12 hours newer', [1000, T - 12 * H], [100, T]],
    ['but not 13 hours newer', [100, T], [1000, T - 13 * H]],
    ['monotone in engagement', [11, T], [10, T]],
    ['monotone in date', [10, T + 1], [10, T]],
    ['a negative score counts as none', [0, T + 1], [-50, T]],
    ['a duplicate-swollen card beats its lone peer', [35, T], [5, T]],
  ] as const)('%s', (_what, [s1, d1], [s2, d2]) => {
    expect(trendingScore(s1, d1)).toBeGreaterThan(trendingScore(s2, d2));
  });

  it('12.5 hours of novelty are worth a factor of ten in engagement (half-life 3.76 h)', () => {
    expect(trendingScore(0, T) - trendingScore(0, T - 45_000_000)).toBeCloseTo(1, 10);
    expect(trendingScore(99, T) - trendingScore(9, T)).toBeCloseTo(1, 10);
  });

  it('is finite for any input', () => {
    for (const score of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1e12]) expect(Number.isFinite(trendingScore(score, T))).toBe(true);
  });
});

describe('kudosRefreshInterval (docs/services.md#kudos-refresh)', () => {
  it.each([
    [0, 900],
    [6 * 3600 - 1, 900],
    [6 * 3600, 3600],
    [24 * 3600 - 1, 3600],
    [24 * 3600, 10_800],
    [48 * 3600 - 1, 10_800],
    [48 * 3600, undefined],
    [400 * 3600, undefined],
  ])('an item %i s old → every %s s', (age, expected) => {
    expect(kudosRefreshInterval(age, 900, 48 * 3600)).toBe(expected);
  });
});
