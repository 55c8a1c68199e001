/**
 * One story, one card across processes (docs/api.md#duplicates): two collector processes,
 * started as `npm start -- --role collector` on one PostgreSQL, each polling one of two feeds
 * that carry the same story (other guid, other tracking parameters), store it at the same moment
 * and still produce one card with the other as its duplicate.
 *
 * "At the same moment" is arranged, not hoped for: the test holds a row lock on the collection
 * (which every store takes to bump the collection's version), so the first store waits with its
 * claim of the story's URL uncommitted, and the second store waits on that claim; the lock is
 * released only when PostgreSQL shows both waiting (`pg_blocking_pids`). Each collector polls one
 * input at a time (COLLECT_CONCURRENCY 1), so the waiting first poll leaves the second feed to
 * the other process.
 *
 * PostgreSQL run only: the SQLite run has no shared database, so it skips this file (the test
 * name says why).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { newRecordFields } from '../../src/lib/time.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createContract } from '../../src/store/contracts.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { insertInputs } from '../../src/store/inputs.ts';
import { rowToItem } from '../../src/store/items/rows.ts';
import { freshDatabaseEnv, tempDir, testPostgresUrl } from '../helper.ts';
import { type Started, startRole, stopProcess, until } from '../processes.ts';

const TITLE = 'Scientists find a new species of deep sea octopus off the coast of Chile';
const ARTICLE = 'https://www.example-news.com/science/2026/nov/octopus';

/** Feed `n`: the story under its own guid, its link with the feed's own tracking parameters. */
const feed = (n: number) => `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Feed ${n}</title><link>https://feed${n}.example.org/</link><description>News</description>
<item><title>${TITLE}</title><link>${ARTICLE}?utm_source=feed${n}&amp;utm_medium=rss</link><guid isPermaLink="false">feed-${n}-octopus</guid>
<description>&lt;p&gt;The animal was filmed at a depth of 4000 metres by a remotely operated vehicle.&lt;/p&gt;</description>
<pubDate>${new Date(Date.now() - 3600_000).toUTCString()}</pubDate></item>
</channel></rss>`;

let server: Server | undefined;
let db: Db | undefined;
const collectors: Started[] = [];

beforeAll(async () => {
  if (!testPostgresUrl) return;
  server = createServer((req, res) => {
    const n = Number(/^\/feed\/(\d)$/.exec(req.url ?? '')?.[1] ?? Number.NaN);
    if (n !== 1 && n !== 2) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(feed(n));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const database = await freshDatabaseEnv();
  const env = {
    ...process.env,
    DATA_DIR: tempDir(),
    ...database,
    ALLOW_PRIVATE_FETCH: 'true',
    POLL_INTERVAL: '600',
    COLLECT_CONCURRENCY: '1',
    SLUICE_BOOTSTRAP: 'false',
    LOG_LEVEL: 'warn',
  };
  collectors.push(...(await Promise.all([startRole('collector-1', 'collector', env), startRole('collector-2', 'collector', env)])));
  db = openDb(database.DATABASE_URL!);
}, 120_000);

afterAll(async () => {
  await Promise.all(collectors.map(({ child }) => stopProcess(child, 'SIGTERM')));
  await db?.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe('de-duplication across processes on PostgreSQL', () => {
  it('makes one card of the same story stored by two collector processes at the same moment', async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has no shared database';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    const contract = await createContract(db!, 'Cluster News', 'test');
    const collection = await createCollection(db!, contract.id, { name: 'Wall', dedupe: 'url+text' }, 'test');
    const base = `http://127.0.0.1:${(server!.address() as AddressInfo).port}/feed/`;
    const now = Date.now();
    const inputIds = ['1'.repeat(24), '2'.repeat(24)];

    // The collection row held (as the version bump takes it) from before the feeds are due until both stores wait.
    await db!.transaction().execute(async (trx) => {
      await sql`select version from collections where id = ${collection.id} for no key update`.execute(trx);
      const holder = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      // On another connection, committed at once (the inputs' reference to the collection is not held up by this lock).
      await db!.transaction().execute((other) =>
        insertInputs(
          other,
          inputIds.map((id, i) => ({
            id, contractId: contract.id, collectionId: collection.id, service: 'rss', type: 'feed', input: `${base}${i + 1}`,
            filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
            nextRunAt: 0, failures: 0, collected: 0, rejected: 0, ...newRecordFields('test', now),
          })),
        ),
      );
      const waiting = async (blocker: number) =>
        (await sql<{ pid: number }>`select pid from pg_stat_activity where ${blocker} = any(pg_blocking_pids(pid))`.execute(db!)).rows[0]?.pid;
      // First store: its URL claim made, waiting for the collection row. Second: waiting for that claim.
      const first = await until('one store to wait for the collection', () => waiting(holder), 60_000);
      await until("the other store to wait for the first one's claim", () => waiting(first), 60_000);
    });

    const rows = await until('both feeds stored', async () => {
      const inputs = await db!.selectFrom('inputs').select(['collected', 'lastError']).where('id', 'in', inputIds).execute();
      return inputs.every((i) => i.collected === 1) ? inputs : undefined;
    });
    expect(rows.map((i) => i.lastError)).toEqual([null, null]);
    const cards = (await db!.selectFrom('items').selectAll().where('collectionId', '=', collection.id).execute()).map(rowToItem);
    expect(cards).toHaveLength(1);
    const card: ContentItem = cards[0]!;
    expect(card.title).toBe(TITLE);
    expect(card.duplicates).toHaveLength(1);
    const idOf = (guid: string) => `rss_${createHash('sha256').update(guid).digest('hex').slice(0, 32)}`;
    expect([card.id, card.duplicates![0]!.id].sort()).toEqual([idOf('feed-1-octopus'), idOf('feed-2-octopus')].sort());
  }, 180_000);
});
