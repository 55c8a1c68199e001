/**
 * Bounds on what a request may hold, checked at the edge before any route sees it
 * (docs/api.md#limits): a JSON body nests at most `MAX_DEPTH` levels, holds arrays of at most
 * `MAX_ARRAY` elements (a bulk body, an array at the top, at most `MAX_BULK`) and strings of at
 * most `MAX_STRING` characters. Anything beyond answers 400 ValidationError (code 1003) naming
 * the offending path, so no route, validator or error renderer ever walks a structure deep or
 * large enough to exhaust the stack or the event loop. No text of a request — path and query
 * parameters, body strings and keys, JSON or form — may hold U+0000 (400, code 1005): it means
 * nothing in any field of the API, and PostgreSQL's text types cannot store it.
 *
 * The depth is measured on the text, before `JSON.parse` builds anything; the sizes and the
 * characters on the parsed values, by an iterative walk (`installRequestBounds`). Parsing itself is Fastify's own (secure-json-parse, with
 * `__proto__` and `constructor.prototype` keys refused).
 *
 * A body must also arrive in time (`installBodyTimeout`): Node's `requestTimeout` stops waiting
 * for headers, but not for a body the request listener already reads.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Invalid, VALIDATION_CODES, validationError } from '../errors.ts';

/** Nesting levels of objects and arrays in a JSON body (the deepest body the API takes, a dry run's item with children, needs six). */
export const MAX_DEPTH = 32;
/** Elements of any array in a body (a filter list holds at most 10 000 entries). */
export const MAX_ARRAY = 10_000;
/** Elements of a bulk body (an array at the top: `POST /collection/inputs`). */
export const MAX_BULK = 1_000;
/** Characters of any string in a body, keys included (a customization's data is at most 256 KiB). */
export const MAX_STRING = 256 * 1024;

/**
 * The nesting depth of JSON `text` as its brackets say (brackets inside strings do not count),
 * stopping as soon as it passes `limit`: linear, no allocation.
 */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** `base` extended by a key or index as `toInvalid` writes paths: `rules[2].value`, `[3].service`. */
function pathOf(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base ? `${base}.${key}` : key;
}

const NUL = '\u0000';

/**
 * The first array or string of `value` beyond the bounds (arrays `MAX_ARRAY`, the top-level one
 * `MAX_BULK`; strings and keys `MAX_STRING`), or string or key holding U+0000, or undefined;
 * `top` names the value itself (`body`). Iterative: the depth was bounded before parsing, the
 * walk does not recurse anyway.
 */
export function oversized(value: unknown, top = 'body'): Invalid | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length) {
    const { value: current, path } = stack.pop()!;
    const name = path || top;
    if (typeof current === 'string') {
      if (current.length > MAX_STRING) {
        return { propertyName: name, message: `${name} is longer than ${MAX_STRING} characters`, code: VALIDATION_CODES.range };
      }
      if (current.includes(NUL)) return { propertyName: name, message: `${name} holds the character U+0000, which no text of the API may hold`, code: VALIDATION_CODES.format };
    } else if (Array.isArray(current)) {
      const max = path === '' ? MAX_BULK : MAX_ARRAY;
      if (current.length > max) {
        return { propertyName: name, message: `${name} has more than ${max} elements`, reason: `${current.length} elements`, code: VALIDATION_CODES.range };
      }
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: pathOf(path, i) });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current)) {
        if (key.length > MAX_STRING) {
          return { propertyName: name, message: `${name} has a key longer than ${MAX_STRING} characters`, code: VALIDATION_CODES.range };
        }
        if (key.includes(NUL)) return { propertyName: name, message: `${name} has a key holding the character U+0000`, code: VALIDATION_CODES.format };
        stack.push({ value: inner, path: pathOf(path, key) });
      }
    }
  }
  return undefined;
}

/**
 * Replaces Fastify's JSON body parser with the same parser behind the depth bound (a body nested
 * deeper than `MAX_DEPTH` is refused with 400 before it is parsed), and checks every request's
 * path parameters, query and parsed body (JSON or form) with `oversized` before validation.
 */
export function installRequestBounds(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts: [string, unknown][] = [['path', request.params], ['query', request.query], ['body', request.body]];
    for (const [top, value] of parts) {
      // Parameters are named by themselves (`q`, `contract`); the body by its path under `body`.
      const invalid = oversized(value, top);
      if (invalid) throw validationError([invalid]);
    }
  });
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonDepth(text, MAX_DEPTH) > MAX_DEPTH) {
      return done(validationError([{ propertyName: 'body', message: `body is nested deeper than ${MAX_DEPTH} levels`, code: VALIDATION_CODES.range }]), undefined);
    }
    parse(request, text, done);
  });
}

/** Whether the request announces a body (RFC 9112 §6.3: a Transfer-Encoding, or a Content-Length above 0). */
function hasBody(headers: FastifyRequest['headers']): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/**
 * Makes `reply` close its connection (`Connection: close`, RFC 9112 §9.6) when `request` announced
 * a body that has not all arrived: the rest is then neither read as a next request nor left
 * holding the connection open until Node's request timeout. For every answer (the `onSend` hook of
 * `installBodyTimeout`) and the router's errors, which no hook sees (`frameworkErrors`).
 */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  // `complete`: Node's parser has the whole message; `readableEnded`: the body was read to its end
  // (an injected request, light-my-request, has no `complete`).
  const arrived = request.raw.complete || request.raw.readableEnded;
  if (hasBody(request.headers) && !arrived && !reply.sent) reply.header('connection', 'close');
}

/**
 * Answers 408 with the error object (and `Connection: close`) a request whose body has not
 * arrived `ms` milliseconds after its headers: the body reaches the parser through a stream that
 * fails with the 408 at the deadline (Fastify's `preParsing` hook may replace the body stream).
 * The connection is not cut before the answer is written.
 *
 * The deadline ends with the request: when its body has arrived, failed or been cut, and when its
 * answer has been sent or abandoned (the reply's `close`), whether or not anything read the body —
 * Fastify answers 413 by the announced `Content-Length`, 415 for an unknown media type, and the
 * routes of GET or HEAD, without reading it. Neither stream ever emits an `'error'` event without
 * a listener: one would end the process (Node's `EventEmitter`). An answer sent before the body
 * has all arrived closes the connection (`closeIfBodyUnread`).
 */
export function installBodyTimeout(app: FastifyInstance, ms: number): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    if (!hasBody(request.headers)) return payload;
    const body = new PassThrough();
    // Errors reach the parser by its own listener when it reads; none may go unhandled when it does not.
    body.on('error', () => {});
    const timer = setTimeout(() => {
      payload.unpipe(body);
      payload.pause();
      if (!reply.sent) reply.header('connection', 'close');
      body.destroy(validationError([{ propertyName: 'request', message: `The request body did not arrive within ${ms} ms.`, code: VALIDATION_CODES.range }], 408));
    }, ms);
    timer.unref();
    const stop = () => clearTimeout(timer);
    payload.on('end', stop);
    payload.on('error', (error) => {
      stop();
      body.destroy(error);
    });
    payload.on('close', stop);
    reply.raw.once('close', stop);
    return payload.pipe(body);
  });
  app.addHook('onSend', async (request, reply) => {
    closeIfBodyUnread(request, reply);
  });
}
