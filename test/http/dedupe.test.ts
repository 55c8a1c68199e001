/**
 * De-duplication through HTTP against a real database (docs/api.md#duplicates): the collection
 * setting, one card for one story with its duplicates and kudos, the split, title edits, `off`,
 * concurrent stores, and other contracts kept out.
 */
import { describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { collectionVersion } from '../../src/store/items/changes.ts';
import { storeItems } from '../../src/store/items/write.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { ownsEntries } from '../../src/services/table.ts';

const HOUR = 3600_000;
const TITLE = 'Scientists find a new species of deep sea octopus off the coast of Chile';

/** The same story four ways: a feed entry with tracking parameters, an X post linking it, a Mastodon post quoting its title, and an unrelated item. */
function story(now: number) {
  const at = (ms: number) => new Date(now - ms).toISOString();
  const article = buildItem({
    id: 'rss_octopus',
    title: TITLE,
    text: '<p>The animal was filmed at a depth of 4000 metres by a remotely operated vehicle.</p>',
    url: 'https://www.example-news.com/science/octopus/?utm_source=rss&utm_medium=feed',
    date: at(3 * HOUR),
    kudos: { score: 0 },
  });
  const tweet = buildItem({
    id: 'twitter_1460323737035677698',
    service: 'twitter',
    type: 'status',
    title: undefined,
    text: 'Wow, look at this <a href="https://example-news.com/science/octopus?fbclid=IwAR0">example-news.com/science/octopus</a>',
    url: 'https://x.com/sciencefan/status/1460323737035677698',
    date: at(2 * HOUR),
    author: { name: 'Science Fan', username: 'sciencefan', userid: '42', url: 'https://x.com/sciencefan' },
    kudos: { score: 7, twitter_likes: 5, twitter_retweets: 1 },
  });
  const toot = buildItem({
    id: 'mastodon_mastodon.social:109318821117356215',
    service: 'mastodon',
    type: 'status',
    title: undefined,
    text: `<p>${TITLE.toUpperCase()}! <a href="https://mastodon.social/tags/science" class="mention hashtag">#<span>science</span></a></p>`,
    url: 'https://mastodon.social/@marine/109318821117356215',
    date: at(1 * HOUR),
    author: { name: 'Marine', username: 'marine', userid: '7', url: 'https://mastodon.social/@marine' },
    kudos: { score: 4 },
  });
  const other = buildItem({ id: 'rss_budget', title: 'Local council approves the new budget for road repairs', url: 'https://example-news.com/local/budget', date: at(HOUR) });
  return { article, tweet, toot, other };
}

async function setup(dedupe = 'url+text') {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await ctx.db.updateTable('collections').set({ dedupe }).where('id', '=', tenant.collection.id).execute();
  const auth = (token: string) => `access_token=${encodeURIComponent(token)}`;
  const queue = (token = tenant.token) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&${auth(token)}` });
  const split = (id: string, body: unknown, token = tenant.token, contract = tenant.contract.slug) =>
    ctx.app.inject({ method: 'POST', url: `/v1/queue/${contract}/split?q=${tenant.collection.slug}&id=${encodeURIComponent(id)}&${auth(token)}`, payload: body as object });
  return { ...ctx, tenant, queue, split, now: Date.now() };
}

const items = (res: { json: () => unknown }) => res.json() as ContentItem[];

describe('collections: dedupe setting', () => {
  it('is url+text for a new collection, can be changed, and refuses other values naming dedupe', async () => {
    const { app, tenant } = await setup();
    const call = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload ? { payload: payload as object } : {}) });
    const created = await call('POST', '/collection/collections', { name: 'Wall', contractId: tenant.contract.id });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().dedupe).toBe('url+text');
    const id = created.json()._id as string;
    expect((await call('PATCH', `/collection/collections/${id}`, { dedupe: 'url' })).json().dedupe).toBe('url');
    expect((await call('GET', `/collection/collections/${id}`)).json().dedupe).toBe('url');
    expect((await call('POST', '/collection/collections', { name: 'Off wall', contractId: tenant.contract.id, dedupe: 'off' })).json().dedupe).toBe('off');
    expectError(await call('PATCH', `/collection/collections/${id}`, { dedupe: 'fuzzy' }), 400, { name: 'ValidationError', code: 1004, propertyName: 'dedupe' });
  });
});

describe('one story, one card', () => {
  it('merges the X post (by its link) and the Mastodon post (by its text) into the feed entry', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, tweet, toot, other } = story(now);
    expect(await seedItems(db, tenant, [article])).toBe(1);
    expect(await seedItems(db, tenant, [tweet, toot, other])).toBe(3);
    const res = await queue();
    expect(res.statusCode, res.body).toBe(200);
    expect(items(res).map((i) => i.id)).toEqual(['rss_budget', 'rss_octopus']);
    const card = items(res).find((i) => i.id === 'rss_octopus')!;
    expect(card.duplicates).toEqual([
      { id: tweet.id, service: 'twitter', url: tweet.url, author: tweet.author },
      { id: toot.id, service: 'mastodon', url: toot.url, author: toot.author },
    ]);
    expect(card.kudos).toEqual({ score: 11, duplicates: 2 });
    expect(items(res).find((i) => i.id === 'rss_budget')!.duplicates).toBeUndefined();
    // Fetched again, a duplicate is known: neither stored nor merged twice.
    expect(await seedItems(db, tenant, [tweet, toot])).toBe(0);
    expect(items(await queue()).find((i) => i.id === 'rss_octopus')!.kudos.score).toBe(11);
  });

  it('keeps duplicates apart with dedupe off, and merges by URL only with dedupe url', async () => {
    const off = await setup('off');
    const a = story(off.now);
    expect(await seedItems(off.db, off.tenant, [a.article, a.tweet, a.toot])).toBe(3);
    expect(items(await off.queue()).map((i) => i.id).sort()).toEqual([a.article.id, a.toot.id, a.tweet.id].sort());

    const url = await setup('url');
    const b = story(url.now);
    await seedItems(url.db, url.tenant, [b.article, b.tweet, b.toot]);
    const queued = items(await url.queue());
    expect(queued.map((i) => i.id).sort()).toEqual([b.article.id, b.toot.id].sort());
    expect(queued.find((i) => i.id === b.article.id)!.duplicates!.map((d) => d.id)).toEqual([b.tweet.id]);
  });

  it('does not merge near text outside the 7-day window', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, toot } = story(now);
    await seedItems(db, tenant, [{ ...article, date: new Date(now - 9 * 24 * HOUR).toISOString() }, toot]);
    expect(items(await queue()).map((i) => i.id)).toEqual([toot.id]); // the article is outside the default 24 h read window
    const row = await db.selectFrom('items').select('id').where('collectionId', '=', tenant.collection.id).execute();
    expect(row.map((r) => r.id).sort()).toEqual([article.id, toot.id].sort());
  });

  it('produces one card when two stores of the same story run at the same moment', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, tweet } = story(now);
    const added = await Promise.all([seedItems(db, tenant, [article]), seedItems(db, tenant, [tweet])]);
    expect(added).toEqual([1, 1]);
    const queued = items(await queue());
    expect(queued).toHaveLength(1);
    expect(queued[0]!.duplicates).toHaveLength(1);
  });

  it('updates the card on a title edit (same id, new title) and bumps the collection version', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article } = story(now);
    await seedItems(db, tenant, [article]);
    const before = await collectionVersion(db, tenant.contract.id, tenant.collection.id);
    const edited = { ...article, title: `${TITLE} (updated)` };
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    expect(await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, now, new Set([article.id]), [edited]))).toBe(0);
    const queued = items(await queue());
    expect(queued.map((i) => [i.id, i.title])).toEqual([[article.id, `${TITLE} (updated)`]]);
    expect(await collectionVersion(db, tenant.contract.id, tenant.collection.id)).toBeGreaterThan(before!);
    // Unchanged: no new version.
    const same = await collectionVersion(db, tenant.contract.id, tenant.collection.id);
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, now, new Set([article.id]), [edited]));
    expect(await collectionVersion(db, tenant.contract.id, tenant.collection.id)).toBe(same);
  });
  it('indexes a title edit: a later post quoting the new title (and one quoting the old) meets the card', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, toot } = story(now);
    await seedItems(db, tenant, [article]);
    const rewritten = 'Marine biologists film a ghostly purple octopus near the Chilean seamounts';
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, now, new Set([article.id]), [{ ...article, title: rewritten }]));
    const quote = (id: string, title: string) => ({ ...toot, id, url: `https://mastodon.social/@marine/${id.slice(-3)}`, text: `<p>${title}</p>` });
    expect(await seedItems(db, tenant, [quote('mastodon_mastodon.social:101', rewritten), quote('mastodon_mastodon.social:102', TITLE)])).toBe(2);
    const queued = items(await queue());
    expect(queued.map((i) => i.id)).toEqual([article.id]);
    expect(queued[0]!.duplicates!.map((d) => d.id)).toEqual(['mastodon_mastodon.social:101', 'mastodon_mastodon.social:102']);
  });

  it('merges articles into untitled posts stored first: by the title alone, or by title and text together', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, toot } = story(now);
    const headline = 'Deep sea explorers film a rare purple octopus near Chilean seamounts';
    const lede = 'The animal was seen at a depth of 4000 metres by a remotely operated vehicle during an expedition';
    // Two posts first: one quotes a headline, the other another headline and its lede.
    const quoted = { ...toot, text: `<p>${TITLE}</p>` };
    const long = { ...toot, id: 'mastodon_mastodon.social:2', url: 'https://mastodon.social/@marine/2', text: `<p>${headline}. ${lede}</p>` };
    expect(await seedItems(db, tenant, [quoted, long])).toBe(2);
    // The article meets the first post by its title; the second article, whose headline alone
    // meets nothing, meets the second post by its title and text together.
    const second = { ...article, id: 'rss_octopus_2', url: 'https://other-news.example.org/octopus', title: headline, text: `<p>${lede}</p>` };
    expect(await seedItems(db, tenant, [article, second])).toBe(2);
    const queued = items(await queue());
    expect(queued.map((i) => i.id).sort()).toEqual([quoted.id, long.id].sort());
    expect(queued.find((i) => i.id === quoted.id)!.duplicates!.map((d) => d.id)).toEqual([article.id]);
    expect(queued.find((i) => i.id === long.id)!.duplicates!.map((d) => d.id)).toEqual([second.id]);
  });

  it('merges an article into an untitled post of the same batch by title and text, in a collection with no untitled card before', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, toot } = story(now);
    const headline = 'Deep sea explorers film a rare purple octopus near Chilean seamounts';
    const lede = 'The animal was seen at a depth of 4000 metres by a remotely operated vehicle during an expedition';
    // Only titled cards so far: no card is indexed by whole text.
    expect(await seedItems(db, tenant, [article])).toBe(1);
    const long = { ...toot, id: 'mastodon_mastodon.social:2', url: 'https://mastodon.social/@marine/2', text: `<p>${headline}. ${lede}</p>` };
    const second = { ...article, id: 'rss_octopus_2', url: 'https://other-news.example.org/octopus', title: headline, text: `<p>${lede}</p>` };
    expect(await seedItems(db, tenant, [long, second])).toBe(2);
    const queued = items(await queue());
    expect(queued.map((i) => i.id).sort()).toEqual([article.id, long.id].sort());
    expect(queued.find((i) => i.id === long.id)!.duplicates!.map((d) => d.id)).toEqual([second.id]);
  });

  it('skips keys of a card that is gone: a new item with its URL or text becomes a card of its own', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, toot } = story(now);
    expect(await seedItems(db, tenant, [article])).toBe(1);
    // The card is gone but its keys stayed (keys of an older canonical form, a fingerprint of an earlier version).
    await db.deleteFrom('items').where('collectionId', '=', tenant.collection.id).where('id', '=', article.id).execute();
    expect(await db.selectFrom('itemUrls').select('itemId').where('collectionId', '=', tenant.collection.id).execute()).toEqual([{ itemId: article.id }]);
    const again = { ...article, id: 'rss_octopus_again' };
    expect(await seedItems(db, tenant, [again, toot])).toBe(2);
    const queued = items(await queue());
    expect(queued.map((i) => i.id).sort()).toEqual([again.id].sort());
    expect(queued[0]!.duplicates!.map((d) => d.id)).toEqual([toot.id]);
    // The URL now belongs to the new card (as does the merged post's own).
    const owners = await db.selectFrom('itemUrls').select('itemId').where('collectionId', '=', tenant.collection.id).execute();
    expect(owners.map((row) => row.itemId)).toEqual([again.id, again.id]);
  });

  it('keeps an unrelated later post apart from an edited card', async () => {
    const { db, tenant, queue, now } = await setup();
    const { article, other } = story(now);
    await seedItems(db, tenant, [article]);
    const target = { collectionId: tenant.collection.id, contractId: tenant.contract.id, inputId: '0'.repeat(24), state: 'published' as const };
    await db.transaction().execute((trx) => storeItems(trx, target, [], ownsEntries, now, new Set([article.id]), [{ ...article, title: `${TITLE} (updated)` }]));
    await seedItems(db, tenant, [other]);
    expect(items(await queue()).map((i) => i.id).sort()).toEqual([article.id, other.id].sort());
  });
});

describe('POST /v1/queue/{contract}/split', () => {
  it('splits a duplicate into a card of its own, taking back its kudos', async () => {
    const { db, tenant, queue, split, now } = await setup();
    const { article, tweet, toot } = story(now);
    await seedItems(db, tenant, [article, tweet, toot]);
    const res = await split(article.id, { duplicateId: tweet.id });
    expect(res.statusCode, res.body).toBe(200);
    const [card, own] = items(res);
    expect(card!.id).toBe(article.id);
    expect(card!.duplicates!.map((d) => d.id)).toEqual([toot.id]);
    expect(card!.kudos).toEqual({ score: 4, duplicates: 1 });
    expect(own).toEqual({ ...tweet, language: 'en', state: 'published', children: [], pinned: false, edited: false });
    expect(items(await queue()).map((i) => i.id).sort()).toEqual([article.id, tweet.id].sort());
    // The last duplicate split: no duplicates left, no count.
    const last = items(await split(article.id, { duplicateId: toot.id }))[0]!;
    expect(last.duplicates).toBeUndefined();
    expect(last.kudos).toEqual({ score: 0 });
    // Split once: it is no duplicate any more.
    expectError(await split(article.id, { duplicateId: tweet.id }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'duplicateId' });
  });

  it('refuses an unknown card, a missing duplicateId, and another contract\'s token', async () => {
    const { db, tenant, split, now } = await setup();
    const { article, tweet } = story(now);
    await seedItems(db, tenant, [article, tweet]);
    expectError(await split('rss_nope', { duplicateId: tweet.id }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await split(article.id, {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'duplicateId' });
    const intruder = await buildTenant(db, 'Intruder');
    const foreign = await split(article.id, { duplicateId: tweet.id }, intruder.token);
    expect(foreign.statusCode).toBe(403);
    // With its own contract, the intruder reaches only its own (empty) collection: nothing of ours.
    expect((await split(article.id, { duplicateId: tweet.id }, intruder.token, intruder.contract.slug)).statusCode).toBe(404);
    const card = await db.selectFrom('items').select('body').where('id', '=', article.id).executeTakeFirstOrThrow();
    expect(String(typeof card.body === 'string' ? card.body : JSON.stringify(card.body))).toContain(tweet.id);
  });
});
