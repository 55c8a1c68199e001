/**
 * What the benchmarks share to turn measurements into figures: the nearest-rank quantile of
 * samples, and the quantile of a histogram of the service's own metrics read from the
 * Prometheus exposition text (docs/operations.md#metrics), over every observation or over those
 * since an earlier text. Also the shape every `bench/freshness-*.ts` answers (`freshness.ts`
 * runs them).
 */

/**
 * One push path's freshness: publication → visible in `GET /v1/content`, per item (ms); and,
 * when measured (`removal.ts`), deletion at the source → gone from it.
 */
export interface Freshness {
  path: string;
  items: number;
  p50Ms: number;
  p99Ms: number;
  notes?: Record<string, number | string>;
  removal?: { items: number; p50Ms: number; p99Ms: number; notes?: Record<string, number | string> };
}

/** The nearest-rank `q`-quantile (0–1) of `values` (in any order); NaN when there are none. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** A histogram's cumulative bucket counts by upper bound (`le`, Infinity for `+Inf`), its label sets summed. */
function buckets(text: string, name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}_bucket\\{(?:.*,)?le="([^"]+)".*\\} (\\S+)$`).exec(line);
    if (!match) continue;
    const le = match[1] === '+Inf' ? Infinity : Number(match[1]);
    out.set(le, (out.get(le) ?? 0) + Number(match[2]));
  }
  return out;
}

/**
 * The `q`-quantile (0–1) of histogram `name` in the exposition `text`, as the upper bound of the
 * bucket it falls in (the metric's unit: seconds for `_seconds`), over the observations after
 * `since` (an earlier text of the same process) when given, else over all; NaN when there are none.
 */
export function histogramQuantile(text: string, name: string, q: number, since?: string): number {
  const before = since ? buckets(since, name) : new Map<number, number>();
  const sorted = [...buckets(text, name)].map(([le, c]) => [le, c - (before.get(le) ?? 0)] as const).sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (!total) return Number.NaN;
  return sorted.find(([, c]) => c >= q * total)?.[0] ?? Number.NaN;
}
