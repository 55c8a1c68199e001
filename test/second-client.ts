/**
 * The second client of the tests that show no tenant can stall another (e2e/filter-load,
 * e2e/feed-stall; issues 14 and 30): one request due every `intervalMs` by the clock, in turn
 * `/healthz`, tenant B's public content and B's queue over real HTTP, while `busy()` says the
 * other tenant's work runs. A request's latency counts from when it was due, not from when it
 * could be sent, so a stall of the event loop counts for every request it delayed (no
 * coordinated omission); requests that fell due while the loop was held but were never sent
 * count as having waited until the work ended.
 */
import { expect } from 'vitest';

/** Tenant B as the reads need it. */
export interface ReadingTenant {
  contract: { slug: string };
  collection: { slug: string };
  token: string;
}

/**
 * The latencies (ms) of B's reads against `base` while `busy()`, at most `max` requests; throws
 * (an assertion) on any answer but 200.
 */
export async function secondClient(base: string, b: ReadingTenant, busy: () => boolean, { intervalMs = 10, max = 100_000 } = {}): Promise<number[]> {
  const reads = [
    async () => (await fetch(`${base}/healthz`)).status,
    async () => (await fetch(`${base}/v1/content/${b.contract.slug}?q=${b.collection.slug}`)).status,
    async () => (await fetch(`${base}/v1/queue/${b.contract.slug}?q=${b.collection.slug}&access_token=${b.token}`)).status,
  ];
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let n = 0; busy() && n < max; n++) {
    const due = t0 + n * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    expect(await reads[n % reads.length]!()).toBe(200);
    latencies.push(performance.now() - due);
  }
  const end = performance.now();
  for (let n = latencies.length; n < max && t0 + n * intervalMs < end; n++) latencies.push(end - (t0 + n * intervalMs));
  return latencies;
}
