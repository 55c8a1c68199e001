/**
 * Freshness through Bluesky Jetstream (issue 18, docs/services.md#bluesky-jetstream): a local fake
 * Jetstream (test/fake-jetstream.ts, WebSocket on 127.0.0.1) publishes `items` posts evenly over
 * `seconds` into a real Sluice started in this process (`serve`, role `all`, SQLite, one keyword
 * input matching every post, JETSTREAM_URL at the fake); each post's time from publication to
 * being visible in `GET /v1/content/{contract}?q={collection}` (public, CONTENT_MAX_AGE=0, polled
 * every 100 ms) is measured. Goal: p50 and p99 under 2 s. Then every post seen is deleted (a
 * delete commit), as many over as long, and each one's time from deletion to gone from that
 * read is measured (`removal.ts`; goal: p99 ≤ 5 s).
 *
 * Run by `npm run bench:freshness` (bench/freshness.ts); alone: `node bench/freshness-jetstream.ts`
 * (BENCH_ITEMS, default 1000; BENCH_SECONDS, default 60).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/server.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { insertInputs } from '../src/store/inputs.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { type JetstreamEvent, startFakeJetstream } from '../test/fake-jetstream.ts';
import { type Freshness, quantile } from './figures.ts';
import { measureRemoval } from './removal.ts';

/** Publishes `items` posts over `seconds` and measures publish → visible (see the module). */
export async function measure(options: { items: number; seconds: number }): Promise<Freshness> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-jetstream-'));
  const fake = await startFakeJetstream();
  const config = loadConfig({
    DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, PORT: '0', LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false',
    ALLOW_PRIVATE_FETCH: 'true', JETSTREAM_URL: fake.url, BLUESKY_API_URL: fake.apiUrl, CONTENT_MAX_AGE: '0', RATE_LIMIT_PUBLIC: '0',
  });
  // The tenant and its input first, so that the listener finds it at start.
  const setup = openDb(config.databaseUrl);
  await migrateToLatest(setup);
  const contract = await createContract(setup, 'Freshness', 'bench');
  const collection = await createCollection(setup, contract.id, { name: 'Wall' }, 'bench');
  await setup.transaction().execute((trx) =>
    insertInputs(trx, [{
      id: 'bench-jetstream-input', contractId: contract.id, collectionId: collection.id, service: 'bluesky', type: 'keyword', input: 'freshness',
      filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
      nextRunAt: Date.now() + 3_600_000, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', Date.now()),
    }]),
  );
  await setup.destroy();
  const server = await serve(config, 'all');
  const base = server.summary.url;
  try {
    const connectStart = Date.now();
    for (let waited = 0; fake.open() === 0; waited += 50) {
      if (waited > 30_000) throw new Error('the listener did not connect to the fake Jetstream within 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const connectMs = Date.now() - connectStart;

    const publishedAt = new Map<string, number>();
    const visibleAt = new Map<string, number>();
    const events = new Map<string, JetstreamEvent>();
    const start = Date.now();
    const gapMs = (options.seconds * 1000) / options.items;
    const publisher = (async () => {
      for (let n = 0; n < options.items; n++) {
        const due = start + n * gapMs;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        const event = fake.post(`did:plc:bench${n % 50}`, `freshness check ${n}: the wall should show this within two seconds`);
        publishedAt.set(`bluesky_${event.did}_${event.commit.rkey}`, Date.now());
        events.set(`bluesky_${event.did}_${event.commit.rkey}`, event);
      }
    })();
    // Poll the public content API: items dated from the oldest post not yet seen.
    const deadline = start + options.seconds * 1000 + 30_000;
    let polls = 0;
    while ((visibleAt.size < options.items) && Date.now() < deadline) {
      const unseen = [...publishedAt].filter(([id]) => !visibleAt.has(id)).map(([, at]) => at);
      const since = Math.floor((unseen.length ? Math.min(...unseen) : Date.now()) / 1000) - 2;
      for (let offset = 0; offset < 2000; offset += 100) {
        const res = await fetch(`${base}/v1/content/${contract.slug}?q=${collection.slug}&since=${since}&count=100&offset=${offset}`);
        const page = (await res.json()) as { id: string }[];
        if (!Array.isArray(page)) throw new Error(`GET /v1/content answered ${res.status}: ${JSON.stringify(page)}`);
        const now = Date.now();
        for (const item of page) if (!visibleAt.has(item.id) && publishedAt.has(item.id)) visibleAt.set(item.id, now);
        if (page.length < 100) break;
      }
      polls += 1;
      await new Promise((r) => setTimeout(r, 100));
    }
    await publisher;
    const latencies = [...visibleAt].map(([id, at]) => at - publishedAt.get(id)!);
    // Then each visible post is deleted (a delete commit), as many over as long.
    const since = Math.floor(start / 1000) - 60;
    const removal = await measureRemoval({
      ids: [...publishedAt.keys()].filter((id) => visibleAt.has(id)),
      seconds: options.seconds,
      remove(id) {
        const event = events.get(id)!;
        fake.publish({ did: event.did, kind: 'commit', commit: { rev: `${event.commit.rev}d`, operation: 'delete', collection: 'app.bsky.feed.post', rkey: event.commit.rkey, cid: '' } });
      },
      async listed() {
        const ids = new Set<string>();
        for (let offset = 0; offset < 100_000; offset += 100) {
          const page = (await (await fetch(`${base}/v1/content/${contract.slug}?q=${collection.slug}&since=${since}&count=100&offset=${offset}`)).json()) as { id: string }[];
          for (const item of page) ids.add(item.id);
          if (page.length < 100) break;
        }
        return ids;
      },
    });
    return {
      path: 'jetstream',
      items: options.items,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      notes: { visible: visibleAt.size, maxMs: Math.max(...latencies), connectMs, polls, profileLookups: fake.profileLookups },
      removal,
    };
  } finally {
    await server.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const result = await measure({ items: Number(process.env.BENCH_ITEMS ?? 1000), seconds: Number(process.env.BENCH_SECONDS ?? 60) });
  console.log(`loadavg ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(JSON.stringify(result));
}
