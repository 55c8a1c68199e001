/**
 * YouTube live chat inputs (type `live`; docs/services.md#youtube-live-chat) through HTTP on a real
 * database, against a local fake YouTube Data API serving the recorded payloads: each poll is the
 * collector's own (`scheduler.ts` `pollWith`), the input read back over HTTP. The chat is read
 * page after page with the `nextPageToken` kept in the input's state, the next poll comes at the
 * `pollingIntervalMillis` the API answered (no sooner than 5 s, however small the answer), the
 * units are counted against the contract's YouTube credential (videos.list 1, liveChatMessages.list
 * 5), a deleted message leaves the content, and the end of the chat, a spent quota and an unknown
 * video are in the input's status. SQLite, and PostgreSQL with TEST_DATABASE_URL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SOURCE_POLL_MIN_MS } from '../../src/collect/refresh.ts';
import { collectorFetcher, pollWith } from '../../src/collect/scheduler.ts';
import { pacificDay } from '../../src/lib/quota-windows.ts';
import { type FakeApi, type FakeRequest, type FakeResponse, fakeApi, fixtureBytes, fixtureJson } from '../fake-api.ts';
import { build, buildTenant, expectError, inputRow, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;
const VIDEO = '9ywjjWAkeL0';
const p1 = fixtureJson('youtube', 'liveChatMessages_list_p1.json');
const p2 = fixtureJson('youtube', 'liveChatMessages_list_p2.json');
const raw = (file: string, status = 200): FakeResponse => ({ status, body: fixtureBytes('youtube', file), headers: { 'content-type': 'application/json' } });

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => {});
});

/** The Data API as the fixtures answer it: the chat's pages by page token, then its end; `messages` replaces the chat's answer. */
function youtubeLive(messages?: (req: FakeRequest) => FakeResponse) {
  return (req: FakeRequest): FakeResponse => {
    if (req.path === '/videos') return raw('videos_list_liveStreamingDetails.json');
    if (req.path === '/search') return raw('search_list_live.json');
    if (req.path !== '/liveChat/messages') return { status: 404, body: { error: { code: 404, message: 'not found', errors: [{ reason: 'notFound' }] } } };
    if (messages) return messages(req);
    const token = req.query.get('pageToken');
    return raw(token === null ? 'liveChatMessages_list_p1.json' : token === p1.nextPageToken ? 'liveChatMessages_list_p2.json' : 'liveChatMessages_list_offline.json');
  };
}

async function setUp(respond: (req: FakeRequest) => FakeResponse): Promise<{ api: FakeApi; ctx: TestContext; tenant: Tenant; credential: string }> {
  const api = await fakeApi(respond);
  closers.push(() => api.close());
  const ctx = await build({ YOUTUBE_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true' });
  const tenant = await buildTenant(ctx.db);
  const res = await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'Project', service: 'youtube', apiKey: 'AIza-contract-key-00000000000' });
  expect(res.statusCode, res.body).toBe(201);
  return { api, ctx, tenant, credential: res.json()._id };
}

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function createLive(ctx: TestContext, tenant: Tenant, input: string): Promise<string> {
  const res = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'youtube', type: 'live', input });
  expect(res.statusCode, res.body).toBe(201);
  return res.json()._id;
}

/**
 * Polls the input as the collector does (`scheduler.ts` `pollWith`: its credential, quota gate,
 * connector and status update), then reads it over HTTP; returns what its status says and the
 * times just before and after the poll (ms). (`POST …/poll` refuses a second poll within 10 s.)
 */
async function poll(ctx: TestContext, tenant: Tenant, id: string) {
  const fetcher = collectorFetcher(ctx.config);
  const before = Date.now();
  let items: number;
  try {
    items = await pollWith({ db: ctx.db, config: ctx.config }, fetcher)((await inputRow(ctx.db, id))!);
  } finally {
    await fetcher.close();
  }
  const after = Date.now();
  const res = await call(ctx, tenant, 'GET', `/collection/inputs/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  const input = res.json() as { status: { nextRun: string | null; lastError: string | null } };
  return { status: input.status.lastError === null ? 'ok' : 'error', items, error: input.status.lastError, input, before, after };
}

const unitsUsed = async (ctx: TestContext, tenant: Tenant, credential: string) => (await call(ctx, tenant, 'GET', `/collection/credentials/${credential}`)).json().quota.used;

async function content(ctx: TestContext, tenant: Tenant): Promise<string[]> {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0` });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { text: string }[]).map((i) => i.text).sort();
}

describe('youtube live chat through the collector', () => {
  it("reads a video's chat page after page at the API's interval, counts its units, removes a deleted message, and says when the chat ended", async () => {
    const { api, ctx, tenant, credential } = await setUp(youtubeLive());
    const id = await createLive(ctx, tenant, VIDEO);

    // Poll 1: the chat resolved (videos.list 1) and read (liveChatMessages.list 5).
    const first = await poll(ctx, tenant, id);
    expect(first).toMatchObject({ status: 'ok', items: 3, error: null });
    expect(api.requests.map((r) => r.path)).toEqual(['/videos', '/liveChat/messages']);
    expect(api.requests.every((r) => r.query.get('key') === 'AIza-contract-key-00000000000')).toBe(true);
    // The next poll at pollingIntervalMillis (8000) after the poll, not at the input's interval (POLL_INTERVAL, 300 s).
    const next = Date.parse(first.input.status.nextRun!);
    expect(next).toBeGreaterThanOrEqual(first.before + 8000);
    expect(next).toBeLessThanOrEqual(first.after + 8000);
    expect(await unitsUsed(ctx, tenant, credential)).toBe(6);
    expect(await content(ctx, tenant)).toEqual(['kitni hai', 'what language do you speak?', expect.stringMatching(/^₹100\.00: see <a href="https:\/\/example.org\/tips">/)]);

    // Poll 2: from the page token; the first message deleted in the chat leaves the content.
    api.requests.length = 0;
    const second = await poll(ctx, tenant, id);
    expect(second).toMatchObject({ status: 'ok', items: 1 });
    expect(api.requests.map((r) => [r.path, r.query.get('pageToken')])).toEqual([['/liveChat/messages', p1.nextPageToken]]);
    expect(Date.parse(second.input.status.nextRun!)).toBeGreaterThanOrEqual(second.before + 6000);
    expect(Date.parse(second.input.status.nextRun!)).toBeLessThanOrEqual(second.after + 6000);
    expect(await unitsUsed(ctx, tenant, credential)).toBe(11);
    const texts = await content(ctx, tenant);
    expect(texts).not.toContain('kitni hai');
    expect(texts).toContain(p2.items[1].snippet.displayMessage);
    expect(texts).toHaveLength(3);

    // Poll 3: the chat went offline: read, and the next poll at the input's interval.
    api.requests.length = 0;
    const third = await poll(ctx, tenant, id);
    expect(third).toMatchObject({ status: 'ok', items: 0 });
    expect(api.requests.map((r) => r.query.get('pageToken'))).toEqual([p2.nextPageToken]);
    expect(Date.parse(third.input.status.nextRun!)).toBeGreaterThanOrEqual(third.before + 300_000);
    // Poll 4: the input's status says the chat ended, and it calls nothing more.
    api.requests.length = 0;
    const ended = await poll(ctx, tenant, id);
    expect(ended).toMatchObject({ status: 'error', error: `the live chat of youtube video ${VIDEO} has ended (offline at 2023-05-25T21:02:13.000Z)` });
    expect(api.requests).toEqual([]);
    expect((await call(ctx, tenant, 'GET', `/collection/inputs/${id}`)).json().status.lastError).toBe(ended.error);
    expect(await unitsUsed(ctx, tenant, credential)).toBe(16);
  });

  it('an API answering a polling interval of 0 ms is polled again no sooner than 5 s', async () => {
    const { ctx, tenant } = await setUp(youtubeLive(() => ({ body: { ...p1, pollingIntervalMillis: 0 } })));
    const id = await createLive(ctx, tenant, VIDEO);
    const polled = await poll(ctx, tenant, id);
    expect(polled).toMatchObject({ status: 'ok', items: 3 });
    expect(SOURCE_POLL_MIN_MS).toBe(5000);
    expect(Date.parse(polled.input.status.nextRun!)).toBeGreaterThanOrEqual(polled.before + SOURCE_POLL_MIN_MS);
    expect(Date.parse(polled.input.status.nextRun!)).toBeLessThanOrEqual(polled.after + SOURCE_POLL_MIN_MS);
  });

  it('403 quotaExceeded: the input waits for the Pacific reset, the failed call counted; 404: an unknown video is parked, saying so', async () => {
    const { api, ctx, tenant, credential } = await setUp(youtubeLive(() => raw('error_403_quotaExceeded.json', 403)));
    const id = await createLive(ctx, tenant, VIDEO);
    const spent = await poll(ctx, tenant, id);
    expect(spent.status).toBe('error');
    expect(spent.error).toContain('youtube quota: quotaExceeded');
    // The retry waits for 08:00 UTC (midnight Pacific standard time; YouTube quotas reset then).
    const nextRun = Date.parse(spent.input.status.nextRun!);
    expect(new Date(nextRun).getUTCHours()).toBe(8);
    expect(nextRun).toBeGreaterThan(spent.after);
    expect(nextRun).toBeLessThanOrEqual(spent.after + 24 * 3600_000);
    expect(await unitsUsed(ctx, tenant, credential)).toBe(6);
    expect(Date.parse((await call(ctx, tenant, 'GET', `/collection/credentials/${credential}`)).json().quota.resetsAt)).toBe(pacificDay(Date.now()).resetsAt);

    api.respond = (req) => (req.path === '/videos' ? { body: { kind: 'youtube#videoListResponse', items: [] } } : youtubeLive()(req));
    const unknown = await createLive(ctx, tenant, 'AAAAAAAAAAA');
    const missing = await poll(ctx, tenant, unknown);
    expect(missing).toMatchObject({ status: 'error', error: 'youtube video AAAAAAAAAAA not found' });
    expect(Date.parse(missing.input.status.nextRun!)).toBeGreaterThan(missing.after + 300 * 24 * 3600_000); // parked until changed
  });

  it('an expired or revoked token (401): the input is parked saying so and the credential marked failed; a members-only chat leaves the credential alone', async () => {
    const expired = { error: { code: 401, message: 'Request had invalid authentication credentials.', errors: [{ reason: 'authError', domain: 'global' }] } };
    const { ctx, tenant, credential } = await setUp(youtubeLive(() => ({ status: 401, body: expired })));
    const id = await createLive(ctx, tenant, VIDEO);
    const failed = await poll(ctx, tenant, id);
    expect(failed).toMatchObject({ status: 'error', error: 'HTTP 401: authError: Request had invalid authentication credentials.' });
    expect(Date.parse(failed.input.status.nextRun!)).toBeGreaterThan(failed.after + 300 * 24 * 3600_000);
    expect((await call(ctx, tenant, 'GET', `/collection/credentials/${credential}`)).json().health).toMatchObject({ status: 'failed' });

    const members = { error: { code: 403, message: 'forbidden', errors: [{ reason: 'forbidden', domain: 'youtube.liveChat' }] } };
    const fresh = await setUp(youtubeLive(() => ({ status: 403, body: members })));
    const other = await createLive(fresh.ctx, fresh.tenant, VIDEO);
    expect(await poll(fresh.ctx, fresh.tenant, other)).toMatchObject({ status: 'error', error: `the live chat of youtube video ${VIDEO} is closed to this reader (members only or private)` });
    expect((await call(fresh.ctx, fresh.tenant, 'GET', `/collection/credentials/${fresh.credential}`)).json().health).toMatchObject({ status: 'ok' });
  });

  it("a channel: its current broadcast found by search (100 units), none now said in the status and looked for again", async () => {
    const { api, ctx, tenant, credential } = await setUp(youtubeLive());
    const id = await createLive(ctx, tenant, 'UCSJ4gkVC6NrvII8umztf0Ow');
    expect(await poll(ctx, tenant, id)).toMatchObject({ status: 'ok', items: 3 });
    expect(api.requests.map((r) => r.path)).toEqual(['/search', '/videos', '/liveChat/messages']);
    expect(api.requests[0]!.query.get('eventType')).toBe('live');
    expect(await unitsUsed(ctx, tenant, credential)).toBe(106);

    api.respond = (req) => (req.path === '/search' ? { body: { items: [] } } : youtubeLive()(req));
    const other = await createLive(ctx, tenant, '@SomeChannel');
    api.respond = (req) => (req.path === '/channels' ? { body: { items: [{ id: 'UCaaaaaaaaaaaaaaaaaaaaaa' }] } } : req.path === '/search' ? { body: { items: [] } } : youtubeLive()(req));
    const none = await poll(ctx, tenant, other);
    expect(none).toMatchObject({ status: 'error', error: 'youtube channel @SomeChannel has no live broadcast now' });
    // Transient: polled again after a back-off, not parked.
    expect(Date.parse(none.input.status.nextRun!)).toBeLessThanOrEqual(none.after + 3600_000);
  });

  it('refuses a live input that is no video id, channel id or handle, naming input', async () => {
    const { ctx, tenant } = await setUp(youtubeLive());
    for (const input of ['https://www.youtube.com/watch?v=9ywjjWAkeL0', 'short', '@', '127.0.0.1']) {
      const res = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'youtube', type: 'live', input });
      expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName: 'input' });
    }
  });
});
