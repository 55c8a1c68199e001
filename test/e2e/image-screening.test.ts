/**
 * Image screening (issue 37 point 2; docs/filters.md#image-screening), end to end: real small
 * PNG and JPEG images made with sharp, served by a real HTTP server on 127.0.0.1; items pushed
 * through the collector's one path in (`ingestPushed`) and screened by the screening job's round
 * (`screenRound`) with the real screener (nsfwjs in worker threads) and the guarded fetch; read
 * back through the queue API on the real database.
 *
 * Shown: the item is stored (and published) before it is classified, its scores appear in the
 * queue read after; a set `media.nsfw > 0.5` holds an item until it is classified, then releases
 * it (a flat-colour image scores neutral or drawing); a set that rejects after screening records
 * the rejection; scores survive the source sending the item again. The attacks: a corrupt image,
 * a PNG declaring 50 000 × 50 000 pixels, text served as image/jpeg and an image at a private
 * address (refused by the guard) end `unscreenable`, held for a moderator, never a crash; scores
 * a source sends itself are dropped; one contract flooding the queue does not block another's.
 */
import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/collect/fetch.ts';
import { ingestPushed } from '../../src/collect/ingest.ts';
import { PER_CONTRACT, screenRound, type ScreeningDeps } from '../../src/collect/screening.ts';
import { createScreener, type Screener } from '../../src/filter/images/screener.ts';
import type { ContentItem } from '../../src/item.ts';
import { findScreening, pendingScreenings } from '../../src/store/image-screenings.ts';
import { findInput } from '../../src/store/inputs.ts';
import { build, buildItem, buildTenant, type TestContext } from '../helper.ts';
import { type SourceServer, startSourceServer } from '../source-server.ts';

const feed = readFileSync(new URL('../fixtures/rss/guardian-rss2-media-content.rss', import.meta.url));

/** A PNG whose header declares `width` × `height` pixels, with one tiny IDAT: never decoded in full. */
function declaredPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter, no interlace
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(64))), chunk('IEND', Buffer.alloc(0))]);
}

let images: Record<string, { type: string; body: Buffer }>;
let server: SourceServer;
let screener: Screener;
const fetch = createFetcher({ allowPrivate: false, isAllowed: (address) => address === '127.0.0.1', maxBytes: 10 * 1024 * 1024 });
let ctx: TestContext;
let tenant: Awaited<ReturnType<typeof buildTenant>>;

beforeAll(async () => {
  const flat = (r: number, g: number, b: number) => sharp({ create: { width: 96, height: 64, channels: 3, background: { r, g, b } } });
  const png = await flat(40, 120, 200).png().toBuffer();
  images = {
    '/flat.png': { type: 'image/png', body: png },
    '/flat.jpg': { type: 'image/jpeg', body: await flat(230, 210, 60).jpeg().toBuffer() },
    '/corrupt.png': { type: 'image/png', body: Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 0x5a)]) },
    '/huge.png': { type: 'image/png', body: declaredPng(50_000, 50_000) },
    '/text.jpg': { type: 'image/jpeg', body: Buffer.from('this is not a JPEG at all, only text served as one\n'.repeat(20)) },
  };
  server = await startSourceServer((req) => {
    if (req.url === '/feed') return { status: 200, headers: { 'content-type': 'application/xml' }, body: feed };
    const image = images[req.parsed.pathname];
    return image ? { status: 200, headers: { 'content-type': image.type }, body: image.body } : { status: 404 };
  });
  screener = createScreener({ threads: 1 });
});
beforeEach(async () => {
  ctx = await build();
  tenant = await buildTenant(ctx.db);
});
afterAll(async () => {
  await screener.close();
  await fetch.close();
  await server.close();
});

type Json = Record<string, any>;

async function api(method: 'GET' | 'POST' | 'PATCH', url: string, token = tenant.token, payload?: unknown) {
  const response = await ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${token}`, ...(payload ? { payload: payload as Json } : {}) });
  return { status: response.statusCode, body: response.body ? response.json() : undefined };
}

async function create(path: string, payload: Json, who = tenant): Promise<Json> {
  const { status, body } = await api('POST', path, who.token, { contractId: who.contract.id, ...payload });
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

const deps = (): ScreeningDeps => ({ db: ctx.db, fetch, screener });
const queue = async (who = tenant) => (await api('GET', `/v1/queue/${who.contract.slug}?q=${who.collection.slug}&since=0&count=200`, who.token)).body as Json[];
async function content(): Promise<Json[]> {
  const read = await api('GET', `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=100`);
  expect(read.status, JSON.stringify(read.body)).toBe(200);
  return read.body as Json[];
}
const imageItem = (id: string, ...paths: string[]): ContentItem => buildItem({ id, media: paths.map((path) => ({ type: 'image' as const, url: path.startsWith('http') ? path : `${server.base}${path}` })) });

async function inputOf(payload: Json = {}, who = tenant) {
  const created = await create('/collection/inputs', { service: 'rss', type: 'feed', input: `${server.base}/feed`, collectionId: who.collection.id, display: true, ...payload }, who);
  return (await findInput(ctx.db, who.contract.id, created._id))!;
}

const nsfwOver = (value: number, action: 'hold' | 'reject') => ({ name: `nsfw over ${value}`, preCondition: { operator: 'exists', field: 'id' }, rules: [{ operator: 'gt', field: 'media.nsfw', value }], action });

describe('image screening', () => {
  it('stores the item at once and adds the five scores after; a flat colour scores neutral or drawing; the source sending it again keeps them', async () => {
    const input = await inputOf();
    const item = imageItem('rss_pictured', '/flat.png', '/flat.jpg');
    expect(await ingestPushed(ctx.db, input, [item], {})).toBe(1);
    // Stored and published before classification, without scores.
    const before = (await queue()).find((i) => i.id === item.id)!;
    expect(before.state).toBe('published');
    expect(before.media.every((m: Json) => m.moderation === undefined)).toBe(true);
    expect(await pendingScreenings(ctx.db)).toBe(1);

    expect(await screenRound(deps())).toEqual({ screened: 1, unscreenable: 0, deferred: 0 });
    const after = (await queue()).find((i) => i.id === item.id)!;
    for (const medium of after.media) {
      expect(Object.keys(medium.moderation).sort()).toEqual(['drawing', 'hentai', 'neutral', 'porn', 'sexy']);
      expect(medium.moderation.neutral + medium.moderation.drawing).toBeGreaterThan(0.5);
    }
    expect(await pendingScreenings(ctx.db)).toBe(0);

    // The same item polled again (the source never carries scores) keeps them.
    await ingestPushed(ctx.db, input, [item], {});
    const again = (await queue()).find((i) => i.id === item.id)!;
    expect(again.media).toEqual(after.media);
  });

  it('a set media.nsfw > 0.5 holds an item until it is classified, then releases it; items without images pass at once', async () => {
    const set = await create('/collection/sets', nsfwOver(0.5, 'hold'));
    const input = await inputOf({ filterId: set._id });
    const pictured = imageItem('rss_waiting', '/flat.png');
    const plain = buildItem({ id: 'rss_plain' });
    expect(await ingestPushed(ctx.db, input, [pictured, plain], {})).toBe(2);

    const held = (await queue()).find((i) => i.id === pictured.id)!;
    expect(held).toMatchObject({ state: 'unpublished', held: { set: { id: set._id }, rule: 0, reason: 'awaiting image screening' } });
    expect((await content()).map((i) => i.id)).toEqual([plain.id]);

    await screenRound(deps());
    const released = (await queue()).find((i) => i.id === pictured.id)!;
    expect(released.state).toBe('published');
    expect(released.held).toBeUndefined();
    expect(released.media[0].moderation.neutral + released.media[0].moderation.drawing).toBeGreaterThan(0.5);
    expect((await content()).map((i) => i.id).sort()).toEqual([plain.id, pictured.id].sort());
  });

  it('judges the item again after screening: a rule it now meets rejects it (recorded, never published)', async () => {
    // Any real score is above 0: the flat image is "nsfw > 0" and rejected once scored.
    const set = await create('/collection/sets', nsfwOver(0, 'reject'));
    const input = await inputOf({ filterId: set._id });
    const pictured = imageItem('rss_rejected', '/flat.jpg');
    await ingestPushed(ctx.db, input, [pictured], {});
    expect((await queue())[0]).toMatchObject({ id: pictured.id, state: 'unpublished', held: { reason: 'awaiting image screening' } });

    await screenRound(deps());
    const after = (await queue())[0]!;
    expect(after).toMatchObject({ id: pictured.id, state: 'unpublished' });
    expect(after.held).toBeUndefined();
    const rejections = (await api('GET', `/collection/inputs/${input.id}/rejections`)).body as Json[];
    expect(rejections).toEqual([expect.objectContaining({ id: pictured.id, reason: expect.stringMatching(/^rule 0: media.nsfw [\d.]+ is greater than 0$/) })]);
    expect(await content()).toEqual([]);
  });

  it('drops the scores a source sends itself: the item still waits, held, for its own screening', async () => {
    const set = await create('/collection/sets', nsfwOver(0.5, 'hold'));
    const input = await inputOf({ filterId: set._id });
    const forged = buildItem({ id: 'rss_forged', media: [{ type: 'image', url: `${server.base}/flat.png`, moderation: { drawing: 0, hentai: 0, neutral: 1, porn: 0, sexy: 0 } }] });
    await ingestPushed(ctx.db, input, [forged], {});
    const stored = (await queue())[0]!;
    expect(stored).toMatchObject({ state: 'unpublished', held: { reason: 'awaiting image screening' } });
    expect(stored.media[0].moderation).toBeUndefined();
  });

  it.each([
    ['a corrupt PNG', '/corrupt.png', /could not be decoded/],
    ['a PNG declaring 50 000 × 50 000 pixels', '/huge.png', /more than 50000000 pixels/],
    ['text served as image/jpeg', '/text.jpg', /not a JPEG, PNG, GIF, WebP or AVIF image/],
    ['an image at a private address', 'http://169.254.169.254/latest/meta-data/x.png', /not public \(refused by the outbound guard\)/],
    ['an image its server does not have', '/missing.png', /answered 404/],
  ])('%s is unscreenable: recorded, the item held for a moderator, the job unharmed', async (_name, path, why) => {
    const set = await create('/collection/sets', nsfwOver(0.5, 'hold'));
    const input = await inputOf({ filterId: set._id });
    const bad = imageItem('rss_bad', path);
    const good = imageItem('rss_good', '/flat.png');
    await ingestPushed(ctx.db, input, [bad, good], {});

    expect(await screenRound(deps())).toEqual({ screened: 1, unscreenable: 1, deferred: 0 });
    const items = await queue();
    const held = items.find((i) => i.id === bad.id)!;
    expect(held.state).toBe('unpublished');
    expect(held.held.reason).toMatch(/^image could not be screened: image 0: /);
    expect(held.held.reason).toMatch(why);
    expect(await findScreening(ctx.db, { contractId: tenant.contract.id, collectionId: tenant.collection.id, itemId: bad.id })).toMatchObject({ state: 'unscreenable', reason: expect.stringMatching(why) });
    expect(items.find((i) => i.id === good.id)!.state).toBe('published');
    // Not claimed again.
    expect(await screenRound(deps())).toEqual({ screened: 0, unscreenable: 0, deferred: 0 });
  });

  it('the dry run reads media.nsfw of scored items; odd media in sent items is no error', async () => {
    const scored = { drawing: 0, hentai: 0.1, neutral: 0.2, porn: 0.6, sexy: 0.1 };
    const items = [
      { id: 'x_scored', media: [{ type: 'image', url: 'https://example.com/a.png', moderation: scored }] },
      { id: 'x_unscored', media: [{ type: 'image', url: 'https://example.com/b.png' }] },
      { id: 'x_odd', media: 'pictures' },
      { id: 'x_odder', media: [null, 3, { type: 'image', moderation: { porn: 'lots' } }] },
    ];
    const dry = await api('POST', '/collection/filters/test', tenant.token, { contractId: tenant.contract.id, set: nsfwOver(0.5, 'hold'), items });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect((dry.body.results as Json[]).map((r) => [r.id, r.accepted])).toEqual([['x_scored', false], ['x_unscored', true], ['x_odd', true], ['x_odder', true]]);
    expect(dry.body.results[0].reason).toBe('rule 0: media.nsfw 0.8 is greater than 0.5');
  });

  it("one contract flooding the queue does not hold up another's image", async () => {
    const other = await buildTenant(ctx.db, 'Beta Post');
    const flood = await inputOf();
    const quiet = await inputOf({}, other);
    const many = Array.from({ length: PER_CONTRACT * 3 }, (_, i) => imageItem(`rss_flood${i}`, '/flat.png'));
    await ingestPushed(ctx.db, flood, many, {});
    await ingestPushed(ctx.db, quiet, [imageItem('rss_quiet', '/flat.jpg')], {});

    // The first round serves both: the other contract's one image is screened while the flood still waits.
    expect(await screenRound(deps())).toMatchObject({ screened: PER_CONTRACT + 1 });
    expect(await pendingScreenings(ctx.db, other.contract.id)).toBe(0);
    expect(await pendingScreenings(ctx.db, tenant.contract.id)).toBe(PER_CONTRACT * 2);
    expect((await queue(other))[0]!.media[0].moderation).toBeDefined();
  });
});
