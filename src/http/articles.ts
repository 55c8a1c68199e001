/**
 * Articles of related content as the HTTP interface reads and shows them (docs/api.md#related-content):
 * an article's address (`articleUrl`, the `q` of `GET /v1/related/{contract}` and the `url` of
 * `POST /collection/articles`), and an article of the listings (`presentArticle`, `ArticleSummary`).
 */
import { Type } from 'typebox';
import { VALIDATION_CODES, validationError } from '../errors.ts';
import type { ArticleRow } from '../store/tables.ts';

/** Longest article address accepted (characters). */
export const MAX_ARTICLE_URL = 2048;

export const ArticleSummary = Type.Object(
  {
    id: Type.String(),
    url: Type.String({ description: 'Its related content: the GET /v1/related/{contract}?q=… address' }),
    article: Type.String({ description: "The article's address" }),
    title: Type.Union([Type.String(), Type.Null()], { description: "The page's title, null until Sluice read it" }),
    text: Type.Union([Type.String(), Type.Null()], { description: 'Its first words, null until read' }),
    service: Type.Literal('article'),
    date: Type.String({ description: 'When it was first asked about or added (ISO 8601)' }),
    count: Type.Integer({ description: 'Related items in its latest answer' }),
  },
  { additionalProperties: false },
);

/**
 * The article address of `value`: an absolute http(s) URL without credentials, its fragment
 * removed (it never reaches the server). Throws 400 naming `propertyName` otherwise.
 */
export function articleUrl(value: string, propertyName = 'q'): string {
  let url: URL | undefined;
  try {
    url = value.length <= MAX_ARTICLE_URL ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw validationError([{ propertyName, message: `${propertyName} must be the absolute http(s) address of an article, without credentials`, propertyValue: value, code: VALIDATION_CODES.format }]);
  }
  url.hash = '';
  return url.href;
}

/** An article as the listings show it; `url` is its related content's address on `queueUrl`. */
export function presentArticle(row: ArticleRow, contractSlug: string, queueUrl: string) {
  return {
    id: row.id,
    url: `${queueUrl}/v1/related/${encodeURIComponent(contractSlug)}?q=${encodeURIComponent(row.url)}`,
    article: row.url,
    title: row.title,
    text: row.text,
    service: 'article' as const,
    date: new Date(row.createdAt).toISOString(),
    count: row.count,
  };
}
