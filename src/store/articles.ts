/**
 * Articles and their pinned items (migration 2026-12-20-articles; docs/api.md#related-content):
 * the articles a contract was asked about or given, newest first, and the items a moderator
 * pinned for one. An article is found by the address as asked (`url`, unique per contract).
 */
import { newId } from '../lib/ids.ts';
import type { Db } from './db.ts';
import type { ArticleRow } from './tables.ts';

/** Most articles one listing returns. */
export const MAX_ARTICLES_LISTED = 500;
/** Most items pinned for one article (the related answer holds at most 20 items). */
export const MAX_ARTICLE_PINS = 20;

/** The contract's article at `url`, if any. */
export async function findArticle(db: Db, contractId: string, url: string): Promise<ArticleRow | undefined> {
  return db.selectFrom('articles').selectAll().where('contractId', '=', contractId).where('url', '=', url).executeTakeFirst();
}

/** The contract's article `id`, or undefined (none, or another contract's). */
export async function findArticleById(db: Db, contractId: string, id: string): Promise<ArticleRow | undefined> {
  return db.selectFrom('articles').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/** The contract's article at `url`, added now when absent (concurrent adds of one address make one row). */
export async function ensureArticle(db: Db, contractId: string, url: string, now = Date.now()): Promise<ArticleRow> {
  await db
    .insertInto('articles')
    .values({ id: newId(now), contractId, url, title: null, text: null, createdAt: now, computedAt: null })
    .onConflict((oc) => oc.columns(['contractId', 'url']).doNothing())
    .execute();
  return (await findArticle(db, contractId, url))!;
}

/** Records what the latest related answer read of the contract's article: its title, first words and how many items it had. */
export async function recordArticleRead(db: Db, contractId: string, id: string, read: { title: string | null; text: string | null; count: number }, now = Date.now()): Promise<void> {
  await db.updateTable('articles').set({ title: read.title, text: read.text, count: read.count, computedAt: now }).where('contractId', '=', contractId).where('id', '=', id).execute();
}

/** The contract's articles, newest first (ties by id), at most `count`. */
export async function listArticles(db: Db, contractId: string, count: number): Promise<ArticleRow[]> {
  return db
    .selectFrom('articles')
    .selectAll()
    .where('contractId', '=', contractId)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(Math.min(count, MAX_ARTICLES_LISTED))
    .execute();
}

/** Removes the contract's article and its pins; false when there was none (or it is another contract's). */
export async function removeArticle(db: Db, contractId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('articles').where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) return false;
    await trx.deleteFrom('articlePins').where('articleId', '=', id).execute();
    return Number(result.numDeletedRows) === 1;
  });
}

/** An item pinned for an article. */
export interface ArticlePin {
  collectionId: string;
  itemId: string;
}

/** The items pinned for the article, in the order pinned. */
export async function articlePins(db: Db, articleId: string): Promise<ArticlePin[]> {
  return db
    .selectFrom('articlePins')
    .select(['collectionId', 'itemId'])
    .where('articleId', '=', articleId)
    .orderBy('pinnedAt', 'asc')
    .orderBy('itemId', 'asc')
    .limit(MAX_ARTICLE_PINS)
    .execute();
}

/**
 * Pins (`pinned` true) or unpins the item for the article. Returns `full` when the article has
 * `MAX_ARTICLE_PINS` pins already and this one is new; pinning twice keeps the first pin's place.
 */
export async function setArticlePin(db: Db, articleId: string, pin: ArticlePin, pinned: boolean, now = Date.now()): Promise<'ok' | 'full'> {
  if (!pinned) {
    await db.deleteFrom('articlePins').where('articleId', '=', articleId).where('collectionId', '=', pin.collectionId).where('itemId', '=', pin.itemId).execute();
    return 'ok';
  }
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('articlePins').select('itemId').where('articleId', '=', articleId).where('collectionId', '=', pin.collectionId).where('itemId', '=', pin.itemId).executeTakeFirst();
    if (existing) return 'ok';
    const { n } = await trx.selectFrom('articlePins').select((eb) => eb.fn.countAll<number>().as('n')).where('articleId', '=', articleId).executeTakeFirstOrThrow();
    if (Number(n) >= MAX_ARTICLE_PINS) return 'full';
    await trx.insertInto('articlePins').values({ articleId, collectionId: pin.collectionId, itemId: pin.itemId, pinnedAt: now }).execute();
    return 'ok';
  });
}
