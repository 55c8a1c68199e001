/**
 * Response bodies of the queue and content API: JSON, or JSONP when `callback` is given
 * (decisions §7: `/**\/<callback>(<json>);` as application/javascript with nosniff). Public
 * reads are cacheable (`Cache-Control: public, max-age=CONTENT_MAX_AGE`, a strong `ETag`, 304
 * on `If-None-Match`); token-bearing reads are `no-store`.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export function respond(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  cache: { public: true; maxAge: number } | { public: false },
): FastifyReply {
  const json = JSON.stringify(payload);
  const callback = (request.query as { callback?: string }).callback;
  const body = callback ? `/**/${callback}(${json});` : json;
  reply.type(callback ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8');
  reply.header('x-content-type-options', 'nosniff');
  if (!cache.public) return reply.header('cache-control', 'no-store').send(body);
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  reply.header('cache-control', `public, max-age=${cache.maxAge}`).header('etag', etag);
  const match = request.headers['if-none-match'];
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
  return reply.send(body);
}
