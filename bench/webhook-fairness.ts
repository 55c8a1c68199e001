/**
 * `npm run bench:webhook-fairness` (issue 30 point 5): how long a healthy webhook's event waits
 * while another contract's webhook has BENCH_STUCK events pending to a receiver that accepts
 * connections and never answers (docs/api.md#webhook-delivery: "not the others'").
 *
 * Both receivers are local HTTP servers on 127.0.0.1; the delivery worker (`collect/deliver.ts`)
 * runs as a collector runs it (a look at the outbox every second). Once the stuck receiver holds
 * requests, contract B's webhook gets BENCH_EVENTS events one at a time; each one's latency is
 * from its commit to its arrival at B's receiver (ms). Prints p50 and max, how many of A's
 * requests were held at once, and, last, one JSON object.
 *
 * Environment: WEBHOOK_TIMEOUT_MS (default 10 000, the service's), BENCH_STUCK (default 200),
 * BENCH_EVENTS (default 5), DATABASE_URL (default a SQLite file in a temporary folder).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDelivery } from '../src/collect/deliver.ts';
import { loadConfig } from '../src/config.ts';
import { currentSecretKey, seal } from '../src/lib/secret-box.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { emitEvents } from '../src/store/outbox.ts';
import { quantile } from './figures.ts';

const STUCK = Number(process.env.BENCH_STUCK ?? 200);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5);
/** The longest wait for one of B's events, ms: then the run stops with an error. */
const GIVE_UP_MS = 600_000;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-webhook-fairness-'));
  const config = loadConfig({
    DATA_DIR: dir,
    DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${join(dir, 'bench.db')}`,
    ALLOW_PRIVATE_FETCH: 'true',
    LOG_LEVEL: 'silent',
    ...(process.env.WEBHOOK_TIMEOUT_MS ? { WEBHOOK_TIMEOUT_MS: process.env.WEBHOOK_TIMEOUT_MS } : {}),
  });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);

  let held = 0;
  let heldMost = 0;
  const stuck = createServer((req) => {
    req.resume();
    held++;
    heldMost = Math.max(heldMost, held);
    req.socket.once('close', () => held--);
  });
  const arrived: number[] = [];
  const healthy = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived.push(performance.now());
      res.writeHead(204).end();
    });
  });
  const urls = { a: `${await listen(stuck)}/a`, b: `${await listen(healthy)}/b` };

  const key = currentSecretKey(config);
  const now = Date.now();
  const contracts = { a: await createContract(db, 'Alpha', 'bench'), b: await createContract(db, 'Bravo', 'bench') };
  for (const name of ['a', 'b'] as const) {
    await db
      .insertInto('webhooks')
      .values({
        id: name.repeat(24), contractId: contracts[name].id, name, url: urls[name], events: JSON.stringify(['item.published']),
        secret: seal(key, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), keyId: key.id, active: 1, ...newRecordFields('bench', now),
      })
      .execute();
  }
  const published = (contractId: string, n: number) => ({ type: 'item.published' as const, subject: `item:bench:${contractId}:${n}`, data: { contractId, itemId: `rss_${n}` } });
  await db.transaction().execute((trx) => emitEvents(trx, contracts.a.id, Array.from({ length: STUCK }, (_, n) => published(contracts.a.id, n))));

  const worker = startDelivery({ db, config });
  for (let waited = 0; held === 0; waited += 10) {
    if (waited > 30_000) throw new Error('the stuck receiver got no request');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const latencies: number[] = [];
  for (let n = 0; n < EVENTS; n++) {
    const before = arrived.length;
    await db.transaction().execute((trx) => emitEvents(trx, contracts.b.id, [published(contracts.b.id, n)]));
    const committed = performance.now();
    while (arrived.length === before) {
      if (performance.now() - committed > GIVE_UP_MS) throw new Error(`B's event ${n} did not arrive within ${GIVE_UP_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    latencies.push(Math.round(arrived[before]! - committed));
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 900));
  }

  stuck.closeAllConnections();
  stuck.close();
  await worker.stop();
  healthy.close();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });

  const result = { stuck: STUCK, timeoutMs: config.webhookTimeoutMs, events: EVENTS, latencyMs: latencies, p50Ms: quantile(latencies, 0.5), maxMs: Math.max(...latencies), stuckHeldAtOnce: heldMost };
  console.log(`B's event with A's ${STUCK} events stuck (timeout ${config.webhookTimeoutMs} ms): p50 ${result.p50Ms} ms, max ${result.maxMs} ms over ${EVENTS}; A's requests held at once: ${heldMost}`);
  console.log(JSON.stringify(result));
}

await main();
