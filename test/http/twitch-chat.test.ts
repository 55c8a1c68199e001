/**
 * The Twitch chat listener (services/twitch/stream/chat.ts, docs/services.md#twitch-chat) against
 * a local fake chat server (test/fake-twitch-chat.ts, IRC over WebSocket on 127.0.0.1): inputs
 * made through the API, lines sent by the fake (recorded ones from test/fixtures/twitch/ among
 * them), what is stored read from the database and the API. SQLite and PostgreSQL alike (one
 * listener here; test/e2e/twitch-chat-kill.test.ts has two collector processes).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamDeps } from '../../src/collect/streams.ts';
import { startTwitchChat, type TwitchChat, TWITCH_CHAT } from '../../src/services/twitch/stream/chat.ts';
import { backoffMs } from '../../src/services/kit/stream/websocket.ts';
import { CHAT_BOUNDS } from '../../src/services/twitch/stream/socket.ts';
import { createCollection } from '../../src/store/collections.ts';
import { build, buildTenant, type TestContext } from '../helper.ts';
import { until } from '../processes.ts';
import { type FakeTwitchChat, fixtureLine, startFakeTwitchChat } from '../fake-twitch-chat.ts';
import { expectOversizedRefused, expectSilentGivenUp } from '../oversized-frame.ts';

let fake: FakeTwitchChat | undefined;
const listeners: TwitchChat[] = [];
afterEach(async () => {
  while (listeners.length) await listeners.pop()!.stop();
  await fake?.close();
  fake = undefined;
});

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

async function setup(env: Record<string, string> = { ALLOW_PRIVATE_FETCH: 'true' }) {
  fake = await startFakeTwitchChat();
  const ctx = await build({ TWITCH_CHAT_URL: fake.url, ...env });
  const create = async (tenant: Tenant, channels: string[]) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(tenant.token)}`,
      payload: channels.map((input) => ({ service: 'twitch', type: 'channel', input, contractId: tenant.contract.id, collectionId: tenant.collection.id })),
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { _id: string }[] | { _id: string };
    return (Array.isArray(body) ? body : [body]).map((i) => i._id);
  };
  const listen = (options: { handshakeTimeoutMs?: number } = {}) => {
    const listener = startTwitchChat(streamDeps({ db: ctx.db, config: ctx.config, log: ctx.app.log }), { leaseMs: 600, graceMs: 500, ...options });
    listeners.push(listener);
    return listener;
  };
  return { ctx, fake: fake!, create, listen };
}

/** Item ids stored per input, with their state (one row per stored item; a double would show twice). */
async function storedByInput(ctx: TestContext): Promise<Map<string, string[]>> {
  const rows = await ctx.db.selectFrom('items').select(['inputId', 'id', 'state']).orderBy('id').execute();
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(row.inputId, [...(out.get(row.inputId) ?? []), `${row.id} ${row.state}`]);
  return out;
}

async function feedOf(ctx: TestContext, tenant: Tenant, id: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}?access_token=${encodeURIComponent(tenant.token)}` });
  return (res.json() as { status: { feed: { mode: string } } }).status.feed;
}

const joinedBy = (f: FakeTwitchChat, channels: string[]) => () => (f.open().length === 1 && channels.every((c) => f.open()[0]!.channels.has(c)) ? f.open()[0] : undefined);

describe('Twitch chat listener', () => {
  it('logs in anonymously, joins each channel once, and stores each message for every input of its channel, of every contract', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db, 'Acme');
    const other = await buildTenant(ctx.db, 'Other');
    const [ronni, xyzw] = await create(acme, ['ronni', 'xyzw']);
    const [theirs] = await create(other, ['#Ronni']);
    const listener = listen();
    const connection = await until('the channels joined', joinedBy(fake, ['ronni', 'xyzw']), 10_000);
    await until('the inputs to stream', async () => ((await feedOf(ctx, acme, ronni!)).mode === 'stream' ? true : undefined), 10_000);

    // The documented anonymous login: no PASS, NICK justinfan<digits>, tags and commands asked for; one JOIN per channel.
    expect(connection.lines[0]).toBe('CAP REQ :twitch.tv/tags twitch.tv/commands');
    expect(connection.lines[1]).toMatch(/^NICK justinfan\d+$/);
    expect(connection.lines.filter((l) => l.startsWith('PASS'))).toEqual([]);
    expect(connection.lines.filter((l) => l.startsWith('JOIN')).flatMap((l) => l.slice(5).split(',')).sort()).toEqual(['#ronni', '#xyzw']);

    fake.send('ronni', fixtureLine('privmsg_emotes.irc'));
    const inXyzw = fake.say('xyzw', 'viewer', 'hello <script>');
    await until('every message stored', async () => ((await storedByInput(ctx)).get(xyzw!)?.length === 1 && (await storedByInput(ctx)).get(theirs!)?.length === 1 ? true : undefined), 10_000);
    const stored = await storedByInput(ctx);
    expect(stored.get(ronni!)).toEqual(['twitch_b34ccfc7-4977-403a-8a94-33c6bac34fb8 published']);
    expect(stored.get(theirs!)).toEqual(['twitch_b34ccfc7-4977-403a-8a94-33c6bac34fb8 published']);
    expect(stored.get(xyzw!)).toEqual([`twitch_${inXyzw} published`]);

    // The item as the API serves it, from the recorded line.
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/content/${acme.contract.slug}?q=${acme.collection.slug}&since=0` });
    const items = content.json() as Record<string, unknown>[];
    expect(items.find((i) => i.id === 'twitch_b34ccfc7-4977-403a-8a94-33c6bac34fb8')).toMatchObject({
      service: 'twitch',
      type: 'status',
      text: 'Kappa Keepo Kappa',
      url: 'https://www.twitch.tv/ronni',
      date: '2017-10-05T23:36:12.675Z',
      author: { name: 'ronni', username: 'ronni', userid: '1337', url: 'https://www.twitch.tv/ronni' },
      media: null,
    });
    expect(items.find((i) => i.id === `twitch_${inXyzw}`)?.text).toBe('hello &lt;script&gt;');

    // An input deleted: its channel is parted.
    const off = await ctx.app.inject({ method: 'DELETE', url: `/collection/inputs/${xyzw}?access_token=${encodeURIComponent(acme.token)}` });
    expect(off.statusCode, off.body).toBeLessThan(300);
    await until('the channel parted', () => (connection.lines.includes('PART #xyzw') ? true : undefined), 10_000);
    expect(listener.status().channels).toEqual(['ronni']);

    // Stopping hands the inputs back to polling and gives the lease up.
    await listeners.pop()!.stop();
    expect((await feedOf(ctx, acme, ronni!)).mode).toBe('poll');
    const lease = await ctx.db.selectFrom('streams').select('expiresAt').where('name', '=', TWITCH_CHAT).executeTakeFirstOrThrow();
    expect(Number(lease.expiresAt)).toBe(0);
  });

  it('answers PING with PONG, reconnects at once on RECONNECT and with a back-off when dropped, and joins again', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, ['ronni']);
    const listener = listen();
    const first = await until('the channel joined', joinedBy(fake, ['ronni']), 10_000);

    fake.send(null, fixtureLine('ping_doc.irc'));
    await until('the PONG', () => (first.lines.includes('PONG :tmi.twitch.tv') ? true : undefined), 10_000);

    fake.send(null, fixtureLine('reconnect_doc.irc'));
    const second = await until('a new connection after RECONNECT', () => (fake.connections.length === 2 ? joinedBy(fake, ['ronni'])() : undefined), 10_000);
    expect(first.closed).toBe(true);
    fake.say('ronni', 'a_viewer', 'after the reconnect');

    fake.drop();
    const third = await until('a new connection after the drop', () => (fake.connections.length === 3 ? joinedBy(fake, ['ronni'])() : undefined), 10_000);
    expect(second.closed).toBe(true);
    fake.say('ronni', 'a_viewer', 'after the drop');
    await until('both messages stored', async () => ((await storedByInput(ctx)).get(input!)?.length === 2 ? true : undefined), 10_000);
    expect(third.lines[1]).toMatch(/^NICK justinfan\d+$/);
    expect(listener.status().connections).toBe(3);
  });

  it('a server that asks to RECONNECT again and again is backed off: only the first RECONNECT of a short connection reconnects at once', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    await create(acme, ['ronni']);
    // A hostile or broken chat server: every connection is asked to reconnect as soon as it logs in.
    fake.onLogin = (c) => c.socket.send(':tmi.twitch.tv RECONNECT\r\n');
    listen();
    const [, second, third] = await until('three connections', () => (fake.connections.length >= 3 ? fake.connections : undefined), 20_000);
    // A lower bound only (load can only make the gap longer): the back-off after a first failure is 1 s.
    expect(third!.openedAt - second!.openedAt).toBeGreaterThanOrEqual(backoffMs(0) - 50);
  });

  it("removes what a moderator deletes: CLEARMSG's message, CLEARCHAT's user, in that channel only; a room clear removes nothing", async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [dallas, elsewhere] = await create(acme, ['dallas', 'elsewhere']);
    listen();
    await until('the channels joined', joinedBy(fake, ['dallas', 'elsewhere']), 10_000);
    fake.say('dallas', 'ronni', 'HeyGuys', { id: 'abc-123-def' });
    const ronniAgain = fake.say('dallas', 'ronni', 'again');
    const keep = fake.say('dallas', 'somebody', 'stays');
    const ronniElsewhere = fake.say('elsewhere', 'ronni', 'not in dallas');
    await until('the messages stored', async () => ((await storedByInput(ctx)).get(dallas!)?.length === 3 && (await storedByInput(ctx)).get(elsewhere!)?.length === 1 ? true : undefined), 10_000);

    // Hostile: a CLEARMSG in another channel naming a message of #dallas removes nothing.
    fake.send('elsewhere', '@login=ronni;target-msg-id=abc-123-def :tmi.twitch.tv CLEARMSG #elsewhere :HeyGuys');
    fake.send('dallas', fixtureLine('clearchat_room_tags.irc'));
    // Lines are applied in order: once this marker is stored, the two lines before it were applied.
    fake.say('elsewhere', 'marker', 'after the hostile lines');
    await until('the marker stored', async () => ((await storedByInput(ctx)).get(elsewhere!)?.length === 2 ? true : undefined), 10_000);
    expect((await storedByInput(ctx)).get(dallas!)?.filter((row) => row.endsWith(' removed'))).toEqual([]);
    fake.send('dallas', fixtureLine('clearmsg_doc.irc'));
    await until('the message removed', async () => ((await storedByInput(ctx)).get(dallas!)?.includes('twitch_abc-123-def removed') ? true : undefined), 10_000);
    expect((await storedByInput(ctx)).get(dallas!)).toEqual([`twitch_${ronniAgain} published`, `twitch_${keep} published`, 'twitch_abc-123-def removed'].sort());

    fake.send('dallas', fixtureLine('clearchat_user_tags.irc'));
    await until('the user removed', async () => ((await storedByInput(ctx)).get(dallas!)?.includes(`twitch_${ronniAgain} removed`) ? true : undefined), 10_000);
    expect((await storedByInput(ctx)).get(dallas!)?.sort()).toEqual([`twitch_${ronniAgain} removed`, `twitch_${keep} published`, 'twitch_abc-123-def removed'].sort());
    expect((await storedByInput(ctx)).get(elsewhere!)).toContain(`twitch_${ronniElsewhere} published`);
  });

  it('serves each message of a channel as its own card: the channel page they share is not a duplicate key', async () => {
    const { ctx, fake, create, listen } = await setup();
    const tenant = await buildTenant(ctx.db);
    // A collection de-duplicating as one made through the API does by default.
    const acme = { ...tenant, collection: await createCollection(ctx.db, tenant.contract.id, { name: 'Chat', dedupe: 'url+text' }, 'test') };
    const [input] = await create(acme, ['ronni']);
    listen();
    await until('the channel joined', joinedBy(fake, ['ronni']), 10_000);
    const said = [fake.say('ronni', 'one_viewer', 'first thing said'), fake.say('ronni', 'two_viewer', 'something else entirely'), fake.say('ronni', 'ronni', 'the broadcaster speaks')];
    await until('the messages stored', async () => ((await storedByInput(ctx)).get(input!)?.length === 3 ? true : undefined), 10_000);
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/content/${acme.contract.slug}?q=${acme.collection.slug}&since=0` });
    const items = content.json() as { id: string; duplicates?: unknown[] }[];
    expect(items.map((i) => i.id).sort()).toEqual(said.map((id) => `twitch_${id}`).sort());
    expect(items.filter((i) => i.duplicates?.length)).toEqual([]);
  });

  it('refuses a channel that is not a Twitch login through the API, naming input (no IRC line can be slipped in)', async () => {
    const { ctx } = await setup();
    const acme = await buildTenant(ctx.db);
    for (const input of ['ronni\r\nPRIVMSG #x :spam', 'ronni,#other', 'abc', 'https://www.twitch.tv/ronni']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/collection/inputs?access_token=${encodeURIComponent(acme.token)}`,
        payload: { service: 'twitch', type: 'channel', input, contractId: acme.contract.id, collectionId: acme.collection.id },
      });
      expect(res.statusCode, input).toBe(400);
      expect((res.json() as { errors: { propertyName: string }[] }).errors[0]!.propertyName).toBe('input');
    }
  });

  it("keeps a channel's NOTICE (a suspended channel) as the listener's last error", async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    await create(acme, ['gone_channel']);
    const listener = listen();
    await until('the channel joined', joinedBy(fake, ['gone_channel']), 10_000);
    fake.send('gone_channel', '@msg-id=msg_channel_suspended :tmi.twitch.tv NOTICE #gone_channel :This channel does not exist or has been suspended.');
    await until('the notice', () => (listener.status().lastError?.includes('msg_channel_suspended') ? true : undefined), 10_000);
    expect(listener.status().lastError).toBe('#gone_channel: msg_channel_suspended: This channel does not exist or has been suspended.');
  });

  it('connects through the private-address guard: a loopback chat URL is refused unless ALLOW_PRIVATE_FETCH', async () => {
    const { ctx, fake, create, listen } = await setup({});
    const acme = await buildTenant(ctx.db);
    await create(acme, ['ronni']);
    const listener = listen();
    await until('the refusal', () => (listener.status().lastError ? true : undefined), 10_000);
    expect(listener.status().lastError).toMatch(/public address|blocked|not allowed/i);
    expect(listener.status().connected).toBe(false);
    expect(fake.connections.filter((c) => c.lines.length)).toEqual([]);
  });

  it('a chat server sending one frame over the bound (100 MiB announced) is cut at its header, recorded, reconnected with the back-off, and never buffered', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, ['ronni']);
    fake.hostile = 'oversized';
    const listener = await expectOversizedRefused(fake, listen, CHAT_BOUNDS.maxMessageBytes);

    // The server mends its ways: the listener goes on, joins and stores.
    fake.hostile = null;
    await until('the channel joined', joinedBy(fake, ['ronni']), 10_000);
    fake.say('ronni', 'a_viewer', 'after the refused frame');
    await until('the message stored', async () => ((await storedByInput(ctx)).get(input!)?.length === 1 ? true : undefined), 10_000);
  });

  it('a chat server that accepts the connection and never answers the handshake is given up after the handshake bound, not after 300 s', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, ['ronni']);
    fake.hostile = 'silent';
    const listener = listen({ handshakeTimeoutMs: 300 });
    await expectSilentGivenUp(fake, listener);

    fake.hostile = null;
    await until('the channel joined', joinedBy(fake, ['ronni']), 10_000);
    fake.say('ronni', 'a_viewer', 'after the silent server');
    await until('the message stored', async () => ((await storedByInput(ctx)).get(input!)?.length === 1 ? true : undefined), 10_000);
  });
});
