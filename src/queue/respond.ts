/**
 * Response bodies of the queue and content API: JSON, or JSONP when `callback` is given
 * (docs/api.md#jsonp: `/**\/<callback>(<json>);` as application/javascript with nosniff). Public
 * reads are cacheable (`Cache-Control: public, max-age=CONTENT_MAX_AGE`, a strong `ETag`, 304
 * on `If-None-Match`), and gzip-compressed once kept by the read path (`withGzip`); token-bearing
 * reads are `no-store`. The callback was validated by the route's schema before it reaches here,
 * so it is never echoed unchecked.
 */
import { hash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptedCoding } from '../http/encoding.ts';

/**
 * A serialized page, ready to send or to cache: the body as UTF-8 bytes (sent as is, with no
 * per-request encoding or length scan) and its response headers, strong entity tag included,
 * computed once when the page is built. A cached page thus costs a map lookup and a write.
 */
export interface RenderedPage {
  body: Buffer;
  etag: string;
  headers: Record<string, string>;
  /** The body gzip-compressed and its own entity tag (RFC 9110 §8.8.3), for a page kept to be sent many times (`withGzip`). */
  gzip?: { body: Buffer; etag: string };
  /** Built from data that changed while it was built (read-path.ts `itemsPage`): sent, never kept (cache.ts). */
  transient?: true;
}

/** Bodies below this size (bytes) are not worth compressing: the gain is less than the framing. */
const GZIP_MIN_BYTES = 1024;

/**
 * The page with its gzip form, made once when the read path keeps the page (queue/cache.ts):
 * sent to readers whose `Accept-Encoding` takes gzip (browsers, fetch, most HTTP clients), a
 * default content page is about a fifth of its size (17 KB → 3.4 KB). A page below
 * GZIP_MIN_BYTES, or one built for a single reader, is sent as it is.
 */
export function withGzip(page: RenderedPage): RenderedPage {
  if (page.gzip || page.body.length < GZIP_MIN_BYTES) return page;
  return { ...page, gzip: { body: gzipSync(page.body), etag: `${page.etag.slice(0, -1)}-gzip"` } };
}

/**
 * Serializes `payload` as JSON, or as JSONP wrapped in `callback`, with the headers of a public
 * read (`Cache-Control: public, max-age=<maxAge>`, `ETag`, nosniff, and CORS
 * `Access-Control-Allow-Origin: *`: public data without credentials, read by any page, among them
 * the sandboxed publication page whose origin is opaque, docs/api.md#caching).
 */
export function render(payload: unknown, callback: string | undefined, maxAge: number): RenderedPage {
  return renderJson(JSON.stringify(payload), callback, maxAge);
}

/** `render` of a payload already serialized as JSON text (`json`). */
export function renderJson(json: string, callback: string | undefined, maxAge: number): RenderedPage {
  const body = Buffer.from(callback ? `/**/${callback}(${json});` : json);
  const etag = `"${hash('sha1', body, 'base64url')}"`;
  return {
    body,
    etag,
    headers: {
      'content-type': callback ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'cache-control': `public, max-age=${maxAge}`,
      'access-control-allow-origin': '*',
      // Whether the body is sent gzip-compressed depends on the request's Accept-Encoding (sendPublic).
      vary: 'accept-encoding',
      etag,
    },
  };
}

/**
 * Sends a public, cacheable page, gzip-compressed when the page has that form and the request's
 * `Accept-Encoding` takes it, with that form's entity tag; 304 when `If-None-Match` names the
 * entity tag of the form selected (RFC 9110 §13.1.2).
 */
export function sendPublic(request: FastifyRequest, reply: FastifyReply, page: RenderedPage): FastifyReply {
  reply.headers(page.headers);
  const gzip = page.gzip && acceptedCoding(request.headers['accept-encoding'], ['gzip']) ? page.gzip : undefined;
  const etag = gzip?.etag ?? page.etag;
  if (gzip) reply.header('etag', etag);
  const match = request.headers['if-none-match'];
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
  return gzip ? reply.header('content-encoding', 'gzip').send(gzip.body) : reply.send(page.body);
}

/** How `respond` sends: public and cacheable for `maxAge` seconds, or `no-store`; JSONP with `callback`. */
export type RespondOptions = ({ public: true; maxAge: number } | { public: false }) & { callback: string | undefined };

/**
 * Sends `payload` as JSON, or as JSONP wrapped in `callback` (validated by the route's schema):
 * public and cacheable for `maxAge` seconds, or `no-store`.
 */
export function respond(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  options: RespondOptions,
): FastifyReply {
  return respondJson(request, reply, JSON.stringify(payload), options);
}

/** `respond` with a payload already serialized as JSON text (`json`). */
export function respondJson(
  request: FastifyRequest,
  reply: FastifyReply,
  json: string,
  { callback, ...cache }: RespondOptions,
): FastifyReply {
  if (cache.public) return sendPublic(request, reply, renderJson(json, callback, cache.maxAge));
  reply.type(callback ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8');
  return reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-store').send(callback ? `/**/${callback}(${json});` : json);
}
