/**
 * The page cache (cache.ts): what is built, what is kept, what is evicted. Pure apart from the
 * clock, which each call is given.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createPageCache, SEEN_KEYS } from './cache.ts';
import { renderJson } from './respond.ts';

/** A cache and a counter of the pages it had built. */
function counted(maxBytes = 1 << 20, ttlMs = 5000) {
  const cache = createPageCache({ maxBytes, ttlMs });
  let builds = 0;
  const read = (key: string, version = 1, now = 0, body = `"${key}"`) =>
    cache.get(key, version, async () => {
      builds++;
      return renderJson(body, undefined, 5);
    }, now);
  return { cache, read, builds: () => builds };
}

describe('page cache', () => {
  it('keeps a page from its second miss on (a page asked once is built, sent and not kept)', async () => {
    // [reads of one key, pages built, pages kept]
    const table: [number, number, number][] = [
      [1, 1, 0],
      [2, 2, 1],
      [3, 2, 1],
      [10, 2, 1],
    ];
    for (const [reads, built, kept] of table) {
      const { cache, read, builds } = counted();
      for (let i = 0; i < reads; i++) expect((await read('a')).body.toString()).toBe('"a"');
      expect([builds(), cache.size], `${reads} reads`).toEqual([built, kept]);
      expect(cache.fresh('a', 1, 0) !== undefined, `${reads} reads`).toBe(kept === 1);
    }
  });

  it('keeps no page of a stream of one-off reads, and they do not evict the pages read again', async () => {
    const page = `"${'x'.repeat(1000)}"`;
    // Room for four pages of 1 000 bytes (an entry counts its key and 400 bytes more).
    const { cache, read, builds } = counted(4 * 1500);
    await read('hot', 1, 0, page);
    await read('hot', 1, 0, page);
    expect(cache.fresh('hot', 1, 0)).toBeDefined();
    for (let i = 0; i < 100; i++) await read(`until=${i}`, 1, 0, page);
    expect(cache.size).toBe(1);
    expect(cache.fresh('hot', 1, 0)).toBeDefined();
    expect(builds()).toBe(102);
  });

  it('keeps a page again at once when it was kept before, at another version or past its time', async () => {
    const { cache, read, builds } = counted();
    await read('a', 1, 0);
    await read('a', 1, 0);
    await read('a', 2, 0);
    expect(cache.fresh('a', 2, 0)).toBeDefined();
    await read('a', 2, 10_000);
    expect(cache.fresh('a', 2, 10_000)).toBeDefined();
    expect(builds()).toBe(4);
  });

  it('forgets the oldest keys missed once beyond its bound', async () => {
    const { cache, read } = counted();
    await read('first');
    for (let i = 0; i < SEEN_KEYS; i++) await read(`other ${i}`);
    await read('first');
    expect(cache.fresh('first', 1, 0)).toBeUndefined();
    await read('other 1');
    expect(cache.fresh('other 1', 1, 0)).toBeDefined();
  });

  it('evicts the least recently used page beyond its size (a page read again moves at most once a second)', async () => {
    const page = `"${'x'.repeat(1000)}"`;
    // [when `a` is read again (ms after it was kept), which pages stay]
    const table: [number, boolean[]][] = [
      [1000, [true, false, true, true, true]],
      [999, [false, true, true, true, true]],
    ];
    for (const [at, kept] of table) {
      const { cache, read } = counted(4 * 1500);
      for (const key of ['a', 'b', 'c', 'd']) for (let i = 0; i < 2; i++) await read(key, 1, 0, page);
      cache.fresh('a', 1, at);
      for (let i = 0; i < 2; i++) await read('e', 1, at, page);
      expect(['a', 'b', 'c', 'd', 'e'].map((key) => cache.fresh(key, 1, at) !== undefined), `a read again at ${at} ms`).toEqual(kept);
    }
  });

  it('keeps the gzip form of a page rebuilt the same past its time, and compresses a changed one anew', async () => {
    const big = (fill: string) => `"${fill.repeat(2000)}"`;
    const { cache, read } = counted();
    await read('a', 1, 0, big('x'));
    const kept = await read('a', 1, 0, big('x'));
    expect(kept.gzip).toBeDefined();
    // Past its time, built again with the same body: the same compressed bytes, not compressed again.
    const same = await read('a', 1, 10_000, big('x'));
    expect(same.gzip).toBe(kept.gzip);
    // Built with another body (a new item, or a new version): its own gzip form and entity tag, never the old one.
    const changed = await read('a', 2, 10_000, big('y'));
    expect(changed.gzip).not.toBe(kept.gzip);
    expect(changed.gzip!.etag).not.toBe(kept.gzip!.etag);
    expect(gunzipSync(changed.gzip!.body).toString()).toBe(big('y'));
    expect(cache.fresh('a', 2, 10_000)?.gzip).toBe(changed.gzip);
  });
});
