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
import { TWITCH_CHAT } from '../../src/services/twitch/stream/chat.ts';
import { type CollectorPair, startCollectorPair } from '../collector-pair.ts';
import { testPostgresUrl } from '../helper.ts';
import { type FakeTwitchChat, startFakeTwitchChat } from '../fake-twitch-chat.ts';
import { until } from '../processes.ts';

/** One message every this many ms while the test runs. */
const EVERY_MS = 50;

let pair: CollectorPair | undefined;
let fake: FakeTwitchChat | undefined;

afterAll(async () => {
  await pair?.close();
  await fake?.close();
});

describe('Twitch chat across collector processes on PostgreSQL', () => {
  it('one connection for the installation; another collector takes it over when its holder is killed', async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has one process';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    fake = await startFakeTwitchChat();
    pair = await startCollectorPair({ TWITCH_CHAT_URL: fake.url, JETSTREAM_URL: 'off' }, { service: 'twitch', type: 'channel', input: 'ronni' });
    const { db, app, tenant, inputId, holder } = pair;
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
    const storedIds = async () => (await db.selectFrom('items').select('id').where('inputId', '=', inputId).execute()).map((r) => r.id);
    await until('messages stored', async () => ((await storedIds()).length >= 20 ? true : undefined), 30_000);
    expect(fake.connections.length).toBe(1); // the second collector never connected

    const { survivor, killedAt } = await pair.killHolder(TWITCH_CHAT);

    await until('the survivor to hold the stream', async () => ((await holder(TWITCH_CHAT)) === survivor ? true : undefined), 30_000);
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
  }, 180_000);
});
