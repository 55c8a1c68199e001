/**
 * The Jetstream connection is held by one collector process of the installation, and survives
 * its death (issue 18, docs/services.md#bluesky-jetstream): two `sluice serve --role collector`
 * processes on one PostgreSQL and a local fake Jetstream publishing posts all along; the process
 * holding the connection is killed with SIGKILL; the other takes over within seconds, resumes
 * from the saved cursor, and every post published is stored exactly once.
 *
 * PostgreSQL run only: on SQLite there is one process (the suite name says why it skips).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type CollectorPair, startCollectorPair } from '../collector-pair.ts';
import { testPostgresUrl } from '../helper.ts';
import { type FakeJetstream, type JetstreamEvent, startFakeJetstream } from '../fake-jetstream.ts';
import { until } from '../processes.ts';

const LEASE_S = 2;
/** One post every this many ms while the test runs. */
const EVERY_MS = 50;

let pair: CollectorPair | undefined;
let fake: FakeJetstream | undefined;

afterAll(async () => {
  await pair?.close();
  await fake?.close();
});

describe('Jetstream across collector processes on PostgreSQL', () => {
  it('another collector takes the connection over when its holder is killed; every post is stored once', async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has one process';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    fake = await startFakeJetstream();
    // The two collectors, and a contract with one keyword input made through the API (in this process, same database).
    pair = await startCollectorPair(
      { JETSTREAM_URL: fake.url, BLUESKY_API_URL: fake.apiUrl, JETSTREAM_LEASE: String(LEASE_S) },
      { service: 'bluesky', type: 'keyword', input: 'wall' },
    );
    const { db, app, tenant, inputId, holder } = pair;
    await until('a collector to connect', () => (fake!.open() === 1 ? true : undefined), 60_000);

    // Posts all along: before, during and after the kill.
    const published: JetstreamEvent[] = [];
    let publishing = true;
    const publisher = (async () => {
      for (let n = 0; publishing && n < 2000; n++) {
        published.push(fake!.post(`did:plc:author${n % 7}`, `on the wall: post ${n}`));
        if (n % 3 === 0) fake!.post('did:plc:other', `not matched ${n}`);
        await new Promise((r) => setTimeout(r, EVERY_MS));
      }
    })();
    await until('posts stored', async () => ((await db.selectFrom('items').select('id').where('inputId', '=', inputId).execute()).length >= 20 ? true : undefined), 30_000);

    const connectionsBefore = fake.connections.length;
    const { survivor, killedAt } = await pair.killHolder('jetstream');

    // The survivor takes over within seconds (the lease runs out), resuming with a cursor.
    await until('the survivor to hold the stream', async () => ((await holder('jetstream')) === survivor ? true : undefined), 30_000);
    await until('the survivor to connect', () => (fake!.connections.length > connectionsBefore && fake!.open() === 1 ? true : undefined), 30_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(15_000);
    expect(fake.connections.at(-1)!.cursor).toMatch(/^\d+$/);

    // Posts go on a little, then stop; every one of them ends up stored, once.
    await new Promise((r) => setTimeout(r, 2000));
    publishing = false;
    await publisher;
    const expected = published.map((e) => `bluesky_${e.did}_${e.commit.rkey}`).sort();
    const stored = await until('every post stored', async () => {
      const rows = await db.selectFrom('items').select('id').where('collectionId', '=', tenant.collection.id).orderBy('id').execute();
      return rows.length >= expected.length ? rows.map((r) => r.id) : undefined;
    }, 30_000);
    expect(stored.sort()).toEqual(expected);
    const status = (await app.inject({ method: 'GET', url: `/collection/inputs/${inputId}?access_token=${tenant.token}` })).json() as { status: { collected: number; feed: { mode: string } } };
    expect(status.status.collected).toBe(expected.length);
    expect(status.status.feed.mode).toBe('stream');
  }, 180_000);
});
