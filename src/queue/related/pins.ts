/**
 * Pinning an item for an article (docs/api.md#related-content): `PATCH /v1/queue/{contract}?q=…&id=…`
 * with `{"article": "<url>"}` puts the item first in that article's related content (in the order
 * pinned, at most `MAX_ARTICLE_PINS`), `{"article": "<url>", "pinned": false}` takes it out. The
 * article is added to the contract's articles when it was not there. The item's own state and
 * collection pin are untouched: `article` goes with `pinned` only, in the single-item form.
 */
import { conflictError, notFoundError, VALIDATION_CODES, validationError } from '../../errors.ts';
import { ensureArticle, MAX_ARTICLE_PINS, setArticlePin } from '../../store/articles.ts';
import type { Db } from '../../store/db.ts';
import { findItem } from '../../store/items/find.ts';
import type { ModerationRequest } from '../params.ts';
import { articleUrl } from '../../http/articles.ts';

/**
 * Applies the body's article pin to the target item of the collection. Returns the item's row and
 * the article's address. Throws 400 naming `ids`, `state`, `spotlight`, `edit` or `position` when
 * the body asks more than the pin, `article` when it is no http(s) URL; 404 for an unknown item;
 * 409 when the article has its most pins.
 */
export async function pinForArticle(db: Db, contractId: string, collectionId: string, target: { bulk: boolean; ids: string[] }, body: ModerationRequest) {
  const others = (['ids', 'state', 'spotlight', 'edit', 'position'] as const).filter((name) => body[name] !== undefined);
  if (others.length) {
    throw validationError(others.map((name) => ({ propertyName: name, message: `${name} does not go with article, which pins one item (id) for an article`, code: VALIDATION_CODES.format })));
  }
  const url = articleUrl(body.article!, 'article');
  const id = target.ids[0]!;
  const row = await findItem(db, contractId, collectionId, id);
  if (!row) throw notFoundError(`Unknown content item ${id}.`, 'id', id);
  const article = await ensureArticle(db, contractId, url);
  const outcome = await setArticlePin(db, article.id, { collectionId, itemId: id }, body.pinned !== false);
  if (outcome === 'full') throw conflictError(`The article has ${MAX_ARTICLE_PINS} pinned items already: unpin one first. Nothing was changed.`, 'article', url);
  return { row, article: url };
}
