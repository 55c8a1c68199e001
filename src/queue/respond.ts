/**
 * Response bodies of the queue and content API: JSON, or JSONP when `callback` is given
 * (decisions §7: `/**\/<callback>(<json>);` as application/javascript with nosniff). Public
 * reads are cacheable (`Cache-Control: public, max-age=CONTENT_MAX_AGE`, a strong `ETag`, 304
 * on `If-None-Match`); token-bearing reads are `no-store`. The callback was validated by the
 * route's schema before it reaches here, so it is never echoed unchecked.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A serialized body with its type and strong entity tag, ready to send or to cache. */
export interface RenderedPage {
  body: string;
  type: string;
  etag: string;
}

/** Serializes `payload` as JSON, or as JSONP wrapped in `callback`. */
export function render(payload: unknown, callback: string | undefined): RenderedPage {
  const json = JSON.stringify(payload);
  const body = callback ? `/**/${callback}(${json});` : json;
  return {
    body,
    type: callback ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8',
    etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
  };
}

/** Sends a public, cacheable page: 304 when `If-None-Match` names its ETag. */
export function sendPublic(request: FastifyRequest, reply: FastifyReply, page: RenderedPage, maxAge: number): FastifyReply {
  reply.type(page.type).header('x-content-type-options', 'nosniff');
  reply.header('cache-control', `public, max-age=${maxAge}`).header('etag', page.etag);
  const match = request.headers['if-none-match'];
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === page.etag)) return reply.code(304).send();
  return reply.send(page.body);
}

export function respond(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  cache: { public: true; maxAge: number } | { public: false },
): FastifyReply {
  const callback = (request.query as { callback?: string }).callback;
  if (cache.public) return sendPublic(request, reply, render(payload, callback), cache.maxAge);
  const json = JSON.stringify(payload);
  reply.type(callback ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8');
  return reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-store').send(callback ? `/**/${callback}(${json});` : json);
}
