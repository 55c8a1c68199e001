/**
 * The Twitch chat connection is held by one collector process of the installation, and survives
 * its death (issue 38 point 5, docs/services.md#twitch-chat): two `sluice serve --role collector`
 * processes on one PostgreSQL and a local fake chat server (test/fake-twitch-chat.ts) where
 * messages are said all along; only one process connects; the holder is killed with SIGKILL; the
 * other takes over once the lease has run out, joins the channel again, and every message said
 * while a connection was open is stored once.
 *
 * PostgreSQL run only: on SQLite there is one process (the suite name says why it skips).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { TWITCH_CHAT } from '../../src/services/twitch/stream/chat.ts';
import { buildTenant, freshDatabaseEnv, tempDir, testPostgresUrl } from '../helper.ts';
import { type FakeTwitchChat, startFakeTwitchChat } from '../fake-twitch-chat.ts';
import { type Started, processGroupOf, startRole, stopProcess, until } from '../processes.ts';

/** One message every this many ms while the test runs. */
const EVERY_MS = 50;

const processes: Started[] = [];
let fake: FakeTwitchChat | undefined;
let db: Db | undefined;

afterAll(async () => {
  await Promise.all(processes.map((p) => stopProcess(p.child, 'SIGTERM')));
  await db?.destroy();
  await fake?.close();
});

describe('Twitch chat across collector processes on PostgreSQL', () => {
  it('one connection for the installation; another collector takes it over when its holder is killed', async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has one process';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    fake = await startFakeTwitchChat();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATA_DIR: tempDir(),
      ...(await freshDatabaseEnv()),
      ALLOW_PRIVATE_FETCH: 'true',
      TWITCH_CHAT_URL: fake.url,
      JETSTREAM_URL: 'off',
      SLUICE_BOOTSTRAP: 'false',
      LOG_LEVEL: 'warn',
    };
    processes.push(...(await Promise.all([startRole('collector-1', 'collector', env), startRole('collector-2', 'collector', env)])));

    const config = loadConfig(env);
    db = openDb(config.databaseUrl);
    const tenant = await buildTenant(db);
    const app = await buildApp({ ...config, logLevel: 'silent' }, { db });
    const created = await app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${tenant.token}`,
      payload: { service: 'twitch', type: 'channel', input: 'ronni', contractId: tenant.contract.id, collectionId: tenant.collection.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    const inputId = (created.json() as { _id: string })._id;

    const holderGroup = async () => {
      const row = await db!.selectFrom('streams').select(['holder', 'expiresAt']).where('name', '=', TWITCH_CHAT).executeTakeFirst();
      return row && Number(row.expiresAt) > Date.now() ? processGroupOf(Number(row.holder.split(':').at(-2))) : undefined;
    };
    const joined = () => (fake!.open().length === 1 && fake!.open()[0]!.channels.has('ronni') ? fake!.open()[0] : undefined);
    const first = await until('a collector to join the channel', joined, 60_000);

    // Messages all along: the ids said while the channel was joined on an open connection are the ones to be stored.
    const heard: { id: string; at: number }[] = [];
    let most = 0;
    let talking = true;
    const talker = (async () => {
      for (let n = 0; talking && n < 4000; n++) {
        most = Math.max(most, fake!.open().length);
        if (joined()) heard.push({ id: `twitch_${fake!.say('ronni', `viewer${n % 7}`, `message ${n}`)}`, at: Date.now() });
        await new Promise((r) => setTimeout(r, EVERY_MS));
      }
    })();
    const storedIds = async () => (await db!.selectFrom('items').select('id').where('inputId', '=', inputId).execute()).map((r) => r.id);
    await until('messages stored', async () => ((await storedIds()).length >= 20 ? true : undefined), 30_000);
    expect(fake.connections.length).toBe(1); // the second collector never connected

    const victimGroup = (await until('the holder', holderGroup, 10_000))!;
    const victim = processes.find((p) => p.child.pid === victimGroup)!;
    expect(victim).toBeDefined();
    const survivor = processes.find((p) => p !== victim)!;
    await stopProcess(victim.child, 'SIGKILL');
    const killedAt = Date.now();

    await until('the survivor to hold the stream', async () => ((await holderGroup()) === survivor.child.pid ? true : undefined), 30_000);
    const second = await until('the survivor to join', () => (fake!.connections.length === 2 ? joined() : undefined), 30_000);
    const rejoinedAt = Date.now();
    expect(second).not.toBe(first);
    expect(rejoinedAt - killedAt).toBeLessThan(15_000);

    await new Promise((r) => setTimeout(r, 2000));
    talking = false;
    await talker;
    expect(most).toBe(1); // never two connections at once
    // A chat has no history: what was said to the dying process (from a second before the kill until the survivor joined) is lost; the rest is stored.
    const expected = heard.filter((h) => h.at < killedAt - 1000 || h.at > rejoinedAt).map((h) => h.id);
    expect(expected.filter((id) => heard.find((h) => h.id === id)!.at > rejoinedAt).length).toBeGreaterThan(10);
    const stored = await until('every message heard stored', async () => {
      const ids = await storedIds();
      return expected.every((id) => ids.includes(id)) ? ids : undefined;
    }, 30_000);
    // Each once (one row per item and input); a message said to the dying connection may be lost, never doubled.
    expect(new Set(stored).size).toBe(stored.length);
    const status = (await app.inject({ method: 'GET', url: `/collection/inputs/${inputId}?access_token=${tenant.token}` })).json() as { status: { feed: { mode: string } } };
    expect(status.status.feed.mode).toBe('stream');
    await app.close();
  }, 180_000);
});
