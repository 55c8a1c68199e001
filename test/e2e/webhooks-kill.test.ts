/**
 * At-least-once webhook delivery across a crash (docs/api.md#webhook-delivery): the service,
 * started the way `npm start` starts it, is killed with SIGKILL while its deliveries are under
 * way (the receiver holds them unanswered); started again on the same database, it delivers every
 * pending event, none lost, each signature verified with the `standardwebhooks` package.
 * Runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL (where a dead process's claims end
 * with their lease).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { buildItem, buildTenant, freshDatabaseEnv, seedItems, tempDir } from '../helper.ts';
import { type Receiver, startReceiver } from '../webhook-receiver.ts';

const root = new URL('../../', import.meta.url).pathname;
const ITEMS = 5;

let service: ChildProcess | undefined;
let receiver: Receiver | undefined;
let db: Db | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `npm start` with `env`; resolves once it listens. */
async function start(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn('npm', ['start'], { cwd: root, env, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  await until('the service to listen', () => {
    if (child.exitCode !== null) throw new Error(`the service exited: ${stderr}`);
    return stdout.includes('"status":"listening"') ? true : undefined;
  });
  return child;
}

function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, signal);
  return exited;
}

afterAll(async () => {
  if (service) await kill(service, 'SIGTERM');
  await receiver?.close();
  await db?.destroy();
});

describe('webhook delivery across a SIGKILL', () => {
  it('delivers the pending events after a restart, none lost', async () => {
    receiver = await startReceiver();
    let holding = true;
    receiver.answer = () => (holding ? 'hang' : 200);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      DATA_DIR: tempDir(),
      ...(await freshDatabaseEnv()),
      ALLOW_PRIVATE_FETCH: 'true',
      SLUICE_BOOTSTRAP: 'false',
      LOG_LEVEL: 'warn',
      // Longer than the test holds the requests; a dead process's claims end after 2 × this + 10 s (PostgreSQL).
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_RETRY_MS: '100',
    };
    const url = env.DATABASE_URL ?? `sqlite:${env.DATA_DIR}/sluice.db`;
    db = openDb(url);
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    const ids = Array.from({ length: ITEMS }, (_, i) => `rss_kill_${i}`);
    await seedItems(db, tenant, ids.map((id) => buildItem({ id })), 'unpublished');

    service = await start(env);
    const auth = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/collection/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Crash test', contractId: tenant.contract.id, url: `${receiver.url}/hook`, events: ['item.published'] }),
    });
    expect(created.status).toBe(201);
    receiver.secrets.set('/hook', ((await created.json()) as { secret: string }).secret);
    const moderated = await fetch(`${base}/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}`, { method: 'PATCH', headers: auth, body: JSON.stringify({ ids, state: 'published' }) });
    expect(moderated.status).toBe(200);

    // Deliveries under way, unanswered: the process dies with them.
    await until('a delivery under way', () => (receiver!.received.length > 0 ? true : undefined));
    await kill(service, 'SIGKILL');
    const beforeKill = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    holding = false;

    service = await start(env);
    await until(`${ITEMS} events delivered`, () => (new Set(receiver!.delivered().map((r) => r.headers['webhook-id'])).size === ITEMS ? true : undefined));
    const delivered = receiver.delivered();
    expect(delivered.every((r) => r.event?.type === 'item.published'), 'every signature verifies').toBe(true);
    expect(new Set(delivered.map((r) => r.event!.data.itemId))).toEqual(new Set(ids));
    // The events cut off by the kill are among those delivered after the restart (same webhook-id).
    for (const id of beforeKill) expect(delivered.some((r) => r.headers['webhook-id'] === id)).toBe(true);
    // …and recorded as delivered, each once in the outbox.
    await until('the outbox to record the deliveries', async () => {
      const rows = await db!.selectFrom('webhookOutbox').select('status').execute();
      return rows.length === ITEMS && rows.every((row) => row.status === 'delivered') ? true : undefined;
    });
  }, 180_000);
});
