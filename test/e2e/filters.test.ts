/**
 * Filters end to end (issue 5, docs/filters.md#when-filters-run): real feeds (test/fixtures/rss)
 * served on
 * 127.0.0.1, inputs and filters (list, sets, chain) made over HTTP at each level (input,
 * collection, contract), collected with `refreshInput` and the guarded fetcher. Exactly the
 * accepted items reach the queue; rejections are counted once and listed; the dry run agrees
 * with the collector; a set changed over HTTP changes what the next poll accepts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectorFor } from '../../src/services/index.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import type { ContentItem } from '../../src/item.ts';
import { refreshInput } from '../../src/collect/refresh.ts';
import { filterPool, type JudgeJob } from '../../src/filter/pool.ts';
import { loadConfig } from '../../src/config.ts';
import { setContractFilter } from '../../src/store/contracts.ts';
import { build, buildTenant, expectError, type TestContext, inputRow } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';

const feeds: Record<string, Buffer> = {
  '/guardian': readFileSync(new URL('../fixtures/rss/guardian-rss2-media-content.rss', import.meta.url)),
  '/heise': readFileSync(new URL('../fixtures/rss/heise-atom.atom', import.meta.url)),
};
const services = loadConfig({}).services;
const fetcher = createFetcher({ allowPrivate: true });

let server: SourceServer;
let ctx: TestContext;
let tenant: Awaited<ReturnType<typeof buildTenant>>;

beforeAll(async () => {
  server = await startSourceServer((req) => (feeds[req.url] ? { status: 200, headers: { 'content-type': 'application/xml' }, body: feeds[req.url] } : { status: 404 }));
});

beforeEach(async () => {
  ctx = await build();
  tenant = await buildTenant(ctx.db);
});

afterAll(async () => {
  await fetcher.close();
  await server.close();
});

type Json = Record<string, any>;

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, token = tenant.token): Promise<{ status: number; body: any }> {
  const response = await ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${token}`, ...(payload ? { payload: payload as Json } : {}) });
  return { status: response.statusCode, body: response.body ? response.json() : undefined };
}

async function create(path: string, payload: Json): Promise<Json> {
  const { status, body } = await api('POST', path, { contractId: tenant.contract.id, ...payload });
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

const always = { operator: 'exists', field: 'id' };

/** The feed's items as the connector parses them (what the collector judges). */
async function parsed(path: string): Promise<ContentItem[]> {
  const input = { id: 'x', service: 'rss', type: 'feed', input: server.base + path };
  return (await connectorFor('rss')!.collect(input, {}, { fetch: fetcher, services, now: Date.now() })).items;
}

async function poll(id: string): Promise<number> {
  return refreshInput(ctx.db, (await inputRow(ctx.db, id))!, { fetch: fetcher, services, pollInterval: 300 });
}

async function queue(slug: string): Promise<{ id: string; title?: string; state: string }[]> {
  const { status, body } = await api('GET', `/v1/queue/${tenant.contract.slug}?q=${slug}&since=0&count=200`);
  expect(status).toBe(200);
  return body;
}

describe('filters at every level, end to end', () => {
  it('queues exactly the accepted items, counts and lists rejections, and agrees with the dry run', async () => {
    // Filters: a patterns list, sets using it, a chain; each level gets its own.
    const trump = await create('/collection/lists', { name: 'politics', type: 'patterns', entries: ['/trump/i', '/\\bGOP\\b/'] });
    const noPolitics = await create('/collection/sets', { name: 'no politics', preCondition: always, rules: [{ operator: 'patternin', field: 'title', listId: trump._id }] });
    const noLive = await create('/collection/sets', { name: 'no live blogs', preCondition: always, rules: [{ operator: 'pattern', field: 'text', value: '/xyzzy-never-written/' }, { operator: 'pattern', field: 'title', value: '/live!/' }] });
    const chain = await create('/collection/chains', { name: 'front page', sets: [noPolitics._id, noLive._id] });
    const noNba = await create('/collection/sets', { name: 'no NBA', preCondition: always, rules: [{ operator: 'pattern', field: 'title', value: '/\\bNBA\\b/' }] });
    const noMicrosoft = await create('/collection/sets', { name: 'no Microsoft', preCondition: always, rules: [{ operator: 'pattern', field: 'title', value: '/microsoft/i' }] });

    // Levels: input1 → the chain; collection "Sports" → noNba; the contract → noMicrosoft.
    const sports = await create('/collection/collections', { name: 'Sports' });
    expect((await api('PATCH', `/collection/collections/${sports._id}`, { filterId: noNba._id })).status).toBe(200);
    await setContractFilter(ctx.db, tenant.contract.id, noMicrosoft._id, 'test');
    const input1 = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id, filterId: chain._id, display: false });
    const input2 = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: sports._id });
    const input3 = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/heise`, collectionId: tenant.collection.id });

    const guardian = await parsed('/guardian');
    const heise = await parsed('/heise');
    expect(guardian).toHaveLength(55);
    const outByChain = guardian.filter((item) => /trump|\bGOP\b/i.test(item.title ?? '') || /live!/.test(item.title ?? ''));
    const outByNba = guardian.filter((item) => /\bNBA\b/.test(item.title ?? ''));
    const outByMicrosoft = heise.filter((item) => /microsoft/i.test(item.title ?? ''));
    expect(outByChain.length).toBeGreaterThan(5);
    expect(outByNba.length).toBe(2);
    expect(outByMicrosoft.length).toBe(2);

    expect(await poll(input1._id)).toBe(55 - outByChain.length);
    expect(await poll(input2._id)).toBe(55 - outByNba.length);
    expect(await poll(input3._id)).toBe(heise.length - outByMicrosoft.length);

    // The input's filter governs input1 (not the contract's), display false → unpublished.
    const world = await queue(tenant.collection.slug);
    const titles = (items: { title?: string }[]) => items.map((item) => item.title);
    const fromGuardian = world.filter((item) => guardian.some((g) => g.id === item.id));
    expect(fromGuardian).toHaveLength(55 - outByChain.length);
    expect(fromGuardian.every((item) => item.state === 'unpublished')).toBe(true);
    expect(titles(world)).toContain('UN urged to launch global effort to end offshore tax evasion');
    expect(titles(world)).toContain('Rasual Butler, 13-year NBA veteran, killed in car crash aged 38');
    expect(titles(world)).not.toContain('Trump State of the Union address promised unity but emphasized discord');
    expect(titles(world)).not.toContain('Train carrying dozens of GOP lawmakers hits truck in Virginia');
    expect(titles(world)).not.toContain('Tottenham Hotspur v Manchester United: Premier League – live!');
    // The contract's filter governs input3 (no input filter, none on its collection).
    expect(titles(world)).toContain('Java-Anwendungsserver: Red Hat gibt WildFly 10 frei');
    expect(titles(world)).not.toContain('Microsoft veröffentlicht Cordova-Erweiterung für Visual Studio Code');
    expect(world.filter((item) => heise.some((h) => h.id === item.id)).every((item) => item.state === 'published')).toBe(true);
    // The collection's filter governs input2, not the contract's.
    const sport = await queue(sports.slug);
    expect(sport).toHaveLength(55 - outByNba.length);
    expect(titles(sport)).toContain('Trump State of the Union address promised unity but emphasized discord');
    expect(titles(sport)).not.toContain('The NBA is mad as hell ... and fans just want to consume it more');

    // Counts and the rejections list.
    const status = async (id: string) => (await api('GET', `/collection/inputs/${id}`)).body.status;
    expect(await status(input1._id)).toMatchObject({ collected: 55 - outByChain.length, rejected: outByChain.length });
    expect(await status(input2._id)).toMatchObject({ collected: 55 - outByNba.length, rejected: outByNba.length });
    expect(await status(input3._id)).toMatchObject({ collected: heise.length - outByMicrosoft.length, rejected: outByMicrosoft.length });
    const rejections = (await api('GET', `/collection/inputs/${input1._id}/rejections`)).body as Json[];
    expect(rejections.map((r) => r.id).sort()).toEqual(outByChain.map((item) => item.id).sort());
    const tottenham = rejections.find((r) => r.title === 'Tottenham Hotspur v Manchester United: Premier League – live!')!;
    expect(tottenham).toMatchObject({ set: { id: noLive._id, name: 'no live blogs' }, rule: 1, reason: 'rule 1: title matches /live!/' });
    expect(tottenham.url).toMatch(/^https:\/\/www\.theguardian\.com\//);
    expect(Date.parse(tottenham.date)).not.toBeNaN();
    const union = rejections.find((r) => r.title === 'Trump State of the Union address promised unity but emphasized discord')!;
    expect(union).toMatchObject({ set: { id: noPolitics._id, name: 'no politics' }, rule: 0 });
    expect(union.reason).toMatch(/^rule 0: title matches/);

    // A second poll stores and counts nothing again, accepted or rejected.
    for (const input of [input1, input2, input3]) expect(await poll(input._id)).toBe(0);
    expect(await status(input1._id)).toMatchObject({ collected: 55 - outByChain.length, rejected: outByChain.length });
    expect(await status(input3._id)).toMatchObject({ collected: heise.length - outByMicrosoft.length, rejected: outByMicrosoft.length });
    expect((await api('GET', `/collection/inputs/${input1._id}/rejections`)).body).toHaveLength(outByChain.length);

    // The dry run agrees with the collector: over the stored items, and over the feed's items.
    const stored = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: noNba._id, collectionId: sports._id, since: 0 });
    expect(stored.status).toBe(200);
    expect(stored.body.results).toHaveLength(55 - outByNba.length);
    expect(stored.body.results.every((r: Json) => r.accepted)).toBe(true);
    expect(stored.body.hits).toEqual([]);
    const dry = await api('POST', '/collection/filters/test', { contractId: tenant.contract.id, filterId: chain._id, items: guardian });
    expect(dry.status).toBe(200);
    const dryRejected = (dry.body.results as Json[]).filter((r) => !r.accepted);
    expect(dryRejected.map((r) => r.id).sort()).toEqual(rejections.map((r) => r.id).sort());
    for (const r of dryRejected) {
      const recorded = rejections.find((x) => x.id === r.id)!;
      expect(r).toEqual({ id: recorded.id, accepted: false, action: 'reject', set: recorded.set, rule: recorded.rule, reason: recorded.reason, title: recorded.title, date: expect.any(String), inputId: null });
    }
    const hits = dry.body.hits as Json[];
    expect(hits.reduce((sum, hit) => sum + hit.count, 0)).toBe(outByChain.length);
    expect(hits.find((hit) => hit.set.id === noLive._id)).toEqual({ set: { id: noLive._id, name: 'no live blogs' }, rule: 1, action: 'reject', count: guardian.filter((i) => /live!/.test(i.title ?? '') && !/trump|\bGOP\b/i.test(i.title ?? '')).length });
    // Nothing changed.
    expect(await queue(sports.slug)).toHaveLength(55 - outByNba.length);

    // Changing a set over HTTP changes what the next poll accepts: the NBA items now pass.
    const patched = await api('PATCH', `/collection/sets/${noNba._id}`, { rules: [{ operator: 'pattern', field: 'title', value: '/Philadelphia Eagles/' }] });
    expect(patched.status).toBe(200);
    expect(await poll(input2._id)).toBe(outByNba.length);
    expect(titles(await queue(sports.slug))).toContain('The NBA is mad as hell ... and fans just want to consume it more');
    // The Eagles item was stored before the change: it stays and counts in neither.
    expect(await status(input2._id)).toMatchObject({ collected: 55, rejected: outByNba.length });
    // An inactive filter counts as absent: with the contract's set off, a new input takes everything.
    expect((await api('PATCH', `/collection/sets/${noMicrosoft._id}`, { active: false })).status).toBe(200);
    const heise2 = await create('/collection/collections', { name: 'Tech' });
    const input4 = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/heise`, collectionId: heise2._id });
    expect(await poll(input4._id)).toBe(heise.length);
  });

  it('judges only items new to the collection, in the filter pool', async () => {
    const noNba = await create('/collection/sets', { name: 'no NBA', preCondition: always, rules: [{ operator: 'pattern', field: 'title', value: '/\\bNBA\\b/' }] });
    const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/guardian`, collectionId: tenant.collection.id, filterId: noNba._id });
    const judged: string[][] = [];
    const pool = { ...filterPool(), judge: (job: JudgeJob, budgetMs: number) => (judged.push(job.items.map((item) => (item as { id: string }).id)), filterPool().judge(job, budgetMs)) };
    const pollWith = async () => refreshInput(ctx.db, (await inputRow(ctx.db, input._id))!, { fetch: fetcher, services, pollInterval: 300, pool });
    const guardian = await parsed('/guardian');
    const nba = guardian.filter((item) => /\bNBA\b/.test(item.title ?? '')).map((item) => item.id);
    expect(await pollWith()).toBe(55 - nba.length);
    expect(judged).toEqual([guardian.map((item) => item.id)]);
    // Polled again: the stored items are not judged again; the rejected ones are not in the collection, so they are.
    expect(await pollWith()).toBe(0);
    expect(judged[1]!.sort()).toEqual([...nba].sort());
    expect((await api('GET', `/collection/inputs/${input._id}`)).body.status).toMatchObject({ rejected: nba.length, lastError: null });
  });

  it('validates the dry run and keeps contracts apart', async () => {
    const set = await create('/collection/sets', { name: 'any', preCondition: always, rules: [] });
    const other = await buildTenant(ctx.db, 'Other News');
    const otherSet = await api('POST', '/collection/sets', { contractId: other.contract.id, name: 'theirs', preCondition: always, rules: [] }, other.token);
    expect(otherSet.status).toBe(201);
    const url = '/collection/filters/test';
    const base = { contractId: tenant.contract.id, filterId: set._id };
    const dry = (payload: Json, token = tenant.token) => ctx.app.inject({ method: 'POST', url: `${url}?access_token=${token}`, payload });

    expectError(await dry({ ...base }), 400, { name: 'ValidationError', code: 1001, propertyName: 'items' });
    expectError(await dry({ ...base, items: [], collectionId: tenant.collection.id }), 400, { name: 'ValidationError', code: 1001, propertyName: 'items' });
    expectError(await dry({ ...base, items: [{ title: 'no id' }] }), 400, { name: 'ValidationError', code: 1001, propertyName: 'items[0].id' });
    expectError(await dry({ ...base, items: ['text'] }), 400, { name: 'ValidationError', code: 1002, propertyName: 'items[0]' });
    expectError(await dry({ ...base, filterId: 'nope', items: [] }), 400, { name: 'ValidationError', code: 1005, propertyName: 'filterId' });
    expectError(await dry({ ...base, items: Array.from({ length: 1001 }, (_, i) => ({ id: `x_${i}` })) }), 400, { name: 'ValidationError', code: 1003, propertyName: 'items' });
    expectError(await dry({ ...base, collectionId: tenant.collection.id, since: -1 }), 400, { name: 'ValidationError', code: 1003, propertyName: 'since' });
    expectError(await dry({ ...base, filterId: 'a'.repeat(24), items: [] }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'filterId' });
    expectError(await dry({ ...base, collectionId: 'b'.repeat(24) }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'collectionId' });
    // Another contract: its filter, its collection, its contract id.
    expectError(await dry({ ...base, filterId: otherSet.body._id, items: [] }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'filterId' });
    expectError(await dry({ ...base, collectionId: other.collection.id }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'collectionId' });
    expectError(await dry({ contractId: other.contract.id, filterId: otherSet.body._id, items: [] }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
    expect((await dry({ ...base, items: [] }, 'bad')).statusCode).toBe(401);

    // Content items keep every field the rules read (nothing stripped by validation).
    const strict = await create('/collection/sets', { name: 'deep', preCondition: always, rules: [{ operator: 'gte', field: 'kudos.score', value: 10 }] });
    const result = await dry({ contractId: tenant.contract.id, filterId: strict._id, items: [{ id: 'a_1', kudos: { score: 12 } }, { id: 'a_2', kudos: { score: 3 } }] });
    expect(result.statusCode).toBe(200);
    expect(result.json()).toEqual({
      results: [
        { id: 'a_1', accepted: false, action: 'reject', set: { id: strict._id, name: 'deep' }, rule: 0, reason: expect.stringContaining('kudos.score'), title: null, date: null, inputId: null },
        { id: 'a_2', accepted: true, action: null, set: null, rule: null, reason: null, title: null, date: null, inputId: null },
      ],
      hits: [{ set: { id: strict._id, name: 'deep' }, rule: 0, action: 'reject', count: 1 }],
    });
  });

  it('guards the rejections list', async () => {
    const other = await buildTenant(ctx.db, 'Third News');
    const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/heise`, collectionId: tenant.collection.id });
    expect((await api('GET', `/collection/inputs/${input._id}/rejections`)).body).toEqual([]);
    expectError(await ctx.app.inject(`/collection/inputs/${input._id}/rejections?access_token=${other.token}`), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expectError(await ctx.app.inject(`/collection/inputs/${'c'.repeat(24)}/rejections?access_token=${tenant.token}`), 404, { name: 'NotFoundError', code: 4001 });
    expectError(await ctx.app.inject(`/collection/inputs/nope/rejections?access_token=${tenant.token}`), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
  });
});
