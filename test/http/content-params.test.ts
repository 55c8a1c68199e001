/**
 * Every parameter, limit and error of the queue, content and count reads (issue 6;
 * docs/api.md#read-parameters, docs/api.md#limits): location circles at the edge of their radius,
 * languages (given and detected), whole-collection paging under both sorts and orders, limits,
 * contract isolation, and query plans that never scan the whole items table.
 */
import { trendingScore } from '../../src/lib/ranking.ts';
import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { destination, distanceMeters } from '../../src/lib/geo.ts';
import { gunzipSync } from 'node:zlib';
import { createReadPath, type ReadCollection } from '../../src/queue/read-path.ts';
import { render, renderJson } from '../../src/queue/respond.ts';
import { findItems } from '../../src/store/items/find.ts';
import { compileCount, compileHead, compilePage, compilePinned, type ItemQuery, listHeadKeys, listItemKeys, type Page } from '../../src/store/items/read-sql.ts';
import type { Db } from '../../src/store/db.ts';
import { bumpVersion } from '../../src/store/items/changes.ts';
import { storeItems } from '../../src/store/items/write.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { testPostgresUrl } from '../helper.ts';
import { ownsEntries } from '../../src/services/table.ts';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const ids = (res: { json: () => unknown }) => (res.json() as { id: string }[]).map((item) => item.id);

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const get = (path: 'queue' | 'content' | 'count', query: string, token: string | null = tenant.token) =>
    ctx.app.inject({
      method: 'GET',
      url: `/v1/${path}/${tenant.contract.slug}?q=${tenant.collection.slug}&${query}${path === 'queue' && token ? `&access_token=${token}` : ''}`,
    });
  return { ...ctx, tenant, get };
}

const CENTRE = { longitude: 13.405, latitude: 52.52 };

describe('location=<longitude>,<latitude>,<radius>', () => {
  it('matches items within the great-circle radius, at its very edge, on queue, content and count', async () => {
    const { db, tenant, get } = await setup();
    const now = Date.now();
    const at = (id: string, bearing: number, meters: number, extra: Partial<ContentItem> = {}) => {
      const location = destination(CENTRE, bearing, meters);
      return buildItem({ id, location, date: new Date(now - MIN).toISOString(), ...extra });
    };
    const items = [
      at('rss_centre', 0, 0),
      at('rss_in_99_0', 0, 99.0),
      at('rss_in_99_9', 90, 99.9),
      at('rss_in_99_99', 225, 99.99),
      at('rss_out_100_1', 180, 100.1),
      at('rss_out_101', 300, 101),
      at('rss_out_199_9', 45, 199.9),
      buildItem({ id: 'rss_nowhere', date: new Date(now - MIN).toISOString() }),
    ];
    // The generated points are where the test says they are.
    expect(distanceMeters(CENTRE, items[2]!.location!)).toBeCloseTo(99.9, 6);
    await seedItems(db, tenant, items);
    await seedItems(db, tenant, [at('rss_hidden_50', 10, 50)], 'unpublished');

    const loc = (radius: number) => `location=${CENTRE.longitude},${CENTRE.latitude},${radius}`;
    const inside100 = ['rss_centre', 'rss_in_99_0', 'rss_in_99_9', 'rss_in_99_99'];
    expect(ids(await get('content', `${loc(100)}&order=asc`)).sort()).toEqual([...inside100].sort());
    expect(ids(await get('queue', loc(100))).sort()).toEqual([...inside100, 'rss_hidden_50'].sort());
    expect((await get('count', loc(100))).json()).toEqual({ count: '4' });
    expect(ids(await get('content', loc(200))).sort()).toEqual([...inside100, 'rss_out_100_1', 'rss_out_101', 'rss_out_199_9'].sort());
    expect(ids(await get('content', loc(10)))).toEqual(['rss_centre']);
    // Longitude comes first: the same numbers swapped name a point in Somalia.
    expect(ids(await get('content', `location=${CENTRE.latitude},${CENTRE.longitude},200`))).toEqual([]);
  });

  it('finds items across the antimeridian and around a pole', async () => {
    const { db, tenant, get } = await setup();
    const date = new Date(Date.now() - MIN).toISOString();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_east', date, location: { latitude: 0, longitude: 179.9996 } }),
      buildItem({ id: 'rss_west', date, location: { latitude: 0, longitude: -179.9996 } }),
      buildItem({ id: 'rss_pole_far_side', date, location: { latitude: 89.9996, longitude: 180 } }),
    ]);
    // 0.0008° of longitude at the equator is 89 m.
    expect(ids(await get('content', 'location=-179.9996,0,100')).sort()).toEqual(['rss_east', 'rss_west']);
    expect(ids(await get('content', 'location=179.9996,0,50'))).toEqual(['rss_east']);
    // 0.0004° of latitude is 44.5 m: both points are 44.5 m from the pole, 89 m apart.
    expect(ids(await get('content', 'location=0,89.9996,100'))).toEqual(['rss_pole_far_side']);
    expect(ids(await get('content', 'location=0,89.9996,80'))).toEqual([]);
  });

  it('refuses malformed values and values out of the geographic ranges, naming location', async () => {
    const { get } = await setup();
    const cases: [string, number][] = [
      ['abc', 1005],
      ['13.4,52.5', 1005],
      ['13.4,52.5,100,1', 1005],
      ['13.4,,100', 1005],
      ['13.4,52.5,1e2', 1005],
      ['180.5,52.5,100', 1003],
      ['-180.01,52.5,100', 1003],
      ['13.4,90.1,100', 1003],
      ['13.4,-91,100', 1003],
      ['13.4,52.5,9.99', 1003],
      ['13.4,52.5,200.5', 1003],
      ['13.4,52.5,-50', 1003],
    ];
    for (const [value, code] of cases) {
      for (const path of ['queue', 'content', 'count'] as const) {
        expectError(await get(path, `location=${encodeURIComponent(value)}`), 400, { name: 'ValidationError', code, propertyName: 'location' });
      }
    }
    for (const ok of ['-180,-90,10', '180,90,200', '0,0,10.5', ' 13.4 , 52.5 , 100 ']) {
      expect((await get('content', `location=${encodeURIComponent(ok)}`)).statusCode).toBe(200);
    }
  });
});

describe('language', () => {
  it('filters by a comma list on queue, content and count, and refuses codes that are not ISO 639-1', async () => {
    const { db, tenant, get } = await setup();
    const date = new Date(Date.now() - MIN).toISOString();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_en', date, language: 'en' }),
      buildItem({ id: 'rss_de', date, language: 'de' }),
      buildItem({ id: 'rss_fr', date, language: 'fr' }),
    ]);
    expect(ids(await get('content', 'language=de,FR')).sort()).toEqual(['rss_de', 'rss_fr']);
    expect(ids(await get('queue', 'language=en'))).toEqual(['rss_en']);
    expect((await get('count', 'language=en,de')).json()).toEqual({ count: '2' });
    for (const path of ['queue', 'content', 'count'] as const) {
      expectError(await get(path, 'language=eng'), 400, { name: 'ValidationError', code: 1004, propertyName: 'language' });
      expectError(await get(path, 'language=en,1x'), 400, { name: 'ValidationError', code: 1004, propertyName: 'language' });
    }
  });

  it('detects the language of items whose source names none, and leaves it absent when unsure', async () => {
    const { db, tenant, get } = await setup();
    const date = new Date(Date.now() - MIN).toISOString();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_german', date, title: 'Neue Brücke über den Fluss', text: '<p>Die Stadt hat heute beschlossen, dass die alte Brücke im nächsten Jahr durch einen Neubau ersetzt wird.</p>' }),
      buildItem({ id: 'rss_spanish', date, title: 'Nuevo puente', text: 'El ayuntamiento decidió hoy que el viejo puente será sustituido por uno nuevo el próximo año.' }),
      buildItem({ id: 'rss_short', date, title: '', text: 'ok 👍' }),
      buildItem({ id: 'rss_source_says', date, language: 'it', text: 'This text is English but the source said Italian.' }),
    ]);
    const items = (await get('content', 'order=asc')).json() as ContentItem[];
    const language = (id: string) => items.find((i) => i.id === id)!.language;
    expect(language('rss_german')).toBe('de');
    expect(language('rss_spanish')).toBe('es');
    expect(language('rss_short')).toBeUndefined();
    expect(language('rss_source_says')).toBe('it');
    expect(ids(await get('content', 'language=de'))).toEqual(['rss_german']);
    expect(ids(await get('queue', 'language=es'))).toEqual(['rss_spanish']);
  });
});

describe('paging', () => {
  /** 57 items with many equal dates and scores, so only the id can break ties. */
  function crowd(now: number): ContentItem[] {
    return Array.from({ length: 57 }, (_, n) =>
      buildItem({
        id: `rss_${String((n * 37) % 57).padStart(2, '0')}`,
        date: new Date(now - (1 + (n % 5)) * MIN).toISOString(),
        kudos: { score: n % 4 },
      }),
    );
  }

  function expected(items: ContentItem[], sort: 'time' | 'kudos' | 'trending', order: 'asc' | 'desc'): string[] {
    const key = (i: ContentItem) => (sort === 'kudos' ? i.kudos.score : sort === 'trending' ? trendingScore(i.kudos.score, Date.parse(i.date)) : Date.parse(i.date));
    const sorted = [...items].sort((a, b) => key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return (order === 'asc' ? sorted : sorted.reverse()).map((i) => i.id);
  }

  it('walks a whole collection without gaps or repeats under every sort and order, on queue and content', async () => {
    const { db, tenant, get } = await setup();
    const items = crowd(Date.now());
    await seedItems(db, tenant, items.slice(0, 40));
    await seedItems(db, tenant, items.slice(40), 'unpublished');
    for (const sort of ['time', 'kudos', 'trending'] as const) {
      for (const order of ['asc', 'desc'] as const) {
        for (const [path, wanted] of [
          ['content', expected(items.slice(0, 40), sort, order)],
          ['queue', expected(items, sort, order)],
        ] as const) {
          const walked: string[] = [];
          for (let offset = 0; ; offset += 7) {
            const page = ids(await get(path, `sort=${sort}&order=${order}&count=7&offset=${offset}`));
            walked.push(...page);
            if (page.length < 7) break;
          }
          expect(walked, `${path} ${sort} ${order}`).toEqual(wanted);
          expect(new Set(walked).size).toBe(walked.length);
        }
      }
    }
  });

  it('enforces count, offset, sort and order limits, naming each parameter', async () => {
    const { get } = await setup();
    const bad: [string, string, number, ('queue' | 'content')[]][] = [
      ['count=0', 'count', 1003, ['queue', 'content']],
      ['count=101', 'count', 1003, ['content']],
      ['count=501', 'count', 1003, ['queue']],
      ['count=ten', 'count', 1002, ['queue', 'content']],
      ['count=2.5', 'count', 1002, ['queue', 'content']],
      ['offset=-1', 'offset', 1003, ['queue', 'content']],
      ['offset=1000001', 'offset', 1003, ['queue', 'content']],
      ['offset=x', 'offset', 1002, ['queue', 'content']],
      ['sort=random', 'sort', 1004, ['queue', 'content']],
      ['order=up', 'order', 1004, ['queue', 'content']],
    ];
    for (const [query, propertyName, code, paths] of bad) {
      for (const path of paths) expectError(await get(path, query), 400, { name: 'ValidationError', code, propertyName });
    }
    for (const ok of ['count=1', 'count=100', 'offset=0', 'offset=1000000', 'sort=kudos&order=asc', 'sort=time&order=desc', 'sort=trending']) {
      expect((await get('content', ok)).statusCode).toBe(200);
    }
    expect((await get('queue', 'count=500')).statusCode).toBe(200);
  });

  it('validates since and until on queue, content and count, each naming its parameter', async () => {
    const { db, tenant, get } = await setup();
    const now = Date.now();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_new', date: new Date(now - MIN).toISOString() }),
      buildItem({ id: 'rss_3d', date: new Date(now - 72 * 60 * MIN).toISOString() }),
    ]);
    const s = Math.floor(now / 1000);
    for (const path of ['queue', 'content', 'count'] as const) {
      expectError(await get(path, 'since=-1'), 400, { name: 'ValidationError', code: 1003, propertyName: 'since' });
      expectError(await get(path, 'until=soon'), 400, { name: 'ValidationError', code: 1002, propertyName: 'until' });
      expectError(await get(path, 'since=1.5'), 400, { name: 'ValidationError', code: 1002, propertyName: 'since' });
      expectError(await get(path, `since=${s}&until=${s - 10}`), 400, { name: 'ValidationError', code: 1003, propertyName: 'since' });
    }
    // Defaults: the last 24 h. until alone keeps since at now − 24 h.
    expect((await get('count', '')).json()).toEqual({ count: '1' });
    expect((await get('count', `since=${s - 4 * 86_400}`)).json()).toEqual({ count: '2' });
    expect((await get('count', `until=${s - 2 * 86_400}`)).json()).toEqual({ count: '0' });
    expect(ids(await get('content', `since=${s - 4 * 86_400}&until=${s - 2 * 86_400}`))).toEqual(['rss_3d']);
  });

  it('needs q on every read', async () => {
    const { app, tenant } = await setup();
    for (const path of ['queue', 'content', 'count']) {
      const res = await app.inject({ method: 'GET', url: `/v1/${path}/${tenant.contract.slug}?access_token=${tenant.token}` });
      expectError(res, 400, { name: 'ValidationError', code: 1001, propertyName: 'q' });
    }
  });
});

describe('contract isolation', () => {
  it('another contract cannot read, count or moderate a collection through its own slug', async () => {
    const { app, db, tenant } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_secret' })]);
    const other = await buildTenant(db, 'Other Corp');
    // Other Corp has a collection with the same slug; it must not see Acme's items.
    for (const path of ['content', 'count']) {
      const res = await app.inject({ method: 'GET', url: `/v1/${path}/${other.contract.slug}?q=${tenant.collection.slug}` });
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('rss_secret');
    }
    expect((await app.inject({ method: 'GET', url: `/v1/count/${other.contract.slug}?q=${tenant.collection.slug}` })).json()).toEqual({ count: '0' });
    const read = await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&access_token=${other.token}` });
    expectError(read, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect(read.body).not.toContain('rss_secret');
    const change = await app.inject({ method: 'PATCH', url: `/v1/queue/${other.contract.slug}?q=${tenant.collection.slug}&id=rss_secret&access_token=${other.token}`, payload: { state: 'unpublished' } });
    expectError(change, 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    const still = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}` });
    expect(ids(still)).toEqual(['rss_secret']);
  });
});

describe('caching', () => {
  it('serves new items stored by the collector to the next reads within CONTENT_MAX_AGE, and moderation at once', async () => {
    const { app, db, tenant, get } = await setup();
    const now = Date.now();
    await seedItems(db, tenant, [buildItem({ id: 'rss_first', date: new Date(now - 2 * MIN).toISOString() })]);
    const first = await get('content', '');
    expect(ids(first)).toEqual(['rss_first']);
    expect((await get('count', '')).json()).toEqual({ count: '1' });
    const etag = first.headers.etag as string;
    expect((await app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=${tenant.collection.slug}`, headers: { 'if-none-match': (await get('count', '')).headers.etag as string } })).statusCode).toBe(304);

    // As the collector does, in another transaction (possibly another process): the next reads
    // show it within the max-age (the process re-reads the collection's version every second).
    await seedItems(db, tenant, [buildItem({ id: 'rss_second', date: new Date(now - MIN).toISOString() })]);
    let seen: string[] = [];
    for (let i = 0; i < 50 && seen.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = ids(await get('content', ''));
    }
    expect(seen).toEqual(['rss_second', 'rss_first']);
    // The count page, kept at the version read before, follows within the same delay.
    let count = '';
    for (let i = 0; i < 50 && count !== '2'; i++) {
      count = ((await get('count', '')).json() as { count: string }).count;
      if (count !== '2') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(count).toBe('2');
    const changed = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}`, headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);

    const off = await app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=rss_second&access_token=${tenant.token}`, payload: { state: 'unpublished' } });
    expect(off.json()).toMatchObject({ id: 'rss_second', state: 'unpublished' });
    expect(ids(await get('content', ''))).toEqual(['rss_first']);
    expect((await get('count', '')).json()).toEqual({ count: '1' });
  });

  it('serves an item edited at the source with its new text, never the form serialized before', async () => {
    const { db, tenant, get } = await setup();
    const item = buildItem({ id: 'rss_edited', title: 'Before', date: new Date(Date.now() - MIN).toISOString() });
    await seedItems(db, tenant, [item]);
    const titles = async (query: string) => ((await get('content', query)).json() as ContentItem[]).map((i) => i.title);
    expect(await titles('')).toEqual(['Before']);
    expect(await titles('count=5')).toEqual(['Before']);
    // As the collector does when the source changed a stored item (store/items/write.ts applyEdits).
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, Date.now(), new Set(), [{ ...item, title: 'After' }]));
    let seen: (string | undefined)[] = [];
    for (let i = 0; i < 50 && seen[0] !== 'After'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await titles('');
    }
    expect(seen).toEqual(['After']);
    // Another page of the same item (a query not read before) is built with the new text too.
    expect(await titles('count=7')).toEqual(['After']);
  });

  it('leaves out of a content page an item unpublished between choosing the page and reading its document', async () => {
    const { db, config, tenant } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_a' }), buildItem({ id: 'rss_b' })]);
    const reads = createReadPath(db, config);
    const rows = await findItems(db, tenant.contract.id, tenant.collection.id, ['rss_a', 'rss_b']);
    const keys = rows.map((row) => ({ collectionId: row.collectionId, id: row.id, seq: row.seq, state: row.state }));
    // The moderation lands after the keys were read: the documents now say unpublished.
    const load = async () => rows.map((row) => (row.id === 'rss_b' ? { ...row, state: 'unpublished' } : row));
    expect((JSON.parse(await reads.itemsJson(keys, load)) as ContentItem[]).map((i) => i.id)).toEqual(['rss_a']);
  });

  it('answers a page from the collection\'s head exactly as the SQL read, and reads with SQL what the head cannot hold', async () => {
    const { db, config, tenant } = await setup();
    const now = Date.now();
    // 260 items (more than a head holds) over 40 minutes, many on the same minute: ids break the ties.
    const items = Array.from({ length: 260 }, (_, n) =>
      buildItem({ id: `rss_${String((n * 97) % 260).padStart(3, '0')}`, date: new Date(now - (n % 40) * MIN).toISOString(), language: ['en', 'de'][n % 2]!, type: n % 3 ? 'link' : 'image' }),
    );
    await seedItems(db, tenant, items);
    const reads = createReadPath(db, config);
    const collection = await reads.collection(tenant.contract.slug, tenant.collection.slug);
    const load = (limit: number) => listHeadKeys(db, tenant.contract.id, tenant.collection.id, limit);
    const base: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, state: 'published', sinceMs: now - DAY, untilMs: now };
    const page: Page = { count: 20, offset: 0, sort: 'time', order: 'desc' };
    const cases: [ItemQuery, Page, 'head' | 'sql'][] = [
      [base, page, 'head'],
      [{ ...base, untilMs: now - 3 * MIN }, page, 'head'],
      [{ ...base, untilMs: now - 3 * MIN - 1 }, { ...page, count: 13, offset: 9 }, 'head'],
      [{ ...base, sinceMs: now - 6 * MIN }, { ...page, order: 'asc' }, 'head'],
      [{ ...base, languages: ['de'] }, page, 'head'],
      [{ ...base, types: ['image'], languages: ['en'] }, page, 'head'],
      [{ ...base, untilMs: now - 35 * MIN }, page, 'sql'],
      [base, { ...page, order: 'asc' }, 'sql'],
      [base, { ...page, sort: 'kudos' }, 'sql'],
      [base, { ...page, offset: 190, count: 20 }, 'sql'],
    ];
    // The first read of a version builds no head.
    expect(await reads.fromHead(collection, base, page, load)).toBeUndefined();
    for (const [query, paging, from] of cases) {
      const keys = await reads.fromHead(collection, query, paging, load);
      const sql = await listItemKeys(db, query, paging, 'unpinned');
      expect(sql.length, JSON.stringify({ query, paging })).toBeGreaterThan(0);
      if (from === 'sql') expect(keys, JSON.stringify({ query, paging })).toBeUndefined();
      else expect(keys, JSON.stringify({ query, paging })).toEqual(sql.map(({ collectionId, id, seq, state }) => ({ collectionId, id, seq, state })));
    }
  });

  it('shows a moderation, a pin and a new item at once in reads answered from the head', async () => {
    const { app, db, tenant, get } = await setup();
    const now = Date.now();
    await seedItems(db, tenant, Array.from({ length: 30 }, (_, n) => buildItem({ id: `rss_${String(n).padStart(2, '0')}`, date: new Date(now - (n + 1) * MIN).toISOString() })));
    const until = (n: number) => `until=${Math.floor(now / 1000) - n}`;
    // Two reads of the version: the second builds the head.
    expect(ids(await get('content', `${until(1)}&count=3`))).toEqual(['rss_00', 'rss_01', 'rss_02']);
    expect(ids(await get('content', `${until(2)}&count=3`))).toEqual(['rss_00', 'rss_01', 'rss_02']);
    const patch = (id: string, payload: object) => app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${id}&access_token=${tenant.token}`, payload });
    expect((await patch('rss_00', { state: 'unpublished' })).statusCode).toBe(200);
    expect(ids(await get('content', `${until(3)}&count=3`))).toEqual(['rss_01', 'rss_02', 'rss_03']);
    expect(ids(await get('content', `${until(4)}&count=3`))).toEqual(['rss_01', 'rss_02', 'rss_03']);
    expect((await patch('rss_20', { pinned: true })).statusCode).toBe(200);
    expect(ids(await get('content', `${until(5)}&count=3`))).toEqual(['rss_20', 'rss_01', 'rss_02']);
    expect((await patch('rss_20', { pinned: false })).statusCode).toBe(200);
    expect(ids(await get('content', `${until(6)}&count=3`))).toEqual(['rss_01', 'rss_02', 'rss_03']);
    // As the collector does, in another transaction: seen within the version's re-read (a second).
    await seedItems(db, tenant, [buildItem({ id: 'rss_new', date: new Date(now - 30_000).toISOString() })]);
    let seen: string[] = [];
    for (let i = 0; i < 50 && seen[0] !== 'rss_new'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = ids(await get('content', `${until(7 + i)}&count=3`));
    }
    expect(seen).toEqual(['rss_new', 'rss_01', 'rss_02']);
  });

  it('sends one page, one entity tag, to reads whose queries differ but select the same items; a new text makes a new one', async () => {
    const { app, db, tenant, get } = await setup();
    const now = Date.now();
    const item = buildItem({ id: 'rss_only', title: 'Before', date: new Date(now - 10 * MIN).toISOString() });
    await seedItems(db, tenant, [item]);
    const s = Math.floor(now / 1000);
    const first = await get('content', `until=${s - 1}`);
    const second = await get('content', `until=${s - 2}`);
    expect(second.body).toBe(first.body);
    expect(second.headers.etag).toBe(first.headers.etag);
    const revalidated = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&until=${s - 3}`, headers: { 'if-none-match': first.headers.etag as string } });
    expect(revalidated.statusCode).toBe(304);
    // JSONP of the same items is another body.
    expect((await get('content', `until=${s - 4}&callback=cb`)).headers.etag).not.toBe(first.headers.etag);
    // Edited at the source (a new `seq`): the next reads of those queries send the new text.
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, Date.now(), new Set(), [{ ...item, title: 'After' }]));
    let titles: string[] = [];
    for (let i = 0; i < 50 && titles[0] !== 'After'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      titles = ((await get('content', `until=${s - 5 - i}`)).json() as ContentItem[]).map((one) => one.title!);
    }
    expect(titles).toEqual(['After']);
    const again = await get('content', `until=${s - 1}`);
    expect(again.headers.etag).not.toBe(first.headers.etag);
  });

  it('forgets a collection at a moderation here even while its version is being read: the lookup under way stores nothing', async () => {
    const { db, config, tenant } = await setup();
    const reads = createReadPath(db, config);
    const first = await reads.collection(tenant.contract.slug, tenant.collection.slug);
    reads.forget(tenant.contract.slug, tenant.collection.slug);
    // A read starts a lookup; a moderation here forgets the collection and bumps its version while that lookup is under way.
    const during = reads.collection(tenant.contract.slug, tenant.collection.slug);
    reads.forget(tenant.contract.slug, tenant.collection.slug);
    await db.transaction().execute((trx) => bumpVersion(trx, tenant.contract.id, tenant.collection.id));
    // (On SQLite the lookup read the version before the bump; on PostgreSQL, another connection, it may have read either.)
    expect((await during).version).toBeGreaterThanOrEqual(first.version);
    // The next read, at once, reads the version again: not the one the overtaken lookup found.
    expect((await reads.collection(tenant.contract.slug, tenant.collection.slug)).version).toBeGreaterThan(first.version);
  });

  it('answers a URL read again from the page found for it, at its collection\'s version: never past a moderation here, a version re-read or an over-long URL', async () => {
    const { db, config, tenant } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_one' })]);
    const reads = createReadPath(db, config);
    const slug = tenant.contract.slug;
    const query = { q: tenant.collection.slug };
    const url = `/v1/content/${slug}?q=${query.q}`;
    const collection = await reads.collection(slug, query.q);
    const build = async () => render([{ id: 'rss_one' }], undefined, config.contentMaxAge);
    // Kept from its second miss on (cache.ts); a hit then remembers its URL.
    await reads.page('content', collection, query, build);
    const kept = await reads.page('content', collection, query, build);
    expect(reads.freshAt(url)).toBeUndefined();
    const now = Date.now();
    expect(reads.fresh('content', slug, query, url, now)).toBe(kept);
    expect(reads.freshAt(url, now)).toBe(kept);
    expect(reads.freshAt(`${url}&count=20`, now)).toBeUndefined();
    // The collection's version is trusted for a second, as by `fresh`.
    expect(reads.freshAt(url, now + 1000)).toBeUndefined();
    reads.forget(slug, query.q);
    expect(reads.freshAt(url, now)).toBeUndefined();
    const long = `${url}&callback=${'c'.repeat(512)}`;
    const again = await reads.collection(slug, query.q);
    await reads.page('content', again, { ...query, callback: 'c'.repeat(512) }, build);
    await reads.page('content', again, { ...query, callback: 'c'.repeat(512) }, build);
    expect(reads.fresh('content', slug, { ...query, callback: 'c'.repeat(512) }, long)).toBeDefined();
    expect(reads.freshAt(long)).toBeUndefined();
  });

  it('never answers a URL with the page of a collection deleted and made anew under the same slug, even at the same version', async () => {
    const { app, db, config, tenant } = await setup();
    const call = (method: 'POST' | 'DELETE', url: string, payload?: object) => app.inject({ method, url: `${url}?access_token=${encodeURIComponent(tenant.token)}`, ...(payload ? { payload } : {}) });
    const make = async () => (await call('POST', '/collection/collections', { name: 'Later', contractId: tenant.contract.id, type: 'realtime' })).json() as { _id: string; slug: string };
    const first = await make();
    const reads = createReadPath(db, config);
    const slug = tenant.contract.slug;
    const query = { q: first.slug };
    const url = `/v1/content/${slug}?q=${first.slug}`;
    const before = await reads.collection(slug, query.q);
    const build = async () => render([{ id: 'rss_of_the_first' }], undefined, config.contentMaxAge);
    await reads.page('content', before, query, build);
    await reads.page('content', before, query, build);
    expect(reads.fresh('content', slug, query, url)).toBeDefined();
    expect((await call('DELETE', `/collection/collections/${first._id}`)).statusCode).toBe(204);
    const second = await make();
    expect(second.slug).toBe(first.slug);
    // The new collection brought to the version the page was kept at.
    for (let i = 0; i < 10; i++) {
      const { version } = await reads.collection(slug, query.q);
      if (version >= before.version) break;
      await db.transaction().execute((trx) => bumpVersion(trx, tenant.contract.id, second._id));
      reads.forget(slug, query.q);
    }
    reads.forget(slug, query.q);
    const after = await reads.collection(slug, query.q);
    expect(after).toMatchObject({ id: second._id, version: before.version });
    expect(reads.freshAt(url)).toBeUndefined();
    // The new collection's page, once found by its URL, is the one the URL answers.
    const rebuild = async () => render([{ id: 'rss_of_the_second' }], undefined, config.contentMaxAge);
    await reads.page('content', after, query, rebuild);
    const kept = await reads.page('content', after, query, rebuild);
    expect(reads.fresh('content', slug, query, url)).toBe(kept);
    expect(reads.freshAt(url)).toBe(kept);
  });

  it('answers a page from memory only at the version its head and pins were read at, and only once that page of items is kept', async () => {
    const { db, config, tenant } = await setup();
    const now = Date.now();
    await seedItems(db, tenant, Array.from({ length: 30 }, (_, n) => buildItem({ id: `rss_${String(n).padStart(2, '0')}`, date: new Date(now - (n + 1) * MIN).toISOString() })));
    const reads = createReadPath(db, config);
    const slug = tenant.contract.slug;
    const query = { q: tenant.collection.slug };
    const selection: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, state: 'published', sinceMs: now - DAY, untilMs: now };
    const page: Page = { count: 3, offset: 0, sort: 'time', order: 'desc' };
    const loadHead = (limit: number) => listHeadKeys(db, tenant.contract.id, tenant.collection.id, limit);
    const load = (ids: string[]) => findItems(db, tenant.contract.id, tenant.collection.id, ids);
    const render = (json: string) => renderJson(json, undefined, config.contentMaxAge);
    /** One uncached read as the route makes it: pins, head, then the page of its items. */
    const read = async (collection: ReadCollection, pinned = false) => {
      await reads.hasPins(collection, async () => pinned);
      const keys = (await reads.fromHead(collection, selection, page, loadHead)) ?? (await listItemKeys(db, selection, page, 'unpinned'));
      return reads.itemsPage(collection.id, keys, '', load, render);
    };
    const collection = await reads.collection(slug, query.q);
    expect(reads.fromMemory(collection, query, selection, page, '')).toBeUndefined();
    await read(collection);
    // The head is built at the second read of the version, and the items' page kept at its second build.
    const kept = await read(collection);
    const remembered = reads.fromMemory(collection, query, selection, page, '');
    expect(remembered?.body).toEqual(kept.body);
    expect(JSON.parse(remembered!.body.toString()).map((item: ContentItem) => item.id)).toEqual(['rss_00', 'rss_01', 'rss_02']);
    // Another query whose page the head holds but whose items' page was never built: not from memory.
    expect(reads.fromMemory(collection, query, selection, { ...page, offset: 3 }, '')).toBeUndefined();
    expect(reads.fromMemory(collection, query, selection, page, 'cb')).toBeUndefined();
    // Not in time order (a head holds the time order only): never.
    expect(reads.fromMemory(collection, query, selection, { ...page, sort: 'kudos' }, '')).toBeUndefined();
    // A new version (a moderation, a new item): its head is not read yet.
    await db.transaction().execute((trx) => bumpVersion(trx, tenant.contract.id, tenant.collection.id));
    reads.forget(slug, query.q);
    const next = await reads.collection(slug, query.q);
    expect(next.version).toBeGreaterThan(collection.version);
    expect(reads.fromMemory(next, query, selection, page, '')).toBeUndefined();
    // Pins at that version: never from memory, however often read.
    await read(next, true);
    await read(next, true);
    expect(reads.fromMemory(next, query, selection, page, '')).toBeUndefined();
  });

  it('answers a URL read again with its conditional and compressed forms, shows a moderation at once, and counts it against the address\'s limit', async () => {
    const { app, db } = await build({ RATE_LIMIT_PUBLIC: '12', RATE_LIMIT_WINDOW: '3600' });
    const tenant = await buildTenant(db);
    // A page over 1 KiB, which is kept with its gzip form (respond.ts).
    await seedItems(db, tenant, [buildItem({ id: 'rss_a', text: 'words '.repeat(300), date: new Date(Date.now() - 2 * MIN).toISOString() }), buildItem({ id: 'rss_b', date: new Date(Date.now() - MIN).toISOString() })]);
    const url = `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}`;
    const read = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
    // The second miss keeps the page, the third read finds it and remembers the URL: the fourth is answered by it.
    const first = await read();
    for (let i = 0; i < 3; i++) {
      const res = await read();
      expect(res.body).toBe(first.body);
      expect(res.headers).toMatchObject({ etag: first.headers.etag, 'cache-control': first.headers['cache-control'], 'access-control-allow-origin': '*', vary: 'accept-encoding' });
    }
    expect((await read({ 'if-none-match': first.headers.etag as string })).statusCode).toBe(304);
    const gzip = await read({ 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(first.body);
    const off = await app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=rss_b&access_token=${tenant.token}`, payload: { state: 'unpublished' } });
    expect(off.statusCode).toBe(200);
    expect(ids(await read())).toEqual(['rss_a']);
    // Seven reads of the address so far (the moderation bears a token: another limit); five more
    // answered by the page found for the URL, and the next is refused.
    for (let i = 0; i < 5; i++) expect((await read()).headers.ratelimit).toMatch(new RegExp(`^"address";r=${4 - i};t=\\d+$`));
    expectError(await read(), 429, { name: 'RateLimitError', code: 4291 });
  });

  it('caches JSON and JSONP of the same query apart', async () => {
    const { db, tenant, get } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_one' })]);
    const json = await get('content', '');
    const jsonp = await get('content', 'callback=cb');
    expect(json.body.startsWith('[')).toBe(true);
    expect(jsonp.body.startsWith('/**/cb([')).toBe(true);
    expect(json.headers.etag).not.toBe(jsonp.headers.etag);
    expect((await get('content', '')).body).toBe(json.body);
  });
});

/**
 * PostgreSQL's plan of `c`, its lines. PostgreSQL scans a table this small whatever its indexes;
 * with sequential scans priced out, the plan shows whether an index can serve the query at all.
 */
async function postgresPlan(db: Db, c: CompiledQuery): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await conn.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
    const { rows } = await conn.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${c.sql}`, [...c.parameters]));
    await conn.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
    return rows.map((r) => r['QUERY PLAN']);
  });
}

describe('query plans', () => {
  // The tenant's term of every read (store/items/rows.ts `ofContract`): one primary-key lookup of
  // the collection, evaluated once, whatever the read walks.
  const TENANT_STEP = /^(SCALAR SUBQUERY \d+|SEARCH collections (EXISTS )?USING INDEX sqlite_autoindex_collections_1 \(id=\?\))$/;
  /** A plan's steps on SQLite without the tenant's term, after checking that it is there, once. */
  const itemSteps = (steps: string[]): string[] => {
    expect(steps.filter((step) => step.startsWith('SEARCH collections')), steps.join(' | ')).toHaveLength(1);
    return steps.filter((step) => !TENANT_STEP.test(step));
  };

  it('serve every sort, order and filter combination from an index, never a full scan', async () => {
    const { db, tenant } = await setup();
    const now = Date.now();
    const filters: Partial<ItemQuery>[] = [
      {},
      { services: ['rss', 'youtube'] },
      { types: ['video'] },
      { languages: ['en', 'de'] },
      { location: { longitude: 13.4, latitude: 52.5, radius: 200 } },
      { location: { longitude: 179.9999, latitude: 0, radius: 200 } },
      { services: ['rss'], types: ['link'], languages: ['en'], location: { longitude: 13.4, latitude: 52.5, radius: 50 } },
    ];
    let checked = 0;
    for (const state of [undefined, 'published'] as const) {
      for (const filter of filters) {
        const query: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 86_400_000, untilMs: now, ...(state ? { state } : {}), ...filter };
        const compiled = [compileCount(db, query)];
        for (const sort of ['time', 'kudos', 'trending'] as const) {
          for (const order of ['asc', 'desc'] as const) {
            for (const read of ['documents', 'keys'] as const) compiled.push(compilePage(db, query, { count: 20, offset: 40, sort, order }, read));
          }
        }
        for (const c of compiled) {
          if (testPostgresUrl) {
            const plan = await postgresPlan(db, c);
            expect(plan.some((line) => /Index (Only )?Scan .* on items|Bitmap Index Scan on items/.test(line)), plan.join(' | ')).toBe(true);
            expect(plan.filter((line) => /Seq Scan on items/.test(line)), plan.join(' | ')).toEqual([]);
          } else {
            const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
            const plan = rows.map((r) => r.detail);
            expect(plan.some((line) => /^SEARCH items USING (COVERING )?INDEX/.test(line)), plan.join(' | ')).toBe(true);
            expect(plan.filter((line) => /^SCAN items/.test(line)), plan.join(' | ')).toEqual([]);
          }
          checked++;
        }
      }
    }
    expect(checked).toBe(2 * filters.length * 13);
  });

  // SQLite's plans (PostgreSQL prices a table this small by other rules): the page is chosen by
  // walking one covering index in the read's order, so ties broken by id never sort the date
  // range, and neither the filters nor the page choice read the table (only the page's rows are).
  const walks: [name: string, filter: Partial<ItemQuery>, page: Partial<Page>, index: RegExp][] = [
    ['content', { state: 'published' }, {}, /items_read_state_time/],
    ['content, oldest first', { state: 'published' }, { order: 'asc' }, /items_read_state_time/],
    ['content, one language', { state: 'published', languages: ['de'] }, {}, /items_read_state_time/],
    ['content, offset 500', { state: 'published' }, { offset: 500 }, /items_read_state_time/],
    ['content, services, types and languages', { state: 'published', services: ['rss', 'youtube'], types: ['video', 'link'], languages: ['en', 'de'] }, {}, /items_read_state_time/],
    ['queue', {}, {}, /items_read_time/],
    ['queue, unpublished', { state: 'unpublished' }, {}, /items_read_state_time/],
    ['queue, every list filter', { services: ['rss'], types: ['link'], languages: ['en', 'de', 'fr'] }, { order: 'asc' }, /items_read_time/],
    ['content, trending', { state: 'published' }, { sort: 'trending' }, /items_read_state_trend/],
    ['content, trending, one language, offset 500', { state: 'published', languages: ['de'] }, { sort: 'trending', offset: 500 }, /items_read_state_trend/],
    ['queue, trending', {}, { sort: 'trending' }, /items_read_trend/],
  ];
  it.skipIf(testPostgresUrl).each(walks)('%s: walks a covering index in order, no sort of the date range', async (_name, filter, page, index) => {
    const { db, tenant } = await setup();
    const now = Date.now();
    const query: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 30 * 86_400_000, untilMs: now, ...filter };
    const c = compilePage(db, query, { count: 20, offset: 0, sort: 'time', order: 'desc', ...page });
    const { rows } = await db.executeQuery<{ id: number; parent: number; detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
    const text = itemSteps(rows.map((r) => r.detail)).join(' | ');
    // The steps that choose the page: the derived table's subtree.
    const inside = new Set(rows.filter((r) => /^(CO-ROUTINE|MATERIALIZE) page/.test(r.detail)).map((r) => r.id));
    const choosing: string[] = [];
    for (const row of rows) {
      if (!inside.has(row.parent)) continue;
      inside.add(row.id);
      if (!TENANT_STEP.test(row.detail)) choosing.push(row.detail);
    }
    expect(choosing, text).toEqual([expect.stringMatching(new RegExp(`^SEARCH items USING COVERING INDEX ${index.source} `))]);
    // The page's own rows: one lookup each.
    expect(text).toMatch(/SEARCH items USING INTEGER PRIMARY KEY \(rowid=\?\)/);
  });

  it.skipIf(testPostgresUrl).each(walks)('%s: takes the page\'s keys from that index alone, no table read, no sort', async (_name, filter, page, index) => {
    const { db, tenant } = await setup();
    const now = Date.now();
    const query: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 30 * 86_400_000, untilMs: now, ...filter };
    const c = compilePage(db, query, { count: 20, offset: 0, sort: 'time', order: 'desc', ...page }, 'keys');
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
    expect(itemSteps(rows.map((r) => r.detail))).toEqual([expect.stringMatching(new RegExp(`^SEARCH items USING COVERING INDEX ${index.source} `))]);
  });

  it.skipIf(testPostgresUrl).each(walks)('%s: with pinned items left out (docs/api.md#pin-and-spotlight), still that index alone', async (_name, filter, page, index) => {
    const { db, tenant } = await setup();
    const now = Date.now();
    const query: ItemQuery = { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 30 * 86_400_000, untilMs: now, ...filter };
    const c = compilePage(db, query, { count: 20, offset: 0, sort: 'time', order: 'desc', ...page }, 'keys', ['rss_pinned1', 'rss_pinned2']);
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
    expect(itemSteps(rows.map((r) => r.detail))).toEqual([expect.stringMatching(new RegExp(`^SEARCH items USING COVERING INDEX ${index.source} `))]);
  });

  it('reads a collection\'s head from one read index alone (SQLite: items_read_state_time), in its order: no table read, no sort', async () => {
    const { db, tenant } = await setup();
    const c = compileHead(db, tenant.contract.id, tenant.collection.id, 200);
    if (testPostgresUrl) {
      const plan = await postgresPlan(db, c);
      expect(plan.some((line) => /Index Only Scan Backward using items_read_(state_)?time on items/.test(line)), plan.join(' | ')).toBe(true);
      expect(plan.filter((line) => /Sort|Seq Scan on items/.test(line)), plan.join(' | ')).toEqual([]);
      return;
    }
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
    expect(itemSteps(rows.map((r) => r.detail))).toEqual([expect.stringMatching(/^SEARCH items USING COVERING INDEX items_read_state_time \(collection_id=\? AND state=\?\)$/)]);
  });

  it('reads the pinned items through their own small index, whatever the read\'s filters', async () => {
    const { db, tenant } = await setup();
    const now = Date.now();
    for (const filter of [{}, { state: 'published' as const }, { state: 'published' as const, languages: ['de'], services: ['rss'] }, { location: { longitude: 13.4, latitude: 52.5, radius: 50 } }]) {
      for (const read of ['keys', 'documents'] as const) {
        const c = compilePinned(db, { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 86_400_000, untilMs: now, ...filter }, read);
        if (testPostgresUrl) {
          const plan = await postgresPlan(db, c);
          expect(plan.filter((line) => /Seq Scan on items/.test(line)), plan.join(' | ')).toEqual([]);
        } else {
          const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
          expect(itemSteps(rows.map((r) => r.detail))[0], JSON.stringify(filter)).toMatch(/^SEARCH items USING INDEX items_pinned \(collection_id=\? AND pin_position>\?\)/);
        }
      }
    }
  });

  it.skipIf(testPostgresUrl)('counts from a covering index', async () => {
    const { db, tenant } = await setup();
    const now = Date.now();
    for (const [filter, index] of [[{ state: 'published' as const }, 'items_read_state_time'], [{}, 'items_read_time'], [{ state: 'published' as const, languages: ['ja'] }, 'items_read_state_time']] as [Partial<ItemQuery>, string][]) {
      const c = compileCount(db, { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 86_400_000, untilMs: now, ...filter });
      const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]));
      expect(itemSteps(rows.map((r) => r.detail))).toEqual([expect.stringMatching(new RegExp(`^SEARCH items USING COVERING INDEX ${index} `))]);
    }
  });
});
