/**
 * One listener per Mastodon stream across processes (docs/services.md#mastodon-streaming): two
 * Sluice processes (`npm start`, role all) on one PostgreSQL and a fake instance
 * (test/fake-mastodon.ts). Only one of them ever holds the tag's stream open; when it is killed
 * (SIGKILL: no goodbye, its lease runs out) the other takes the stream over within the lease
 * time, fills the gap with `min_id` from the cursor the dead one saved, and nothing published
 * meanwhile is lost or stored twice.
 *
 * PostgreSQL run only: the SQLite run has one process (the suite name says why).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { startFakeMastodon, type FakeMastodon } from '../fake-mastodon.ts';
import { freshDatabaseEnv, tempDir, testPostgresUrl } from '../helper.ts';
import { processGroupOf, cliTenant, type Started, startRole, stopProcess, until } from '../processes.ts';

let env: NodeJS.ProcessEnv;
let db: Db | undefined;
let fake: FakeMastodon | undefined;
const processes = new Map<string, Started>();

beforeAll(async () => {
  if (!testPostgresUrl) return;
  fake = await startFakeMastodon();
  env = { ...process.env, DATA_DIR: tempDir(), ...(await freshDatabaseEnv()), ALLOW_PRIVATE_FETCH: 'true', SLUICE_BOOTSTRAP: 'false', LOG_LEVEL: 'warn' };
  await Promise.all([['one', 'all'], ['two', 'all']].map(async ([name, role]) => processes.set(name!, await startRole(name!, role!, env))));
  db = openDb(String(env.DATABASE_URL));
}, 120_000);

afterAll(async () => {
  await Promise.all([...processes.values()].map((started) => stopProcess(started.child, 'SIGTERM')));
  await db?.destroy();
  await fake?.close();
});

describe('Mastodon streams on several processes (PostgreSQL)', () => {
  it('one process listens; when it dies the other takes over and nothing is lost or doubled', { timeout: 120_000 }, async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has one process';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    const { contract, collection, client } = await cliTenant(env, { contract: 'Stream News', collection: 'Wall', client: 'stream robot' });
    const { access_token: token } = await issueTokens(db!, String(client.consumer_id), { ttlSeconds: 3600, withRefresh: false });
    const api = processes.get('one')!.url;
    const created = await fetch(`${api}/collection/inputs?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'mastodon', type: 'tag', input: `${fake!.base}/tags/hoot`, contractId: contract._id, collectionId: collection._id }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    // Read through a process still alive.
    const content = async () => ((await (await fetch(`${[...processes.values()][0]!.url}/v1/content/${contract.slug}?q=${collection.slug}&limit=100`)).json()) as { id: string }[]).map((item) => item.id);
    const id = (status: string) => `mastodon_${fake!.host}:${status}`;

    await until('the stream open', () => (fake!.open() === 1 ? true : undefined), 60_000);
    fake!.publish(fake!.status({ id: '9001', tags: ['hoot'] }));
    await until('the first status stored', async () => ((await content()).includes(id('9001')) ? true : undefined), 30_000);

    // Which process holds it: the pid in the holder id.
    const lease = await db!.selectFrom('streams').selectAll().where('name', '=', `mastodon:${fake!.host}:hashtag:hoot`).executeTakeFirstOrThrow();
    expect(lease.cursor).toBe('9001');
    const pid = Number(/^mastodon-(\d+)-/.exec(lease.holder)![1]);
    const [holderName, holder] = [...processes].find(([, started]) => started.child.pid === processGroupOf(pid))!;
    const opened = fake!.opened;
    await stopProcess(holder.child, 'SIGKILL');
    processes.delete(holderName);
    const killedAt = Date.now();
    fake!.disconnect(); // the dead process's socket, closed at once rather than at TCP's pace
    fake!.publish(fake!.status({ id: '9002', tags: ['hoot'] })); // nobody listens now

    await until('the other process listening', () => (fake!.opened > opened && fake!.open() === 1 ? true : undefined), 60_000);
    expect(Date.now() - killedAt).toBeLessThan(30_000); // the lease (15 s) and a tick (5 s), with room for a loaded machine
    fake!.publish(fake!.status({ id: '9003', tags: ['hoot'] }));
    await until('the gap and the next status', async () => {
      const ids = await content();
      return ids.includes(id('9002')) && ids.includes(id('9003')) ? true : undefined;
    }, 30_000);
    expect(fake!.requests).toContain('/api/v1/timelines/tag/hoot?limit=40&min_id=9001');
    expect((await content()).sort()).toEqual([id('9001'), id('9002'), id('9003')]);
    expect(fake!.maxConcurrent).toBe(1);
  });
});
