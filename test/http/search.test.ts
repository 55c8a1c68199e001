/**
 * Full-text search (issue 36 point 1, docs/api.md#search): the content read's `search` and the
 * queue read's `text`, through the items' index on both databases — words, phrases, exclusion,
 * prefixes, diacritics, languages, relevance order, an index kept in step through edits, splits
 * and retention, and hostile queries that must give results or a 400 naming the parameter, never
 * a 500 nor an injected operator.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { createCollection } from '../../src/store/collections.ts';
import { expireItems } from '../../src/store/retention.ts';
import { storeItems } from '../../src/store/items/write.ts';
import { build, buildItem, buildTenant, expectError, seedItems, testPostgresUrl } from '../helper.ts';
import { ownsEntries } from '../../src/services/table.ts';

const MIN = 60_000;
const at = (ms: number) => new Date(Date.now() - ms).toISOString();

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, [
    buildItem({ id: 'rss_harbour', title: 'Harbour festival opens', text: '<p>Boats, music and <a href="https://x.example/lighthouse">a lighthouse</a> at the harbour festival</p>', date: at(1 * MIN) }),
    buildItem({ id: 'rss_council', title: 'Council vote', text: 'The council voted on the harbour budget; the festival was not discussed', date: at(2 * MIN) }),
    buildItem({ id: 'rss_cafe', title: 'Le café du port', text: 'Un café au bord de l’eau', language: 'fr', date: at(3 * MIN) }),
    buildItem({ id: 'rss_cafe2', title: 'Cafe culture', text: 'A CAFE on every corner', language: 'en', date: at(4 * MIN) }),
    buildItem({ id: 'rss_market', title: 'Market day', text: 'Fresh fish at the harbour market, festival of flavours', date: at(5 * MIN) }),
  ]);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_waiting', title: 'Harbour lights', text: 'Unmoderated harbour news', date: at(6 * MIN) })], 'unpublished');
  // Another contract's items with the same words: never found by this one.
  const other = await buildTenant(ctx.db, 'Other News');
  await seedItems(ctx.db, other, [buildItem({ id: 'rss_other', title: 'Harbour festival café', text: 'harbour festival cafe lighthouse', date: at(1 * MIN) })]);
  const slug = tenant.contract.slug;
  const q = `q=${tenant.collection.slug}`;
  const content = (query: string) => ctx.app.inject({ method: 'GET', url: `/v1/content/${slug}?${q}&${query}` });
  const queue = (query: string) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${slug}?${q}&access_token=${tenant.token}&${query}` });
  const search = async (words: string, extra = '') => {
    const res = await content(`search=${encodeURIComponent(words)}${extra}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string }[]).map((item) => item.id);
  };
  return { ...ctx, tenant, other, content, queue, search };
}

const sorted = (ids: string[]) => [...ids].sort();

describe('GET /v1/content/{contract}?search=', () => {
  it('finds items having every word, in title or text, not words of HTML tags', async () => {
    const { search } = await setup();
    expect(sorted(await search('harbour festival'))).toEqual(['rss_council', 'rss_harbour', 'rss_market']);
    expect(sorted(await search('harbour fish'))).toEqual(['rss_market']);
    expect(sorted(await search('HARBOUR'))).toEqual(['rss_council', 'rss_harbour', 'rss_market']);
    expect(await search('lighthouse')).toEqual(['rss_harbour']);
    // Tag names and attributes are not words of the item.
    expect(await search('href')).toEqual([]);
    expect(await search('example')).toEqual([]);
  });

  it('finds phrases, excludes -words and -"phrases", completes prefix*', async () => {
    const { search } = await setup();
    expect(await search('"harbour festival"')).toEqual(['rss_harbour']);
    expect(await search('"festival harbour"')).toEqual([]);
    expect(sorted(await search('harbour -council'))).toEqual(['rss_harbour', 'rss_market']);
    expect(sorted(await search('harbour -"harbour market"'))).toEqual(['rss_council', 'rss_harbour']);
    expect(sorted(await search('harb*'))).toEqual(['rss_council', 'rss_harbour', 'rss_market']);
    expect(sorted(await search('"fresh fi"*'))).toEqual(['rss_market']);
  });

  it('ignores diacritics both ways: café finds cafe and cafe finds café', async () => {
    const { search } = await setup();
    expect(sorted(await search('café'))).toEqual(['rss_cafe', 'rss_cafe2']);
    expect(sorted(await search('cafe'))).toEqual(['rss_cafe', 'rss_cafe2']);
    expect(sorted(await search('CAFÉ'))).toEqual(['rss_cafe', 'rss_cafe2']);
  });

  it('reads each item in its language; PostgreSQL also finds other forms of a word (stemming)', async () => {
    const { search } = await setup();
    expect(await search('voted')).toEqual(['rss_council']);
    // English stems on PostgreSQL ("votes" and "voted" are both "vote"); SQLite matches words as written.
    expect(await search('votes')).toEqual(testPostgresUrl ? ['rss_council'] : []);
    expect(await search('bord eau')).toEqual(['rss_cafe']);
  });

  it('orders by relevance unless sort is given; order=asc reverses it', async () => {
    const { search } = await setup();
    // In both title and text, twice in the text: ahead of the items with the words once in the text.
    const relevant = await search('harbour festival');
    expect(relevant[0]).toBe('rss_harbour');
    expect(await search('harbour festival', '&order=asc')).toEqual([...relevant].reverse());
    // sort=time keeps the date order (rss_harbour is the newest), asc the oldest first.
    expect(await search('harbour', '&sort=time&order=asc')).toEqual(['rss_market', 'rss_council', 'rss_harbour']);
    expect(await search('harbour', '&sort=time&count=1&offset=1')).toEqual(['rss_council']);
  });

  it('shows only published items of this collection; the queue read (text) shows both states', async () => {
    const { search, queue } = await setup();
    expect(await search('lights')).toEqual([]);
    const res = await queue('text=harbour%20lights');
    expect((res.json() as { id: string }[]).map((item) => item.id)).toEqual(['rss_waiting']);
    // The other contract's item has every word: never found here.
    expect(await search('harbour festival café lighthouse')).toEqual([]);
    expect(await search('lighthouse')).toEqual(['rss_harbour']);
  });

  it('answers every hostile query with results or 400 naming search, never 500', async () => {
    const { content } = await setup();
    const hostile = [
      '"', '*', '-', '""', '"*', '-"', '- -', '***', 'NEAR(', 'NEAR(harbour festival)', 'harbour NEAR(', 'harbour OR festival', 'OR', 'AND', 'NOT', 'harbour AND',
      'harbour NOT', '"harbour', 'harbour"', 'harbour "festival', '(harbour', 'harbour)', '^harbour', 'title:harbour', 'harbour:*', "'harbour'", "harbour' | 'x",
      '!harbour', 'harbour & festival', 'harbour <-> festival', '\\', '%', "%' OR 1=1 --", 'h*', 'ha*', '-harbour', '-harbour -festival', '{title}: x',
      'a'.repeat(200), 'x '.repeat(100), '"a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g"', '\u0301', 'é*', '\u0000harbour', '🙂', '中文',
    ];
    for (const words of hostile) {
      const res = await content(`search=${encodeURIComponent(words)}`);
      expect([200, 400], `${JSON.stringify(words)} → ${res.statusCode} ${res.body}`).toContain(res.statusCode);
      if (res.statusCode === 400) expect((res.json() as { errors: { propertyName: string }[] }).errors.map((e) => e.propertyName)).toEqual(['search']);
      else expect(Array.isArray(res.json())).toBe(true);
    }
    // Operators typed by the user are words: OR does not widen the search.
    expect((await content('search=harbour%20OR%20cafe')).json()).toEqual([]);
    expectError(await content('search=-harbour'), 400, { name: 'ValidationError', code: 1005, propertyName: 'search' });
    expectError(await content(`search=${'a'.repeat(10_000)}`), 400, { name: 'ValidationError', code: 1003, propertyName: 'search' });
    // Empty is absent: the ordinary read.
    expect((await content('search=')).json()).toHaveLength(5);
  });

  it('keeps the index in step: an item edited at the source is found by its new words only; an expired one is not found', async () => {
    const { db, tenant, search } = await setup();
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    const edited = buildItem({ id: 'rss_market', title: 'Market day moved', text: 'Fresh oysters at the quay', date: at(5 * MIN) });
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, Date.now(), new Set(['rss_market']), [edited]));
    expect(await search('oysters quay')).toEqual(['rss_market']);
    expect(await search('flavours')).toEqual([]);
    expect(await search('"market day"')).toEqual(['rss_market']);
    // Retention keeps the newest item only: the others leave the index with the table.
    await db.updateTable('collections').set({ retentionMaxItems: 1 }).where('id', '=', tenant.collection.id).execute();
    await expireItems(db, ownsEntries);
    expect(await search('café')).toEqual([]);
    expect(await search('harbour')).toEqual(['rss_harbour']);
  });

  it('indexes a duplicate split out of its card as an item of its own', async () => {
    const { db, app, tenant, search } = await setup();
    await db.updateTable('collections').set({ dedupe: 'url' }).where('id', '=', tenant.collection.id).execute();
    const url = 'https://news.example/story';
    await seedItems(db, tenant, [buildItem({ id: 'rss_card', title: 'Ferry strike', text: 'Ferries stop', url, date: at(7 * MIN) })]);
    await seedItems(db, tenant, [buildItem({ id: 'mastodon_dup', service: 'mastodon', type: 'status', title: undefined, text: 'Walrus spotted near the ferry', url, date: at(8 * MIN) })]);
    // Merged into the card: a duplicate's words are not the card's.
    expect(await search('walrus')).toEqual([]);
    const res = await app.inject({ method: 'POST', url: `/v1/queue/${tenant.contract.slug}/split?q=${tenant.collection.slug}&id=rss_card&access_token=${tenant.token}`, payload: { duplicateId: 'mastodon_dup' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await search('walrus')).toEqual(['mastodon_dup']);
    expect(sorted(await search('ferry'))).toEqual(['mastodon_dup', 'rss_card']);
  });
});

/**
 * SQLite: FTS5's own check of an external-content index against its content
 * (https://www.sqlite.org/fts5.html#the_integrity_check_command; rank 1 compares it with the
 * content view row by row). PostgreSQL: the vector is a stored generated column, computed by the
 * database on every write of its row: every item has one.
 */
async function expectIndexInStep(db: Db) {
  if (testPostgresUrl) {
    const { rows } = await sql<{ n: string }>`select count(*) as n from items where search is null`.execute(db);
    expect(Number(rows[0]!.n)).toBe(0);
    return;
  }
  await sql`insert into items_search (items_search, rank) values ('integrity-check', 1)`.execute(db);
}

/**
 * How many items of any collection the index holds a (folded) word for: what was removed must be
 * gone from the index itself, not only from the reads. SQLite: FTS5's own vocabulary of the index
 * (https://www.sqlite.org/fts5.html#the_fts5vocab_virtual_table_module), the word in any
 * collection's scope.
 */
async function indexed(db: Db, word: string): Promise<number> {
  if (testPostgresUrl) {
    const { rows } = await sql<{ n: string }>`select count(*) as n from items where search @@ to_tsquery('simple', ${word})`.execute(db);
    return Number(rows[0]!.n);
  }
  await sql`create virtual table if not exists temp.search_vocabulary using fts5vocab(main, 'items_search', 'row')`.execute(db);
  const { rows } = await sql<{ n: number | null }>`select sum(doc) as n from temp.search_vocabulary where term like ${`c%${word}`}`.execute(db);
  return Number(rows[0]!.n ?? 0);
}

describe('the index in step with every write (issue 36 Show)', () => {
  it("a moderator's edit changes what readers see, not what the search finds: the source's words (docs/api.md#edit-an-item)", async () => {
    const { db, app, tenant, search, queue } = await setup();
    const moderate = (id: string, body: object) =>
      app.inject({ method: 'PATCH', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&id=${id}&access_token=${tenant.token}`, payload: body });
    const res = await moderate('rss_market', { edit: { title: 'Walrus parade', text: '<p>A walrus on the quay</p>' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ title: 'Walrus parade', edited: true });
    await expectIndexInStep(db);
    // The edit's words find nothing, on the content read and on the queue's text.
    expect(await search('walrus')).toEqual([]);
    expect((await queue('text=walrus')).json()).toEqual([]);
    // The source's words still find it, and the page shows the edit.
    const found = await app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&search=flavours` });
    expect((found.json() as { id: string; title: string }[]).map((item) => [item.id, item.title])).toEqual([['rss_market', 'Walrus parade']]);
    // Restored: still the source's words, still in step.
    expect((await moderate('rss_market', { edit: null })).statusCode).toBe(200);
    expect(await search('flavours')).toEqual(['rss_market']);
    expect(await search('walrus')).toEqual([]);
    await expectIndexInStep(db);
  });

  it("a deleted collection's items leave the index; items stored after them are found by their own words only", async () => {
    const { db, app, tenant, search } = await setup();
    const call = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
      app.inject({ method, url: `${url}?access_token=${tenant.token}`, ...(payload ? { payload } : {}) });
    const spare = (await call('POST', '/collection/collections', { name: 'Spare', contractId: tenant.contract.id, dedupe: 'off' })).json() as { _id: string; slug: string };
    // The newest rows: on SQLite the items stored next take their rowids (the index's keys) again.
    await seedItems(db, { contract: tenant.contract, collection: { id: spare._id } }, [
      buildItem({ id: 'rss_walrus', title: 'Walrus colony', text: 'Walrus seen by the harbour festival', date: at(1 * MIN) }),
      buildItem({ id: 'rss_narwhal', title: 'Narwhal', text: 'A narwhal far north', date: at(2 * MIN) }),
    ]);
    expect(await indexed(db, 'walrus')).toBe(1);
    expect((await call('DELETE', `/collection/collections/${spare._id}`)).statusCode).toBe(204);
    expect(await indexed(db, 'walrus')).toBe(0);
    expect(await indexed(db, 'narwhal')).toBe(0);
    await expectIndexInStep(db);
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_seal', title: 'Seal pup', text: 'A seal pup on the slipway', date: at(1 * MIN) }),
      buildItem({ id: 'rss_gull', title: 'Gulls', text: 'Gulls over the slipway', date: at(2 * MIN) }),
    ]);
    await expectIndexInStep(db);
    expect(await search('walrus')).toEqual([]);
    expect(await search('narwhal')).toEqual([]);
    expect(sorted(await search('slipway'))).toEqual(['rss_gull', 'rss_seal']);
    expect(sorted(await search('harbour festival'))).toEqual(['rss_council', 'rss_harbour', 'rss_market']);
  });

  it('retention and splits leave the index in step', async () => {
    const { db, app, tenant, search } = await setup();
    await db.updateTable('collections').set({ dedupe: 'url' }).where('id', '=', tenant.collection.id).execute();
    const url = 'https://news.example/story';
    await seedItems(db, tenant, [buildItem({ id: 'rss_card', title: 'Ferry strike', text: 'Ferries stop', url, date: at(0.5 * MIN) })]);
    await seedItems(db, tenant, [buildItem({ id: 'mastodon_dup', service: 'mastodon', type: 'status', title: undefined, text: 'Walrus spotted near the ferry', url, date: at(0.4 * MIN) })]);
    const res = await app.inject({ method: 'POST', url: `/v1/queue/${tenant.contract.slug}/split?q=${tenant.collection.slug}&id=rss_card&access_token=${tenant.token}`, payload: { duplicateId: 'mastodon_dup' } });
    expect(res.statusCode, res.body).toBe(200);
    await expectIndexInStep(db);
    expect(await search('walrus')).toEqual(['mastodon_dup']);
    await db.updateTable('collections').set({ retentionMaxItems: 2 }).where('id', '=', tenant.collection.id).execute();
    await expireItems(db, ownsEntries);
    await expectIndexInStep(db);
    expect(await indexed(db, 'council')).toBe(0);
    expect(await indexed(db, 'flavours')).toBe(0);
    expect(sorted(await search('ferry'))).toEqual(['mastodon_dup', 'rss_card']);
  });
});

describe('languages and ranking (issue 36 Show)', () => {
  it('PostgreSQL reads each item with its language: French and German stems, English stop words; SQLite matches words as written', async () => {
    const { db, tenant, search } = await setup();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_haus', title: 'Die Häuser am Hafen', text: 'Neue Häuser werden gebaut', language: 'de', date: at(8 * MIN) }),
      buildItem({ id: 'rss_chevaux', title: 'Les chevaux du port', text: 'Des chevaux sur la plage', language: 'fr', date: at(9 * MIN) }),
    ]);
    // Diacritics folded on both: häuser, hauser, HÄUSER.
    expect(await search('hauser')).toEqual(['rss_haus']);
    expect(await search('HÄUSER hafen')).toEqual(['rss_haus']);
    // Stems of the item's language (PostgreSQL): plural → singular in French and German.
    expect(await search('cheval')).toEqual(testPostgresUrl ? ['rss_chevaux'] : []);
    expect(await search('haus')).toEqual(testPostgresUrl ? ['rss_haus'] : []);
    expect(sorted(await search('ports'))).toEqual(testPostgresUrl ? ['rss_cafe', 'rss_chevaux'] : []);
    // An English stop word asks nothing of an English item on PostgreSQL; SQLite indexes it as a word.
    expect(sorted(await search('of harbour'))).toEqual(testPostgresUrl ? ['rss_council', 'rss_harbour', 'rss_market'] : ['rss_market']);
    // The language filter narrows a search to its items.
    expect(sorted(await search('port', '&language=fr'))).toEqual(['rss_cafe', 'rss_chevaux']);
    expect(await search('port', '&language=de')).toEqual([]);
  });

  it('ranks title words above text words, more occurrences higher, ties newest first; order=asc is the exact reverse', async () => {
    const { db, tenant, search } = await setup();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_text_old', title: 'Beach report', text: 'A walrus was seen', language: 'en', date: at(20 * MIN) }),
      buildItem({ id: 'rss_title', title: 'Walrus colony', text: 'Seen on the beach', language: 'en', date: at(21 * MIN) }),
      buildItem({ id: 'rss_text_new', title: 'Beach report', text: 'A walrus was seen', language: 'en', date: at(19 * MIN) }),
      buildItem({ id: 'rss_many', title: 'Walrus', text: 'Walrus after walrus near the walrus rocks', language: 'en', date: at(22 * MIN) }),
    ]);
    const ranked = ['rss_many', 'rss_title', 'rss_text_new', 'rss_text_old'];
    expect(await search('walrus')).toEqual(ranked);
    expect(await search('walrus', '&order=asc')).toEqual([...ranked].reverse());
    // Paging keeps the order: no item twice, none left out.
    const pages = [...(await search('walrus', '&count=2')), ...(await search('walrus', '&count=2&offset=2'))];
    expect(pages).toEqual(ranked);
    expect(await search('walrus', '&sort=time')).toEqual(['rss_text_new', 'rss_text_old', 'rss_title', 'rss_many']);
  });
});

describe('relevance within the collection (SQLite BM25, docs/api.md#search)', () => {
  it('weighs a word by how rare it is in the collection searched, not in other collections', async () => {
    const { db, tenant, search } = await setup();
    await seedItems(db, tenant, [
      buildItem({ id: 'rss_walruses', title: 'Shore', text: 'walrus walrus walrus seal', language: 'en', date: at(30 * MIN) }),
      buildItem({ id: 'rss_seals', title: 'Shore', text: 'walrus seal seal seal', language: 'en', date: at(30 * MIN) }),
      ...[1, 2, 3].map((n) => buildItem({ id: `rss_seal_${n}`, title: 'Shore', text: `seal number ${n}`, language: 'en', date: at(31 * MIN) })),
    ]);
    // Another collection of the same contract full of walruses: there the word is common, here it is rare.
    const zoo = await createCollection(db, tenant.contract.id, { name: 'Zoo', dedupe: 'off' }, 'test');
    await seedItems(db, { contract: tenant.contract, collection: zoo }, Array.from({ length: 12 }, (_, n) => buildItem({ id: `rss_zoo_${n}`, title: 'Zoo', text: 'walrus', language: 'en', date: at(MIN) })));
    const ranked = await search('walrus seal');
    // Here walrus (2 of 5 items) is rarer than seal (5 of 5): three walruses weigh more than three seals.
    // (Counted over every collection, walrus would be the common word and the order the other way.)
    if (testPostgresUrl) expect(sorted(ranked)).toEqual(['rss_seals', 'rss_walruses']);
    else expect(ranked).toEqual(['rss_walruses', 'rss_seals']);
  });
});
