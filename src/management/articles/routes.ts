/**
 * Articles of related content on {api_url} (docs/api.md#related-content):
 *
 *   GET    /collection/articles?contract_id=   the contract's articles, newest first (viewer)
 *   POST   /collection/articles                {contractId, url}: add an article ahead of its first
 *                                              visit → 201 the article (200 when it was there) (editor)
 *   DELETE /collection/articles/{id}           remove an article and its pins → 204 (editor)
 */
import { type Static, Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ArticleSummary, articleUrl, MAX_ARTICLE_URL, presentArticle } from '../../http/articles.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import { ensureArticle, findArticle, findArticleById, listArticles, MAX_ARTICLES_LISTED, removeArticle } from '../../store/articles.ts';
import { findContract } from '../../store/contracts.ts';
import type { Db } from '../../store/db.ts';
import { ContractQuery, Id, IdParams, TokenQuery } from '../schemas.ts';
import { type Kind, owned } from '../ownership.ts';
import { ownerOf } from '../../store/records.ts';
import type { ArticleRow } from '../../store/tables.ts';

const ArticleCreate = Type.Object(
  {
    contractId: Id,
    url: Type.String({ minLength: 1, maxLength: MAX_ARTICLE_URL, description: "The article's address: an absolute http(s) URL" }),
  },
  { additionalProperties: false },
);

const ARTICLE: Kind<ArticleRow> = { label: 'article', owner: (db, id) => ownerOf(db, 'articles', id), find: findArticleById };
const tags = ['articles'];
const security = TOKEN_SECURITY;

/** Registers the module's routes on `app` (see the module's description). */
export function articleRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const present = async (row: ArticleRow) => presentArticle(row, (await findContract(db, row.contractId))!.slug, config.queueUrl);

  app.get(
    '/collection/articles',
    { schema: { tags, security, summary: `The contract's articles of related content, newest first (at most ${MAX_ARTICLES_LISTED})`, querystring: ContractQuery, response: { 200: Type.Array(ArticleSummary), ...errorResponses(400, 401, 403) } } },
    async (request) => {
      const principal = await authenticate(db, request);
      const contractId = request.query.contract_id;
      await requireContractAccess(db, principal, contractId, 'contract_id');
      const contract = (await findContract(db, contractId))!;
      return (await listArticles(db, contractId, MAX_ARTICLES_LISTED)).map((row) => presentArticle(row, contract.slug, config.queueUrl));
    },
  );

  app.post(
    '/collection/articles',
    {
      schema: {
        tags,
        security,
        summary: 'Add an article ahead of its first visit (it is listed by GET /v1/articles at once)',
        querystring: TokenQuery,
        body: handlerValidated(ArticleCreate),
        response: { 200: ArticleSummary, 201: ArticleSummary, ...errorResponses(400, 401, 403, 413) },
      },
    },
    async (request, reply) => {
      const principal = await authenticate(db, request);
      const body = check(ArticleCreate, request.body) as Static<typeof ArticleCreate>;
      await requireContractAccess(db, principal, body.contractId);
      const url = articleUrl(body.url, 'url');
      const existing = await findArticle(db, body.contractId, url);
      if (existing) return reply.code(200).send(await present(existing));
      const row = await ensureArticle(db, body.contractId, url);
      return reply.code(201).send(await present(row));
    },
  );

  app.delete(
    '/collection/articles/:id',
    {
      schema: { tags, security, summary: 'Remove an article and the items pinned for it', params: IdParams, querystring: TokenQuery, response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const principal = await authenticate(db, request);
      const row = await owned(db, ARTICLE, request.params.id, principal);
      await removeArticle(db, row.contractId, row.id);
      return reply.code(204).send(null);
    },
  );
}
