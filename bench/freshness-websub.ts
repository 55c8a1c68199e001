/**
 * Freshness through WebSub (issue 18, `npm run bench:freshness`): a local feed names a local fake
 * hub (test/websub-hub.ts); an in-process Sluice (the app listening on 127.0.0.1, SQLite, its
 * WebSub subscriber) polls the feed once, subscribes, and the hub verifies the intent; then the
 * hub publishes `items` entries spread evenly over `seconds`, one signed notification each, and a
 * reader polls the public content API (`GET /v1/content/{contract}?q=…&count=100`,
 * CONTENT_MAX_AGE=0) every 50 ms. Per item: publish (just before the hub sends it) → first read
 * that lists it. Goal: p50 and p99 under 2 s at 1 000 items over a minute. Then every entry seen
 * is deleted (a signed notification carrying its Atom tombstone, RFC 6721), as many over as long,
 * and each one's time from the notification to gone from the content read is measured
 * (`removal.ts`; goal: p99 ≤ 5 s).
 *
 * The machine is shared: `notes` carry the baseline measured in the same run (the p50 of a bare
 * content read, the reader's own cost and granularity), the ratios against it, and the load
 * average. `node bench/freshness-websub.ts [items] [seconds]` runs it alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { createFetcher } from '../src/collect/fetch.ts';
import { refreshInput } from '../src/collect/refresh.ts';
import { startWebsub } from '../src/collect/websub/subscriber.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/lib/ids.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { findInput, insertInputs } from '../src/store/inputs.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { feedItemId, TOMBSTONES_NS } from '../src/services/kit/feed.ts';
import { startFakeHub } from '../test/websub-hub.ts';
import { type Freshness, quantile } from './figures.ts';
import { measureRemoval } from './removal.ts';

const READ_EVERY_MS = 50;

/** One Atom entry document of entry `n`, dated `at` (ms); with `deleted`, a feed holding only the tombstone of that entry (RFC 6721). */
function notification(topic: string, hub: string, n: number, at: number, deleted = false): string {
  const date = new Date(at).toISOString();
  return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:at="${TOMBSTONES_NS}"><title>Bench</title><id>urn:bench</id><link rel="hub" href="${hub}"/><link rel="self" href="${topic}"/><updated>${date}</updated>`
    + (deleted ? `<at:deleted-entry ref="urn:bench:${n}" when="${date}"/>`
      : `<entry><id>urn:bench:${n}</id><title>Bench entry ${n}</title><link href="https://example.com/bench/${n}"/><updated>${date}</updated><content type="html">Entry number ${n} of the freshness bench</content></entry>`)
    + '</feed>';
}

export async function measure(options: { items: number; seconds: number }): Promise<Freshness> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-websub-'));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ALLOW_PRIVATE_FETCH: 'true', CONTENT_MAX_AGE: '0', RATE_LIMIT_PUBLIC: '0' });
  const db = openDb(config.databaseUrl);
  const hub = await startFakeHub(86_400);
  let topic = '';
  const feed = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/atom+xml' }).end(notification(topic, hub.url, -1, Date.now())));
  const fetch = createFetcher({ allowPrivate: true });
  const app = await (async () => {
    await migrateToLatest(db);
    return buildApp(config, { db });
  })();
  let websub: ReturnType<typeof startWebsub> | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    config.apiUrl = base;
    await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
    topic = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/feed.xml`;

    const now = Date.now();
    const contract = await createContract(db, 'Bench', 'bench');
    const collection = await createCollection(db, contract.id, { name: 'Freshness' }, 'bench');
    const inputId = newId();
    await db.transaction().execute((trx) => insertInputs(trx, [{
      id: inputId, contractId: contract.id, collectionId: collection.id, service: 'rss', type: 'feed', input: topic,
      filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
      nextRunAt: 0, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', now),
    }]));
    // The poll finds the hub; the subscriber subscribes; the hub verifies.
    await refreshInput(db, (await findInput(db, contract.id, inputId))!, { fetch, services: config.services, pollInterval: 300 });
    websub = startWebsub({ db, config, fetch }, 3_600_000);
    await websub.tick();
    await hub.verified(1);
    if ((await findInput(db, contract.id, inputId))!.feedMode !== 'push') throw new Error('the subscription was not verified');

    const content = `${base}/v1/content/${contract.slug}?q=${collection.slug}&count=100`;
    const read = async () => (await (await globalThis.fetch(content)).json()) as Array<{ id: string; url: string }>;
    // Baseline: a bare content read in this run, on this machine, now.
    const bare: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await read();
      bare.push(performance.now() - t);
    }

    const published = new Map<string, number>();
    const seen = new Map<string, number>();
    const byId = new Map(Array.from({ length: options.items }, (_, n) => [feedItemId(`urn:bench:${n}`), n]));
    const key = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const t = performance.now();
        for (const item of await read()) if (!seen.has(key(item.url))) seen.set(key(item.url), performance.now());
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, READ_EVERY_MS - (performance.now() - t))));
      }
    })();

    const spacing = (options.seconds * 1000) / options.items;
    const start = performance.now();
    const sends: Promise<unknown>[] = [];
    let failed = 0;
    for (let n = 0; n < options.items; n++) {
      const due = start + n * spacing;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      published.set(String(n), performance.now());
      sends.push(hub.publish(topic, notification(topic, hub.url, n, Date.now())).then((statuses) => {
        if (statuses[0] !== 204) failed++;
      }));
    }
    await Promise.all(sends);
    // Bounded wait for the last ones to show.
    const deadline = performance.now() + 30_000;
    while (seen.size < options.items + 1 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    reading = false;
    await reader;

    const latencies = [...published].map(([n, at]) => (seen.get(n) ?? Number.POSITIVE_INFINITY) - at);
    // Then each entry seen is deleted (a signed notification carrying its tombstone), as many over as long.
    let failedRemovals = 0;
    const removal = await measureRemoval({
      ids: [...published.keys()].filter((n) => seen.has(n)).map((n) => feedItemId(`urn:bench:${n}`)),
      seconds: options.seconds,
      remove: (id) => hub.publish(topic, notification(topic, hub.url, byId.get(id)!, Date.now(), true)).then((statuses) => {
        if (statuses[0] !== 204) failedRemovals++;
      }),
      async listed() {
        const ids = new Set<string>();
        for (let offset = 0; offset < 100_000; offset += 100) {
          const page = (await (await globalThis.fetch(`${content}&offset=${offset}`)).json()) as Array<{ id: string }>;
          for (const item of page) ids.add(item.id);
          if (page.length < 100) break;
        }
        return ids;
      },
    });
    removal.notes = { ...removal.notes, failedNotifications: failedRemovals };
    const missing = latencies.filter((l) => !Number.isFinite(l)).length;
    const p50 = quantile(latencies, 0.5);
    const p99 = quantile(latencies, 0.99);
    const baseline = quantile(bare, 0.5);
    return {
      path: 'websub',
      items: options.items,
      p50Ms: Math.round(p50),
      p99Ms: Number.isFinite(p99) ? Math.round(p99) : -1,
      notes: {
        seconds: options.seconds,
        missing,
        failedNotifications: failed,
        baselineReadP50Ms: Math.round(baseline * 10) / 10,
        p50VsBaselineRead: Math.round((p50 / baseline) * 10) / 10,
        p99VsBaselineRead: Number.isFinite(p99) ? Math.round((p99 / baseline) * 10) / 10 : 'n/a',
        readEveryMs: READ_EVERY_MS,
        loadavg: loadavg().map((l) => l.toFixed(2)).join(' '),
      },
      removal,
    };
  } finally {
    await websub?.stop();
    await app.close();
    await hub.close();
    await new Promise((resolve) => feed.close(resolve));
    await fetch.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const items = Number(process.argv[2] ?? 1000);
  const seconds = Number(process.argv[3] ?? 60);
  const result = await measure({ items, seconds });
  console.log(`websub: ${result.items} items over ${seconds} s: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms (goal < 2000 ms) ${JSON.stringify(result.notes)}`);
  console.log(JSON.stringify(result));
}
