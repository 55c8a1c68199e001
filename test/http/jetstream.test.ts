/**
 * The Bluesky Jetstream listener (services/bluesky/stream/jetstream.ts, docs/services.md#bluesky-jetstream)
 * against a local fake Jetstream (test/fake-jetstream.ts): inputs made through the API, posts
 * published by the fake, what is stored read from the database and the API. SQLite and
 * PostgreSQL alike (one listener here; test/e2e/jetstream-kill.test.ts has several processes).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type JetstreamListener, JETSTREAM, REWIND_US, startJetstream } from '../../src/services/bluesky/stream/jetstream.ts';
import { streamDeps } from '../../src/collect/streams.ts';
import { createCollection } from '../../src/store/collections.ts';
import { build, buildTenant, type TestContext } from '../helper.ts';
import { until } from '../processes.ts';
import { type FakeJetstream, startFakeJetstream } from '../fake-jetstream.ts';
import { expectOversizedRefused, expectSilentGivenUp } from '../oversized-frame.ts';
import { JETSTREAM_BOUNDS } from '../../src/services/bluesky/stream/jetstream-socket.ts';

let fake: FakeJetstream | undefined;
const listeners: JetstreamListener[] = [];
afterEach(async () => {
  while (listeners.length) await listeners.pop()!.stop();
  await fake?.close();
  fake = undefined;
});

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

async function setup(env: Record<string, string> = {}) {
  fake = await startFakeJetstream();
  const ctx = await build({ JETSTREAM_URL: fake.url, BLUESKY_API_URL: fake.apiUrl, ALLOW_PRIVATE_FETCH: 'true', JETSTREAM_LEASE: '2', ...env });
  const create = async (tenant: Tenant, inputs: { type: string; input: string }[]) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${encodeURIComponent(tenant.token)}`,
      payload: inputs.map((i) => ({ service: 'bluesky', ...i, contractId: tenant.contract.id, collectionId: tenant.collection.id })),
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { _id: string }[] | { _id: string };
    return (Array.isArray(body) ? body : [body]).map((i) => i._id);
  };
  const listen = (options: { handshakeTimeoutMs?: number } = {}) => {
    const listener = startJetstream(streamDeps({ db: ctx.db, config: ctx.config, log: ctx.app.log, refreshMs: 100, ...options }));
    listeners.push(listener);
    return listener;
  };
  return { ctx, fake: fake!, create, listen };
}

/** Item ids stored per input (one row per stored item; a double would show twice). */
async function storedByInput(ctx: TestContext): Promise<Map<string, string[]>> {
  const rows = await ctx.db.selectFrom('items').select(['inputId', 'id']).orderBy('id').execute();
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(row.inputId, [...(out.get(row.inputId) ?? []), row.id]);
  return out;
}

const itemId = (event: { did: string; commit: { rkey: string } }) => `bluesky_${event.did}_${event.commit.rkey}`;

async function feedOf(ctx: TestContext, tenant: Tenant, id: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}?access_token=${encodeURIComponent(tenant.token)}` });
  return (res.json() as { status: { feed: { mode: string; lastEvent: unknown } } }).status.feed;
}

describe('Jetstream listener', () => {
  it('stores each post for the inputs it matches (keyword, tag, user), of every contract, and for no other', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db, 'Acme');
    const other = await buildTenant(ctx.db, 'Other');
    fake.handles.set('alice.test', 'did:plc:alice');
    const [keyword, tag, user] = await create(acme, [
      { type: 'keyword', input: 'sluice gate' },
      { type: 'keyword', input: '#WallOfNews' },
      { type: 'user', input: '@alice.test' },
    ]);
    const [theirs] = await create(other, [{ type: 'keyword', input: 'gate' }]);
    const listener = listen();
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    await until('the inputs to stream', async () => ((await feedOf(ctx, acme, keyword!)).mode === 'stream' ? true : undefined), 10_000);

    const both = fake.post('did:plc:bob', 'The Sluice GATE opened!');
    const oneWord = fake.post('did:plc:bob', 'sluices and gates'); // not whole words: nobody
    const gateOnly = fake.post('did:plc:carol', 'a gate');
    const tagged = fake.post('did:plc:carol', 'look #wallofnews', { facetTags: ['wallofnews'] });
    const tagInText = fake.post('did:plc:carol', '#WallOfNews without facet'); // no tag facet: no tag
    const byAlice = fake.post('did:plc:alice', 'hello from alice');
    const aliceReply = fake.post('did:plc:alice', 'a reply', { reply: true }); // posts_no_replies
    const last = fake.post('did:plc:dave', 'gate again');

    await until('every match stored', async () => ((await storedByInput(ctx)).get(theirs!)?.length === 3 ? true : undefined), 10_000);
    await until('the last cursor saved', async () => {
      const row = await ctx.db.selectFrom('streams').select('cursor').where('name', '=', JETSTREAM).executeTakeFirst();
      return row?.cursor === String(last.time_us) ? true : undefined;
    }, 10_000);
    const stored = await storedByInput(ctx);
    expect(stored.get(keyword!)).toEqual([itemId(both)]);
    expect(stored.get(tag!)).toEqual([itemId(tagged)]);
    expect(stored.get(user!)).toEqual([itemId(byAlice)]);
    expect(stored.get(theirs!)?.sort()).toEqual([itemId(both), itemId(gateOnly), itemId(last)].sort());
    for (const nobody of [oneWord, tagInText, aliceReply]) expect([...stored.values()].flat()).not.toContain(itemId(nobody));

    // The item as the REST connector makes it, with the author from getProfiles.
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/content/${acme.contract.slug}?q=${acme.collection.slug}&since=0` });
    const items = content.json() as { id: string; author: { username: string; name: string; userid: string }; url: string; tags: string[] }[];
    const post = items.find((i) => i.id === itemId(tagged))!;
    expect(post.author).toMatchObject({ username: 'carol.test', name: 'Name carol', userid: 'did:plc:carol' });
    expect(post.url).toBe(`https://bsky.app/profile/carol.test/post/${tagged.commit.rkey}`);
    expect(post.tags).toEqual(['wallofnews']);
    expect(fake.connections[0]).toEqual({ cursor: null, wantedCollections: ['app.bsky.feed.post'] });
    const feed = await feedOf(ctx, acme, user!);
    expect(feed.mode).toBe('stream');
    expect(feed.lastEvent).not.toBeNull();

    // Stopping hands the inputs back to polling.
    await listeners.pop()!.stop();
    expect((await feedOf(ctx, acme, keyword!)).mode).toBe('poll');
  });

  it('reconnects and restarts from the saved cursor, rewound, without losing or doubling a post', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, [{ type: 'keyword', input: 'news' }]);
    let listener = listen();
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    const published: ReturnType<typeof fake.post>[] = [];
    for (let i = 0; i < 5; i++) published.push(fake.post('did:plc:a', `news ${i}`));
    const cursorNow = async () => (await ctx.db.selectFrom('streams').select('cursor').where('name', '=', JETSTREAM).executeTakeFirst())?.cursor;
    await until('the first posts checkpointed', async () => ((await cursorNow()) === String(published.at(-1)!.time_us) ? true : undefined), 10_000);

    // The connection drops; posts go on meanwhile; the listener comes back with the cursor.
    fake.drop();
    for (let i = 5; i < 10; i++) published.push(fake.post('did:plc:a', `news ${i}`));
    await until('the second connection', () => (fake.connections.length === 2 && fake.open() === 1 ? true : undefined), 10_000);
    expect(fake.connections[1]!.cursor).toBe(String(published[4]!.time_us - REWIND_US));
    for (let i = 10; i < 12; i++) published.push(fake.post('did:plc:a', `news ${i}`));
    await until('every post stored', async () => ((await storedByInput(ctx)).get(input!)?.length === 12 ? true : undefined), 10_000);

    // The process stops; posts go on; a new one resumes from the cursor.
    await until('the last posts checkpointed', async () => ((await cursorNow()) === String(published.at(-1)!.time_us) ? true : undefined), 10_000);
    await listeners.pop()!.stop();
    for (let i = 12; i < 15; i++) published.push(fake.post('did:plc:a', `news ${i}`));
    listener = listen();
    await until('every post stored after the restart', async () => ((await storedByInput(ctx)).get(input!)?.length === 15 ? true : undefined), 10_000);
    expect(fake.connections[2]!.cursor).toBe(String(published[11]!.time_us - REWIND_US));
    // Replayed posts (the rewind) were stored once: the ids are exactly the published ones.
    expect((await storedByInput(ctx)).get(input!)).toEqual(published.map(itemId).sort());
    const counted = await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${input}?access_token=${encodeURIComponent(acme.token)}` });
    expect((counted.json() as { status: { collected: number } }).status.collected).toBe(15);
  });

  it('removes a deleted post wherever it is stored, applies an update, and changes nothing for a delete it does not know', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db, 'Acme');
    const other = await buildTenant(ctx.db, 'Other');
    await create(acme, [{ type: 'keyword', input: 'news' }]);
    await create(other, [{ type: 'keyword', input: 'news' }]);
    const listener = listen();
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    const cursorIs = (event: { time_us: number }) => async () => {
      const row = await ctx.db.selectFrom('streams').select('cursor').where('name', '=', JETSTREAM).executeTakeFirst();
      return row?.cursor === String(event.time_us) ? true : undefined;
    };
    const titles = async (tenant: Tenant) => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0` });
      return (res.json() as { id: string; text: string }[]).map((i) => [i.id, i.text] as const).sort();
    };
    const count = async (tenant: Tenant) => Number((await ctx.app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0` })).json().count);
    const queued = async (tenant: Tenant) => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${encodeURIComponent(tenant.token)}` });
      expect(res.statusCode, res.body).toBe(200);
      return Object.fromEntries((res.json() as { id: string; state: string }[]).map((i) => [i.id, i.state]));
    };

    const gone = fake.post('did:plc:bob', 'news to be deleted');
    const edited = fake.post('did:plc:bob', 'news to be edited');
    const kept = fake.post('did:plc:bob', 'news that stays');
    await until('the posts stored', cursorIs(kept), 10_000);
    expect((await titles(acme)).map(([id]) => id)).toEqual([itemId(gone), itemId(edited), itemId(kept)].sort());

    const post = (event: typeof gone, commit: Partial<typeof gone.commit>) => fake.publish({ did: event.did, kind: 'commit', commit: { ...event.commit, rev: `${event.commit.rev}x`, ...commit } });
    post(edited, { operation: 'update', record: { ...edited.commit.record, text: 'news, edited at the source' } });
    post(gone, { operation: 'delete', record: undefined, cid: '' });
    // Deletes that name nothing stored: an unknown record key, another author's key, a like with the same key.
    post(gone, { operation: 'delete', record: undefined, rkey: '3kunknown0000' });
    fake.publish({ did: 'did:plc:carol', kind: 'commit', commit: { rev: 'c1', operation: 'delete', collection: 'app.bsky.feed.post', rkey: kept.commit.rkey, cid: '' } });
    const last = post(kept, { operation: 'delete', record: undefined, collection: 'app.bsky.feed.like' });
    await until('the deletes applied', cursorIs(last), 10_000);

    for (const tenant of [acme, other]) {
      expect(await titles(tenant)).toEqual([[itemId(edited), 'news, edited at the source'], [itemId(kept), 'news that stays']].sort());
      expect(await count(tenant)).toBe(2);
      expect(await queued(tenant)).toEqual({ [itemId(gone)]: 'removed', [itemId(edited)]: 'published', [itemId(kept)]: 'published' });
    }

    // A reconnect replays from 5 s before the cursor, the post's creation included: it stays removed.
    fake.drop();
    await until('the second connection', () => (fake.connections.length === 2 && fake.open() === 1 ? true : undefined), 10_000);
    const after = fake.post('did:plc:bob', 'news after the replay');
    await until('the replay stored', cursorIs(after), 10_000);
    expect((await titles(acme)).map(([id]) => id)).toEqual([itemId(edited), itemId(kept), itemId(after)].sort());
    expect((await queued(acme))[itemId(gone)]).toBe('removed');
  });

  it('matches 500 keyword inputs in one matcher', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    // Two collections (a post is stored once per collection): topics 0–249 and 250–499.
    const second = { ...acme, collection: await createCollection(ctx.db, acme.contract.id, { name: 'Second' }, 'test') };
    const words = Array.from({ length: 500 }, (_, i) => `topic${i}`);
    const ids = [
      ...(await create(acme, words.slice(0, 250).map((w) => ({ type: 'keyword', input: w })))),
      ...(await create(second, words.slice(250).map((w) => ({ type: 'keyword', input: w })))),
    ];
    const listener = listen();
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    // Post n names topics n and n+250 (and a near miss): inputs n and n+250 get it, no other.
    const posts = Array.from({ length: 50 }, (_, n) => fake.post(`did:plc:p${n}`, `about Topic${n * 5} and topic${n * 5 + 250}, not topic${n * 5}x`));
    const last = fake.post('did:plc:z', 'nothing here');
    await until('the posts checkpointed', async () => {
      const row = await ctx.db.selectFrom('streams').select('cursor').where('name', '=', JETSTREAM).executeTakeFirst();
      return row?.cursor === String(last.time_us) ? true : undefined;
    }, 20_000);
    const stored = await storedByInput(ctx);
    const expected = new Map<string, string[]>();
    posts.forEach((post, n) => {
      expected.set(ids[n * 5]!, [itemId(post)]);
      expected.set(ids[n * 5 + 250]!, [itemId(post)]);
    });
    expect(stored).toEqual(expected);
  });

  it('stops storing for an input deactivated, and hands it back to polling', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [kept, dropped] = await create(acme, [{ type: 'keyword', input: 'kept' }, { type: 'keyword', input: 'dropped' }]);
    const listener = listen();
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    await until('both streaming', async () => ((await feedOf(ctx, acme, dropped!)).mode === 'stream' ? true : undefined), 10_000);
    const current = (await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${dropped}?access_token=${acme.token}` })).json() as Record<string, unknown>;
    const res = await ctx.app.inject({
      method: 'PUT',
      url: `/collection/inputs/${dropped}?access_token=${acme.token}`,
      payload: { service: current.service, type: current.type, input: current.input, collectionId: current.collectionId, active: false },
    });
    expect(res.statusCode, res.body).toBe(200);
    await until('the input back to poll', async () => ((await feedOf(ctx, acme, dropped!)).mode === 'poll' ? true : undefined), 10_000);
    const post = fake.post('did:plc:a', 'kept and dropped');
    await until('the post stored for the other', async () => ((await storedByInput(ctx)).get(kept!)?.length === 1 ? true : undefined), 10_000);
    expect((await storedByInput(ctx)).get(dropped!)).toBeUndefined();
    expect((await storedByInput(ctx)).get(kept!)).toEqual([itemId(post)]);
  });

  it('stores with the DID when the profiles lookup fails, and leaves a user it cannot resolve to polling', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    fake.failProfiles = true;
    const [keyword, ghost] = await create(acme, [{ type: 'keyword', input: 'news' }, { type: 'user', input: 'nobody.test' }]);
    const listener = listen();
    await until('the keyword input to stream', async () => ((await feedOf(ctx, acme, keyword!)).mode === 'stream' ? true : undefined), 10_000);
    expect(listener.status().lastError).toContain('could not resolve the user nobody.test');
    expect((await feedOf(ctx, acme, ghost!)).mode).toBe('poll');
    const post = fake.post('did:plc:erin', 'news without a profile');
    await until('the post stored', async () => ((await storedByInput(ctx)).get(keyword!)?.length === 1 ? true : undefined), 10_000);
    const items = (await ctx.app.inject({ method: 'GET', url: `/v1/content/${acme.contract.slug}?q=${acme.collection.slug}&since=0` })).json() as { id: string; author: { userid: string; url: string } }[];
    expect(items.map((i) => i.id)).toEqual([itemId(post)]);
    expect(items[0]!.author).toMatchObject({ userid: 'did:plc:erin', url: 'https://bsky.app/profile/did%3Aplc%3Aerin' });
    expect(listener.status().lastError).toContain('profiles lookup failed');
  });

  it('refuses a Jetstream at a private address unless ALLOW_PRIVATE_FETCH', async () => {
    const { ctx, fake, create, listen } = await setup({ ALLOW_PRIVATE_FETCH: 'false' });
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, [{ type: 'keyword', input: 'news' }]);
    const listener = listen();
    await until('the refusal', () => (listener.status().lastError?.includes('not a public address') ? true : undefined), 10_000);
    expect(fake.connections).toEqual([]);
    expect(listener.status().connected).toBe(false);
    expect((await feedOf(ctx, acme, input!)).mode).toBe('poll');
  });

  it('connects to nothing and holds no lease while no bluesky input is active', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    await ctx.app.inject({
      method: 'POST',
      url: `/collection/inputs?access_token=${acme.token}`,
      payload: { service: 'bluesky', type: 'keyword', input: 'idle', active: false, contractId: acme.contract.id, collectionId: acme.collection.id },
    });
    void create;
    const listener = listen();
    await new Promise((r) => setTimeout(r, 500));
    expect(fake.connections).toEqual([]);
    expect(listener.status().connected).toBe(false);
    expect(await ctx.db.selectFrom('streams').selectAll().execute()).toEqual([]);
  });

  it('a server sending one frame over the bound (100 MiB announced) is cut at its header, recorded, reconnected with the back-off, and never buffered', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, [{ type: 'keyword', input: 'news' }]);
    fake.hostile = 'oversized';
    const listener = await expectOversizedRefused(fake, listen, JETSTREAM_BOUNDS.maxMessageBytes);

    // The server mends its ways: the listener goes on, connects and stores.
    fake.hostile = null;
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    const post = fake.post('did:plc:a', 'news after the refused frame');
    await until('the post stored', async () => ((await storedByInput(ctx)).get(input!)?.includes(itemId(post)) ? true : undefined), 10_000);
  });

  it('a server that accepts the connection and never answers the handshake is given up after the handshake bound, not after 300 s', async () => {
    const { ctx, fake, create, listen } = await setup();
    const acme = await buildTenant(ctx.db);
    const [input] = await create(acme, [{ type: 'keyword', input: 'news' }]);
    fake.hostile = 'silent';
    const listener = listen({ handshakeTimeoutMs: 300 });
    await expectSilentGivenUp(fake, listener);

    fake.hostile = null;
    await until('the connection', () => (listener.status().connected ? true : undefined), 10_000);
    const post = fake.post('did:plc:a', 'news after the silent server');
    await until('the post stored', async () => ((await storedByInput(ctx)).get(input!)?.includes(itemId(post)) ? true : undefined), 10_000);
  });
});
