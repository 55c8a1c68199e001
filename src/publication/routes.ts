/**
 * The publication on {queue_url} (docs/api.md#publication), public like the content API:
 *
 *   GET /v1/publication/{contract}?q=&layout=&offset=   the wall: a complete server-rendered page
 *       &related=<article url>                          a related widget: the article's related items
 *       &preview=true                                   the console's preview: framed only by the
 *                                                       console's origin (API_URL), which may send
 *                                                       unsaved CSS to the page script (postMessage)
 *   GET /v1/publication/{contract}/items?q=&offset=|ids= more cards as an HTML fragment (page script)
 *   GET /v1/publication/{contract}/display?q=           the display page for event screens
 *                                                       (docs/api.md#display-page): header, QR
 *                                                       code, wall/carousel/ticker, display controls
 *   GET /v1/publication/assets/wall.js|wall.css|display.js|display.css  the pages' own scripts and styles
 *   GET /v1/embed.js                                    the embed script for other sites
 *
 * The wall and the display page are sandboxed (csp.ts): an opaque origin, so the contract's JavaScript never acts with
 * the queue's origin or its cookies; what the page reads from the queue origin (the fragment
 * below, the content API and stream) answers CORS `*`.
 *
 * The collection's publication settings (docs/api.md#publication-settings) choose the layout when
 * the request names none, the language of the wall's words and times, the theme, auto-scroll,
 * the fullscreen button and the full page's branding.
 *
 * The wall shows every published item of the collection, newest first (not only the last 24 h
 * the content API reads by default). Unknown or inactive contract → 401, unknown or inactive
 * collection → 404, as on the content API (docs/api.md#queue-and-content-api).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config.ts';
import { notFoundError } from '../errors.ts';
import { errorResponses, textResponse } from '../http/openapi.ts';
import { publicTarget } from '../http/public.ts';
import { articleUrl, MAX_ARTICLE_URL } from '../http/articles.ts';
import { ApiError } from '../errors.ts';
import type { ContentItem } from '../item.ts';
import type { ContractRow } from '../store/tables.ts';
import type { App } from '../http/typed.ts';
import { handlerValidated } from '../http/validate.ts';
import { DISPLAY_LIMITS, type DisplayState } from '../lib/publication-settings.ts';
import { defaultSort } from '../lib/ranking.ts';
import type { Db } from '../store/db.ts';
import { findCollection, findPublicationSettings, publicationOf } from '../store/collections.ts';
import { findPublishedItems } from '../store/items/find.ts';
import { listItems } from '../store/items/read-sql.ts';
import { type ItemDocument, rowToItem } from '../store/items/rows.ts';
import { publicationCsp } from './csp.ts';
import { activeCustomizations } from './customizations.ts';
import { type MediaUrl, presentItem } from './present.ts';
import { qrSvg } from './qr.ts';
import { LAYOUTS, type Layout, renderDisplay, renderItems, renderPage } from './render.ts';
import { themeCss } from '../lib/theme-css.ts';
import { wordsFor } from './words.ts';

/** Cards per page of the wall (the content API's default count). */
export const PAGE_SIZE = 20;
/** Items the display page opens with and keeps at most (the newest; pinned ones besides). */
export const DISPLAY_ITEMS = 40;

const Layout = Type.Unsafe<Layout>({ type: 'string', enum: [...LAYOUTS] });
const Params = Type.Object({ contract: Type.String({ minLength: 1, maxLength: 200 }) });
const PageQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 200 }),
  layout: Type.Optional(Layout),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  preview: Type.Optional(Type.Boolean({ description: "The console's preview (docs/api.md): framed only by the console, which may apply unsaved CSS" })),
  related: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ARTICLE_URL, description: "An article's address: the wall shows the contract's items related to it (GET /v1/related), with collection q's settings, and no live updates (docs/api.md#related-widget)" })),
});
const DisplayQuery = Type.Object({ q: Type.String({ minLength: 1, maxLength: 200 }) });
const ItemsQuery = Type.Object({
  ...PageQuery.properties,
  ids: Type.Optional(Type.String({ maxLength: 10_000 })),
});

const tags = ['publication'];
/** Route schemas (docs/api.md#publication): the request schemas Fastify validates and the responses for OpenAPI. */
const schemas = {
  page: {
    tags,
    summary: 'The wall: a complete server-rendered page of collection q (public)',
    params: Params,
    querystring: PageQuery,
    response: { 200: textResponse('text/html', 'The publication page, with a Content-Security-Policy'), ...errorResponses(400, 401, 404) },
  },
  items: {
    tags,
    summary: 'More cards of the wall as an HTML fragment (the page script)',
    params: Params,
    querystring: ItemsQuery,
    response: { 200: textResponse('text/html', 'Cards; X-Sluice-Count tells how many'), ...errorResponses(400, 401, 404) },
  },
  display: {
    tags,
    summary: 'The display page of collection q for event screens: header, QR code, wall, carousel or ticker, following the display controls (public)',
    params: Params,
    querystring: DisplayQuery,
    response: { 200: textResponse('text/html', 'The display page, with a Content-Security-Policy'), ...errorResponses(400, 401, 404) },
  },
  asset: {
    tags,
    summary: "The pages' own scripts and styles",
    params: handlerValidated(Type.Object({ name: Type.String({ enum: ['wall.js', 'wall.css', 'display.js', 'display.css'] }) })),
    response: { 200: { description: 'wall.js, wall.css, display.js or display.css', content: { 'text/javascript': { schema: Type.String() }, 'text/css': { schema: Type.String() } } }, ...errorResponses(404) },
  },
  embed: {
    tags,
    summary: 'The embed script for other sites (<div data-sluice-contract data-sluice-q [data-sluice-related]>)',
    response: { 200: textResponse('text/javascript', 'The embed script') },
  },
};

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
const ASSETS: Record<string, { body: string; type: string }> = {
  'wall.js': { body: asset('wall.js'), type: 'text/javascript; charset=utf-8' },
  'wall.css': { body: asset('wall.css'), type: 'text/css; charset=utf-8' },
  'display.js': { body: asset('display.js'), type: 'text/javascript; charset=utf-8' },
  'display.css': { body: asset('display.css'), type: 'text/css; charset=utf-8' },
};
const EMBED_JS = asset('embed.js');

/** Related content (queue/related/related.ts, given by app.ts): the JSON text of an article's related items, or its ApiError. */
export interface RelatedSource {
  json(contract: ContractRow, url: string): Promise<string>;
}

/** Registers the module's routes on `app` (see the module's description). */
export function publicationRoutes(app: App, { db, config, related, media }: { db: Db; config: Config; related: RelatedSource; media?: MediaUrl | undefined }): void {
  /** The items related to the article `url` (the `related` of the wall); none when the article cannot be read (the widget then shows its empty notice). */
  async function relatedItems(contract: ContractRow, url: string): Promise<ContentItem[]> {
    try {
      return JSON.parse(await related.json(contract, url)) as ContentItem[];
    } catch (error) {
      if (error instanceof ApiError && error.status !== 400) return [];
      throw error;
    }
  }

  /** A page of the wall: published items, trending first in a ranked collection, else newest first. */
  function page(collection: { id: string; contractId: string; type: string }, offset: number, count = PAGE_SIZE): Promise<ItemDocument[]> {
    const query = { contractId: collection.contractId, collectionId: collection.id, state: 'published' as const, sinceMs: -1, untilMs: Date.now() };
    return listItems(db, query, { count, offset, sort: defaultSort(collection.type), order: 'desc' });
  }

  app.get('/v1/publication/:contract/display', { schema: schemas.display }, async (request, reply) => {
    const { contract, collection } = await publicTarget(db, request.params.contract, request.query.q);
    const row = await findCollection(db, contract.id, collection.id);
    if (!row) throw notFoundError('No such collection.', 'q', request.query.q);
    const settings = publicationOf(row);
    const display = settings.display ?? {};
    const language = settings.language ?? 'en';
    const words = wordsFor(language);
    const now = Date.now();
    const items = (await page(collection, 0, DISPLAY_ITEMS)).map((doc) => rowToItem(doc));
    const nonce = randomBytes(16).toString('base64');
    const qrUrl = display.qrUrl;
    const html = renderDisplay({
      contract: contract.name,
      contractSlug: contract.slug,
      collection: collection.name,
      q: collection.slug,
      nonce,
      base: `/v1/publication/${encodeURIComponent(contract.slug)}`,
      assets: '/v1/publication/assets',
      language,
      themeCss: themeCss(settings.theme),
      header: display.header ?? collection.name,
      logo: settings.fullPage?.logo,
      qr: qrUrl ? { svg: await qrSvg(qrUrl), caption: qrUrl.replace(/^https:\/\//, '').replace(/\/$/, ''), label: words.qrCode.replace('{url}', qrUrl) } : undefined,
      mode: display.mode ?? 'wall',
      dwellSeconds: display.dwellSeconds ?? DISPLAY_LIMITS.dwellSeconds.default,
      perSlide: display.perSlide ?? DISPLAY_LIMITS.perSlide.default,
      shuffle: display.shuffle === true,
      pinnedEvery: display.pinnedEvery,
      state: row.displayState as DisplayState,
      items: items.map((item) => presentItem(item, now, language, media)),
      // The moderation desk's pins, when items carry them (docs/api.md#display-page).
      pinned: items.filter((item) => (item as { pinned?: unknown }).pinned === true).map((item) => item.id),
      pageSize: DISPLAY_ITEMS,
    });
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', publicationCsp(nonce))
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'strict-origin-when-cross-origin')
      .send(html);
  });

  app.get('/v1/publication/:contract', { schema: schemas.page }, async (request, reply) => {
    const { offset = 0, preview = false } = request.query;
    const consoleOrigin = new URL(config.apiUrl).origin;
    const { contract, collection } = await publicTarget(db, request.params.contract, request.query.q);
    const settings = await findPublicationSettings(db, contract.id, collection.id);
    const layout = request.query.layout ?? settings.type ?? 'grid';
    const language = settings.language ?? 'en';
    // A related widget (docs/api.md#related-widget): the article's related items, one page, no paging.
    const article = request.query.related !== undefined ? articleUrl(request.query.related, 'related') : undefined;
    const items = article ? await relatedItems(contract, article) : (await page(collection, offset)).map((row) => rowToItem(row));
    const now = Date.now();
    const nonce = randomBytes(16).toString('base64');
    const base = `/v1/publication/${encodeURIComponent(contract.slug)}`;
    const next = !article && items.length === PAGE_SIZE ? `${base}?${new URLSearchParams({ q: collection.slug, layout, offset: String(offset + PAGE_SIZE) })}` : undefined;
    const html = renderPage({
      contract: contract.name,
      contractSlug: contract.slug,
      collection: collection.name,
      q: collection.slug,
      layout,
      sort: defaultSort(collection.type),
      nonce,
      base,
      assets: '/v1/publication/assets',
      items: items.map((item) => presentItem(item, now, language, media)),
      next,
      related: article,
      pageSize: PAGE_SIZE,
      pollSeconds: Math.max(1, config.contentMaxAge),
      customizations: await activeCustomizations(db, contract.id, collection.id),
      previewOrigin: preview ? consoleOrigin : undefined,
      language,
      themeCss: themeCss(settings.theme),
      autoScroll: settings.autoScroll === true,
      fullscreen: settings.fullscreenLink ? { link: settings.fullscreenLink, text: settings.fullscreenText ?? wordsFor(language).fullscreen } : undefined,
      fullPage: settings.fullPage ?? {},
    });
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', publicationCsp(nonce, preview ? consoleOrigin : '*'))
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'strict-origin-when-cross-origin')
      .send(html);
  });

  app.get('/v1/publication/:contract/items', { schema: schemas.items }, async (request, reply) => {
    const { offset = 0, ids } = request.query;
    const { contract, collection } = await publicTarget(db, request.params.contract, request.query.q);
    const language = (await findPublicationSettings(db, contract.id, collection.id)).language ?? 'en';
    const rows = ids !== undefined ? await findPublishedItems(db, contract.id, collection.id, ids.split(',').filter(Boolean)) : await page(collection, offset);
    const now = Date.now();
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "sandbox; default-src 'none'; frame-ancestors 'self'")
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      // Read by the wall, whose sandboxed page has an opaque origin (csp.ts): public, no credentials.
      .header('access-control-allow-origin', '*')
      .header('access-control-expose-headers', 'x-sluice-count')
      .header('x-sluice-count', String(rows.length))
      .send(renderItems(rows.map((row) => presentItem(rowToItem(row), now, language, media)), language));
  });

  // The router always sets the path parameter `name`; the handler checks its value.
  app.get<{ Params: { name: string } }>('/v1/publication/assets/:name', { schema: schemas.asset }, async (request, reply) => {
    const file = Object.hasOwn(ASSETS, request.params.name) ? ASSETS[request.params.name] : undefined;
    if (!file) throw notFoundError('No such asset.');
    return sendAsset(reply, file.body, file.type);
  });

  app.get('/v1/embed.js', { schema: schemas.embed }, async (_request, reply) => sendAsset(reply, EMBED_JS, 'text/javascript; charset=utf-8'));
}

function sendAsset(reply: FastifyReply, body: string, type: string): FastifyReply {
  return reply
    .type(type)
    .header('cache-control', 'public, max-age=300')
    .header('x-content-type-options', 'nosniff')
    .header('access-control-allow-origin', '*')
    .send(body);
}
