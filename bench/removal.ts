/**
 * The removal half of `npm run bench:freshness` (issue 34 point 1): how soon an item deleted at
 * its source is gone from the content API. Each push path's bench (`bench/freshness-<path>.ts`),
 * once its items are visible, hands them here with how to delete one at the source (a Mastodon
 * `delete` event, a Jetstream delete commit, a WebSub notification carrying an Atom tombstone)
 * and how to list what the content API serves now (every page of `GET /v1/content`).
 *
 * The deletions are sent evenly over `seconds`, in the order given; a reader lists the content
 * every `readEveryMs` (default 50) and notes, per item, the end of the first read that no
 * longer lists it. Per item: sent (just before the source sends it) → that read, in ms; p50 and
 * p99 by nearest rank (`quantile`). An item still listed `waitMs` (default 30 000) after the
 * last deletion is `missing` (p99 is then -1 when more than 1 % are). Goal: p99 ≤ 5 s.
 */
import { type Freshness, quantile } from './figures.ts';

/** What a removal run measured (the `removal` of a `Freshness`). */
export type Removal = NonNullable<Freshness['removal']>;

export interface RemovalOptions {
  /** The ids of items the content API lists now, to delete at the source, in this order. */
  ids: string[];
  /** Over how long the deletions are spread, s. */
  seconds: number;
  /** Deletes item `id` at the source (the fake sends its event); may resolve when sent. */
  remove(id: string): Promise<unknown> | void;
  /** The ids the content API lists now (every page). */
  listed(): Promise<Set<string>>;
  readEveryMs?: number;
  waitMs?: number;
}

/** Deletes `ids` at the source over `seconds` and measures deletion → gone (see the module). */
export async function measureRemoval(options: RemovalOptions): Promise<Removal> {
  const { ids, seconds, readEveryMs = 50, waitMs = 30_000 } = options;
  const sent = new Map<string, number>();
  const gone = new Map<string, number>();
  const readTimes: number[] = [];
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const started = performance.now();
      const listed = await options.listed();
      const at = performance.now();
      readTimes.push(at - started);
      for (const id of sent.keys()) if (!gone.has(id) && !listed.has(id)) gone.set(id, at);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, readEveryMs - (performance.now() - started))));
    }
  })();
  const spacing = ids.length ? (seconds * 1000) / ids.length : 0;
  const start = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let n = 0; n < ids.length; n++) {
    const wait = start + n * spacing - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.set(ids[n]!, performance.now());
    sends.push(Promise.resolve(options.remove(ids[n]!)));
  }
  await Promise.all(sends);
  const deadline = performance.now() + waitMs;
  while (gone.size < ids.length && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  reading = false;
  await reader;
  const latencies = ids.map((id) => (gone.get(id) ?? Number.POSITIVE_INFINITY) - sent.get(id)!);
  const p99 = quantile(latencies, 0.99);
  return {
    items: ids.length,
    p50Ms: Math.round(quantile(latencies, 0.5)),
    p99Ms: Number.isFinite(p99) ? Math.round(p99) : -1,
    notes: {
      missing: ids.length - gone.size,
      maxMs: gone.size === ids.length ? Math.round(Math.max(...latencies)) : -1,
      // The reader's granularity: one listing of every page of the content.
      listReadP50Ms: Math.round(quantile(readTimes, 0.5) * 10) / 10,
    },
  };
}
