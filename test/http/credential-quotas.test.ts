/**
 * Quotas per service credential (docs/api.md#quotas), through HTTP on a real database:
 * Instagram's 30 unique hashtags in 7 days refused at the 31st input with the error object (a
 * repeated hashtag free; each credential, contract and the installation's own counted apart; a
 * batch or concurrent requests never pass 30); YouTube units counted from the connector's calls
 * against a local fake API serving the recorded fixtures, a poll that would pass the day's quota
 * waiting with its status saying so while other inputs go on, and resuming the next Pacific day;
 * X's monthly read cap; quotas on credential reads and GET /collection/services; on PostgreSQL,
 * two database handles (as two processes) reserving at once never pass a limit.
 */
import { describe, expect, it } from 'vitest';
import { credentialResolver } from '../../src/collect/credentials.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { pacificDay, utcMonth } from '../../src/lib/quota-windows.ts';
import { isPostgres, openDb } from '../../src/store/db.ts';
import { reserveHashtag, reserveUnits, unitsUsed } from '../../src/store/quotas.ts';
import { type FakeRequest, fakeApi, fixtureBytes } from '../fake-api.ts';
import { build, buildTenant, expectError, type TestContext, inputRow } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function connect(ctx: TestContext, tenant: Tenant, body: Record<string, unknown>): Promise<string> {
  const res = await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json()._id;
}

const instagramCredential = (name: string) => ({ name, service: 'instagram', accessToken: `EAAG-${name}-token-0000000000`, userId: '17841405822304914' });
const tag = (tenant: Tenant, hashtag: string, extra: Record<string, unknown> = {}) => ({
  contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'instagram', type: 'tag', input: hashtag, ...extra,
});
const quotaOf = async (ctx: TestContext, tenant: Tenant, id: string) => (await call(ctx, tenant, 'GET', `/collection/credentials/${id}`)).json().quota;
const SEVEN_DAYS = 7 * 24 * 3600 * 1000;

/** A collector polling every due input when asked (its own tick far away). */
function collectorOf(ctx: TestContext) {
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  return {
    async poll() {
      await collector.tick();
      await collector.idle();
    },
    stop: () => collector.stop(),
  };
}

describe('quotas: Instagram hashtags', () => {
  it('accepts 30 unique hashtags per credential in 7 days, refuses the 31st naming input, accepts a repeated one', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const credential = await connect(ctx, tenant, instagramCredential('Brand account'));
    const before = Date.now();
    // 29 in one batch, then one alone: 30.
    const batch = await call(ctx, tenant, 'POST', '/collection/inputs', Array.from({ length: 29 }, (_, i) => tag(tenant, `tag${i}`)));
    expect(batch.statusCode, batch.body).toBe(201);
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, '#Tag29'))).statusCode).toBe(201);
    const quota = await quotaOf(ctx, tenant, credential);
    expect(quota).toMatchObject({ name: 'instagram-hashtags', used: 30, limit: 30 });
    expect(Date.parse(quota.resetsAt)).toBeGreaterThanOrEqual(before + SEVEN_DAYS);
    expect(Date.parse(quota.resetsAt)).toBeLessThanOrEqual(Date.now() + SEVEN_DAYS);

    const refused = expectError(await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, 'tag30')), 400, { name: 'ValidationError', code: 1003, propertyName: 'input' });
    const [entry] = refused.errors as { message: string; propertyValue: string; reason: string }[];
    expect(entry!.message).toContain('30 of 30 are used with credential Brand account');
    expect(entry!.message).toContain('#tag30 is not among them');
    expect(entry!.message).toContain(`The oldest, #tag0, frees up at ${quota.resetsAt}`);
    expect(entry).toMatchObject({ propertyValue: 'tag30', reason: 'quota instagram-hashtags' });

    // A hashtag already counted is free, however it is written (a second input of it in the same collection is forced: issue 33 point 5).
    const repeated = await call(ctx, tenant, 'POST', '/collection/inputs?force=true', tag(tenant, '#TAG7'));
    expect(repeated.statusCode, repeated.body).toBe(201);
    // A batch with a 31st refuses the whole batch, naming the element; nothing of it is stored.
    const inputsBefore = (await call(ctx, tenant, 'GET', `/collection/inputs?contract_id=${tenant.contract.id}`)).json().length;
    expectError(await call(ctx, tenant, 'POST', '/collection/inputs', [tag(tenant, 'tag3'), tag(tenant, 'brandnew')]), 400, { name: 'ValidationError', code: 1003, propertyName: '[1].input' });
    expect((await call(ctx, tenant, 'GET', `/collection/inputs?contract_id=${tenant.contract.id}`)).json()).toHaveLength(inputsBefore);
    // Changing an input to a new hashtag is refused too; keeping its hashtag is not.
    const input = repeated.json();
    expectError(await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, tag(tenant, 'brandnew')), 400, { name: 'ValidationError', code: 1003, propertyName: 'input' });
    expect((await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, tag(tenant, '#TAG7', { display: false }))).statusCode).toBe(200);
    // Other types of input are not counted.
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, 'natgeo', { type: 'user' }))).statusCode).toBe(201);
    expect((await quotaOf(ctx, tenant, credential)).used).toBe(30);
  });

  it('counts each credential, contract and the installation apart', async () => {
    const ctx = await build({ INSTAGRAM_ACCESS_TOKEN: 'EAAG-environment-token-000000', INSTAGRAM_USER_ID: '1784' });
    const tenant = await buildTenant(ctx.db, 'Owner');
    const other = await buildTenant(ctx.db, 'Other');
    const shared = await buildTenant(ctx.db, 'Shared');
    const first = await connect(ctx, tenant, instagramCredential('First'));
    const second = await connect(ctx, tenant, { ...instagramCredential('Second'), default: false });
    const others = await connect(ctx, other, instagramCredential('Theirs'));
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', Array.from({ length: 30 }, (_, i) => tag(tenant, `tag${i}`)))).statusCode).toBe(201);
    expectError(await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, 'one-more')), 400, { name: 'ValidationError', code: 1003, propertyName: 'input' });

    // The contract's second credential, another contract's, and the installation's own count apart.
    expect((await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, 'one-more', { credentialId: second }))).statusCode).toBe(201);
    expect((await call(ctx, other, 'POST', '/collection/inputs', tag(other, 'one-more'))).statusCode).toBe(201);
    expect((await call(ctx, shared, 'POST', '/collection/inputs', tag(shared, 'one-more'))).statusCode).toBe(201);
    expect((await quotaOf(ctx, tenant, first)).used).toBe(30);
    expect((await quotaOf(ctx, tenant, second)).used).toBe(1);
    expect((await quotaOf(ctx, other, others)).used).toBe(1);
    const services = (await call(ctx, shared, 'GET', '/collection/services')).json();
    expect(services.find((entry: { service: string }) => entry.service === 'instagram').quota).toMatchObject({ name: 'instagram-hashtags', used: 1, limit: 30 });
    // A credential of another contract is not readable, its quota neither.
    const foreign = await call(ctx, other, 'GET', `/collection/credentials/${first}`);
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).not.toContain('instagram-hashtags');
  });

  it('never lets concurrent requests pass 30', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const credential = await connect(ctx, tenant, instagramCredential('Busy'));
    const results = await Promise.all(Array.from({ length: 36 }, (_, i) => call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, `race${i}`))));
    const statuses = results.map((res) => res.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(30);
    expect(statuses.filter((status) => status === 400)).toHaveLength(6);
    expect((await quotaOf(ctx, tenant, credential)).used).toBe(30);
  });

  it('a poll that would look up a 31st hashtag waits, saying so, and calls nothing', async () => {
    const api = await fakeApi((req) => ({ body: fixtureBytes('instagram', req.path.endsWith('/ig_hashtag_search') ? 'ig_hashtag_search.json' : 'hashtag_recent_media_p1.json'), headers: { 'content-type': 'application/json' } }));
    const ctx = await build({ INSTAGRAM_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true' });
    const collector = collectorOf(ctx);
    try {
      const tenant = await buildTenant(ctx.db);
      const full = await connect(ctx, tenant, instagramCredential('Full'));
      const spare = await connect(ctx, tenant, { ...instagramCredential('Spare'), default: false });
      expect((await call(ctx, tenant, 'POST', '/collection/inputs', Array.from({ length: 30 }, (_, i) => tag(tenant, `tag${i}`, { active: false })))).statusCode).toBe(201);
      // Counted against the spare credential, then moved to the full one before its first poll.
      const input = (await call(ctx, tenant, 'POST', '/collection/inputs', tag(tenant, 'late', { credentialId: spare }))).json();
      expect((await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, tag(tenant, 'late', { credentialId: full }))).statusCode).toBe(200);
      await collector.poll();
      expect(api.requests).toEqual([]);
      const status = (await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status;
      const { resetsAt } = await quotaOf(ctx, tenant, full);
      expect(status.lastError).toBe(`waiting for quota instagram-hashtags: 30 of 30 unique hashtags looked up in the last 7 days with credential Full (${full}), #late not among them; resumes at ${resetsAt}, when #tag0 frees up`);
      expect(status.nextRun).toBe(resetsAt);
      expect(status.lastRun).toBeNull();
      // Back on the spare credential it runs.
      expect((await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, tag(tenant, 'late', { credentialId: spare }))).statusCode).toBe(200);
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/ig_hashtag_search', '/17841562426109234/recent_media']);
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status).toMatchObject({ lastError: null, collected: 5 });
    } finally {
      await collector.stop();
      await api.close();
    }
  });
});

/** The YouTube Data API as the recorded fixtures answer it. */
function youtubeApi(req: FakeRequest) {
  const file = { '/search': 'search_list_keyword_p1.json', '/videos': 'videos_list_statistics_contentDetails.json', '/playlistItems': 'playlistItems_list_p1.json', '/channels': 'channels_list_contentDetails.json' }[req.path];
  return file ? { body: fixtureBytes('youtube', file), headers: { 'content-type': 'application/json' } } : { status: 404, body: { error: { code: 404, message: 'not found', errors: [{ reason: 'notFound' }] } } };
}

describe('quotas: YouTube units', () => {
  it("counts the connector's calls per credential; a poll that would pass the day's quota waits, the others go on; the next Pacific day it runs", async () => {
    const api = await fakeApi(youtubeApi);
    const ctx = await build({ YOUTUBE_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true', YOUTUBE_DAILY_QUOTA: '250', YOUTUBE_API_KEY: 'environment-youtube-key-0000' });
    const collector = collectorOf(ctx);
    try {
      const tenant = await buildTenant(ctx.db);
      const other = await buildTenant(ctx.db, 'Other');
      const credential = await connect(ctx, tenant, { name: 'Project', service: 'youtube', apiKey: 'AIza-contract-key-00000000000' });
      const theirs = await connect(ctx, other, { name: 'Their project', service: 'youtube', apiKey: 'AIza-other-key-0000000000000' });
      const input = (type: string, value: string) => ({ contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'youtube', type, input: value });
      const create = async (body: Record<string, unknown>) => (await call(ctx, tenant, 'POST', '/collection/inputs', body)).json();

      // keyword: search.list 100 + videos.list 1.
      await create(input('keyword', 'volcano'));
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/search', '/videos']);
      expect(api.requests.every((r) => r.query.get('key') === 'AIza-contract-key-00000000000')).toBe(true);
      const quota = await quotaOf(ctx, tenant, credential);
      expect(quota).toEqual({ name: 'youtube-units', used: 101, limit: 250, resetsAt: new Date(pacificDay(Date.now()).resetsAt).toISOString() });

      // channel: channels.list + playlistItems.list + videos.list, 1 each.
      api.requests.length = 0;
      await create(input('channel', 'UC_x5XG1OV2P6uZZ5FSM9Ttw'));
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/channels', '/playlistItems', '/videos']);
      expect((await quotaOf(ctx, tenant, credential)).used).toBe(104);

      // 104 + 101 = 205; a third keyword would take it to 306 > 250: it waits; then a playlist (2) runs.
      await create(input('keyword', 'lava'));
      await collector.poll();
      expect((await quotaOf(ctx, tenant, credential)).used).toBe(205);
      api.requests.length = 0;
      const waiting = await create(input('keyword', 'ash'));
      await collector.poll();
      expect(api.requests).toEqual([]);
      const resetsAt = new Date(pacificDay(Date.now()).resetsAt).toISOString();
      const status = (await call(ctx, tenant, 'GET', `/collection/inputs/${waiting._id}`)).json().status;
      expect(status).toMatchObject({ lastRun: null, nextRun: resetsAt, collected: 0 });
      expect(status.lastError).toBe(`waiting for quota youtube-units: 205 of 250 units today (Pacific time) with credential Project (${credential}); a poll of this keyword input takes up to 101; resumes at ${resetsAt}`);
      const playlist = await create(input('playlist', 'PLBCF2DAC6FFB574DE'));
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/playlistItems', '/videos']);
      const used = await quotaOf(ctx, tenant, credential);
      expect(used).toMatchObject({ used: 207, resetsAt });
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${playlist._id}`)).json().status.lastError).toBeNull();
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${waiting._id}`)).json().status.lastError).toContain('waiting for quota youtube-units');
      // Another contract's credential, and the installation's own, have their own count.
      expect((await quotaOf(ctx, other, theirs)).used).toBe(0);
      const services = (await call(ctx, tenant, 'GET', '/collection/services')).json();
      expect(services.find((entry: { service: string }) => entry.service === 'youtube').quota).toMatchObject({ name: 'youtube-units', used: 0, limit: 250 });

      // The next Pacific day (the poll's time given), the waiting input runs.
      api.requests.length = 0;
      const row = (await inputRow(ctx.db, waiting._id))!;
      const fetcher = createFetcher({ allowPrivate: true });
      try {
        await refreshInput(ctx.db, row, { fetch: fetcher, services: ctx.config.services, credentials: credentialResolver(ctx.db, ctx.config), quotas: ctx.config.quotas, pollInterval: 300 }, Date.parse(used.resetsAt) + 1000);
      } finally {
        await fetcher.close();
      }
      expect(api.requests.map((r) => r.path)).toEqual(['/search', '/videos']);
      expect((await inputRow(ctx.db, waiting._id))!.lastError).toBeNull();
      // Counted on that day: today's count is unchanged.
      expect((await quotaOf(ctx, tenant, credential)).used).toBe(207);
    } finally {
      await collector.stop();
      await api.close();
    }
  });

  it('counts failed calls too, and nothing for the keyless feed', async () => {
    const api = await fakeApi((req) =>
      req.path === '/feed' ? { body: fixtureBytes('youtube', 'channel-videos-feed-atom.xml'), headers: { 'content-type': 'application/atom+xml' } } : { status: 400, body: JSON.parse(fixtureBytes('youtube', 'error_400_keyInvalid.json').toString('utf8')) },
    );
    const ctx = await build({ YOUTUBE_API_URL: api.base, YOUTUBE_FEED_URL: `${api.base}/feed`, ALLOW_PRIVATE_FETCH: 'true' });
    const collector = collectorOf(ctx);
    try {
      const tenant = await buildTenant(ctx.db);
      const credential = await connect(ctx, tenant, { name: 'Bad key', service: 'youtube', apiKey: 'AIza-revoked-key-000000000000' });
      await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'youtube', type: 'keyword', input: 'volcano' });
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/search']);
      expect(await quotaOf(ctx, tenant, credential)).toMatchObject({ used: 100, limit: 10_000 });
      // Without any key (the environment has none), a channel reads the feed: no units.
      const feedOnly = await buildTenant(ctx.db, 'Feed only');
      await call(ctx, feedOnly, 'POST', '/collection/inputs', { contractId: feedOnly.contract.id, collectionId: feedOnly.collection.id, service: 'youtube', type: 'channel', input: 'UC_x5XG1OV2P6uZZ5FSM9Ttw' });
      await collector.poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/search', '/feed']);
      expect((await call(ctx, feedOnly, 'GET', '/collection/services')).json().find((entry: { service: string }) => entry.service === 'youtube').quota).toBeUndefined();
    } finally {
      await collector.stop();
      await api.close();
    }
  });
});

describe('quotas: X monthly read cap', () => {
  const search = () => ({ body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } });
  const keyword = (tenant: Tenant, input: string) => ({ contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'twitter', type: 'keyword', input });

  it('counts the posts read; once the cap is reached polls wait until the next month', async () => {
    const api = await fakeApi(search);
    const ctx = await build({ TWITTER_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true', TWITTER_MONTHLY_READ_CAP: '4' });
    const collector = collectorOf(ctx);
    try {
      const tenant = await buildTenant(ctx.db);
      const credential = await connect(ctx, tenant, { name: 'X', service: 'twitter', bearerToken: 'AAAA-x-bearer-token-000000000' });
      await call(ctx, tenant, 'POST', '/collection/inputs', keyword(tenant, 'news'));
      await collector.poll();
      const month = new Date(utcMonth(Date.now()).resetsAt).toISOString();
      expect(await quotaOf(ctx, tenant, credential)).toEqual({ name: 'twitter-posts', used: 4, limit: 4, resetsAt: month });
      api.requests.length = 0;
      const waiting = (await call(ctx, tenant, 'POST', '/collection/inputs', keyword(tenant, 'weather'))).json();
      await collector.poll();
      expect(api.requests).toEqual([]);
      const status = (await call(ctx, tenant, 'GET', `/collection/inputs/${waiting._id}`)).json().status;
      expect(status.lastError).toBe(`waiting for quota twitter-posts: 4 of 4 posts read this month (UTC) with credential X (${credential}); resumes at ${month}`);
      expect(status.nextRun).toBe(month);
    } finally {
      await collector.stop();
      await api.close();
    }
  });

  it('counts nothing when no cap is set', async () => {
    const api = await fakeApi(search);
    const ctx = await build({ TWITTER_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true' });
    const collector = collectorOf(ctx);
    try {
      const tenant = await buildTenant(ctx.db);
      const credential = await connect(ctx, tenant, { name: 'X', service: 'twitter', bearerToken: 'AAAA-x-bearer-token-000000000' });
      await call(ctx, tenant, 'POST', '/collection/inputs', keyword(tenant, 'news'));
      await collector.poll();
      expect(api.requests).toHaveLength(1);
      const read = (await call(ctx, tenant, 'GET', `/collection/credentials/${credential}`)).json();
      expect(read).not.toHaveProperty('quota');
      expect(read.health.lastUsed).toEqual(expect.any(String));
    } finally {
      await collector.stop();
      await api.close();
    }
  });
});

describe('quotas: counting from two processes at once', () => {
  // On PostgreSQL a second handle is a second pool, as another process has; an SQLite database
  // belongs to one process (docs/operations.md), so there the same handle takes every other turn.
  it('two database handles (as two processes) never take more than the limit together', async () => {
    const ctx = await build();
    const second = isPostgres(ctx.db) ? openDb(ctx.config.databaseUrl) : ctx.db;
    try {
      const key = { subject: 'a'.repeat(24), quota: 'youtube-units', period: '2026-11-23' };
      // 40 reservations of 3 units against a limit of 100, half through each handle: 33 fit.
      const taken = await Promise.all(Array.from({ length: 40 }, (_, i) => reserveUnits(i % 2 ? second : ctx.db, key, 3, 100)));
      expect(taken.filter((sum) => sum !== undefined)).toHaveLength(33);
      expect(await unitsUsed(ctx.db, key)).toBe(99);
      // 40 distinct hashtags, half through each handle, each in its own transaction: 30 count.
      const now = Date.now();
      const refused = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? second : ctx.db).transaction().execute((trx) => reserveHashtag(trx, 'instagram-hashtags', 'b'.repeat(24), `race${i}`, now))),
      );
      expect(refused.filter((refusal) => refusal === undefined)).toHaveLength(30);
      expect(refused.find((refusal) => refusal !== undefined)).toMatchObject({ used: 30, limit: 30 });
    } finally {
      if (second !== ctx.db) await second.destroy();
    }
  });
});
