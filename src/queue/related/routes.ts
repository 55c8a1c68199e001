/**
 * Related content and articles (docs/api.md#related-content), public reads on {queue_url}:
 *
 *   GET /v1/related/{contract}?q=<article url>   the contract's published items related to the
 *                                                article, pinned ones first, at most 20 (related.ts)
 *   GET /v1/articles/{contract}[?count=n]        the articles asked about or added, newest first
 *
 * Both are cacheable (`Cache-Control: public, max-age=CONTENT_MAX_AGE`, ETag) and take a JSONP
 * `callback`, as the content read. An unknown or inactive contract → 401; `q` that is not an
 * http(s) URL → 400 naming `q`.
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ArticleSummary, articleUrl, MAX_ARTICLE_URL, presentArticle } from '../../http/articles.ts';
import { errorResponses, jsonOrJsonp, noBody, ref } from '../../http/openapi.ts';
import { activeContract } from '../../http/public.ts';
import type { App } from '../../http/typed.ts';
import { listArticles } from '../../store/articles.ts';
import type { Db } from '../../store/db.ts';
import { CALLBACK, ContractParams } from '../params.ts';
import { render, renderJson, sendPublic } from '../respond.ts';
import type { Related } from './related.ts';

/** Articles listed by default and at most. */
export const DEFAULT_ARTICLES = 20;
export const MAX_ARTICLES = 500;

const callback = Type.Optional(Type.String({ pattern: CALLBACK, maxLength: 128 }));
const RelatedQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: MAX_ARTICLE_URL, description: "The article's address: an absolute http(s) URL" }),
  callback,
});
const ArticlesQuery = Type.Object({ count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ARTICLES })), callback });

const tags = ['queue and content'];
const notModified = noBody('Not Modified: If-None-Match names the current ETag');

/** Registers the module's routes on `app` (see the module's description). */
export function relatedRoutes(app: App, { db, config, related }: { db: Db; config: Config; related: Related }): void {
  app.get(
    '/v1/related/:contract',
    {
      schema: {
        tags,
        summary: "The contract's published items related to an article (public, cacheable, at most 20; pinned ones first)",
        params: ContractParams,
        querystring: RelatedQuery,
        response: { 200: jsonOrJsonp(Type.Array(ref('ContentItem')), 'Related content items'), 304: notModified, ...errorResponses(400, 401, 404, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const url = articleUrl(request.query.q);
      const contract = await activeContract(db, request.params.contract);
      const json = await related.json(contract, url);
      return sendPublic(request, reply, renderJson(json, request.query.callback, config.contentMaxAge));
    },
  );

  app.get(
    '/v1/articles/:contract',
    {
      schema: {
        tags,
        summary: 'The articles asked about or added, newest first, each with the address of its related content (public, cacheable)',
        params: ContractParams,
        querystring: ArticlesQuery,
        response: { 200: jsonOrJsonp(Type.Array(ArticleSummary), 'Articles'), 304: notModified, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const contract = await activeContract(db, request.params.contract);
      const rows = await listArticles(db, contract.id, request.query.count ?? DEFAULT_ARTICLES);
      const payload = rows.map((row) => presentArticle(row, contract.slug, config.queueUrl));
      return sendPublic(request, reply, render(payload, request.query.callback, config.contentMaxAge));
    },
  );
}
