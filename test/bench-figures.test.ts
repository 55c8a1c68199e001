/**
 * The pure helpers the benchmarks compute their figures with (bench/figures.ts): the nearest-rank
 * quantile of samples, and the quantile of a histogram read from Prometheus exposition text, over
 * all observations or over those since an earlier text (bench:content's server p99, the soak's
 * collection lag).
 */
import { describe, expect, it } from 'vitest';
import { histogramQuantile, quantile } from '../bench/figures.ts';

describe('quantile (nearest rank)', () => {
  it.each([
    { values: [3, 1, 2], q: 0.5, expected: 2 },
    { values: [4, 1, 3, 2], q: 0.5, expected: 2 },
    { values: Array.from({ length: 100 }, (_, i) => 100 - i), q: 0.99, expected: 99 },
    { values: [5], q: 0.99, expected: 5 },
    { values: [1, Number.POSITIVE_INFINITY], q: 0.99, expected: Number.POSITIVE_INFINITY },
    { values: [], q: 0.5, expected: Number.NaN },
  ])('$q of $values → $expected', ({ values, q, expected }) => {
    expect(quantile(values, q)).toBe(expected);
  });
});

/** An exposition of histogram `x` with two label sets (a `role` label after `le` must not be taken for it). */
const exposition = (a: number[], b: number[]) =>
  [
    '# TYPE x histogram',
    `x_bucket{le="0.001",route="/a",role="r"} ${a[0]}`,
    `x_bucket{le="0.0025",route="/a",role="r"} ${a[1]}`,
    `x_bucket{le="+Inf",route="/a",role="r"} ${a[2]}`,
    `x_sum{route="/a",role="r"} 0`,
    `x_bucket{method="GET",le="0.001"} ${b[0]}`,
    `x_bucket{method="GET",le="0.0025"} ${b[1]}`,
    `x_bucket{method="GET",le="+Inf"} ${b[2]}`,
    'y_bucket{le="0.001"} 1000',
  ].join('\n');

describe('histogramQuantile', () => {
  it.each([
    { case: 'all within the first bucket', text: exposition([60, 60, 60], [40, 40, 40]), q: 0.99, expected: 0.001 },
    { case: 'label sets summed: 99 of 100 within 2.5 ms', text: exposition([50, 99, 99], [0, 0, 1]), q: 0.99, expected: 0.0025 },
    { case: 'past the largest bound', text: exposition([10, 20, 100], [0, 0, 0]), q: 0.99, expected: Number.POSITIVE_INFINITY },
    { case: 'the median of the same', text: exposition([10, 20, 100], [0, 0, 0]), q: 0.5, expected: Number.POSITIVE_INFINITY },
    { case: 'no observations', text: exposition([0, 0, 0], [0, 0, 0]), q: 0.99, expected: Number.NaN },
    { case: 'an unknown histogram', text: exposition([1, 1, 1], [1, 1, 1]), q: 0.99, expected: Number.NaN, name: 'z' },
  ])('$case', ({ text, q, expected, name }) => {
    expect(histogramQuantile(text, name ?? 'x', q)).toBe(expected);
  });

  it('counts only the observations since an earlier text', () => {
    const before = exposition([100, 100, 100], [0, 0, 0]);
    // Since then: 10 more, all between 1 and 2.5 ms.
    const after = exposition([100, 110, 110], [0, 0, 0]);
    expect(histogramQuantile(after, 'x', 0.99)).toBe(0.0025);
    expect(histogramQuantile(after, 'x', 0.5)).toBe(0.001);
    expect(histogramQuantile(after, 'x', 0.5, before)).toBe(0.0025);
    expect(histogramQuantile(before, 'x', 0.5, before)).toBeNaN();
  });
});
