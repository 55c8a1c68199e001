/**
 * Renders every error response as the error object of docs/api.md#errors, and sets
 * `X-Request-Id` on every response. Fastify's own errors are mapped here: schema failures → 400
 * naming the property, malformed JSON → 400, body too large → 413, unknown route → 404, a known
 * path with another method → 405 with `Allow` (RFC 9110 §15.5.6), a path parameter beyond the
 * router's bound → 414; anything unexpected → 500 with a generic message (the cause is logged,
 * never sent). Errors the HTTP parser meets before there is a request (headers too large → 431,
 * a request not received in time → 408, a malformed request → 400) are written on the socket
 * in the same shape (`clientErrorHandler`).
 *
 * Rendering never throws: when building the error object fails, a fixed 500 error object is
 * written instead (`send`).
 */
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, notFoundError, validationError, VALIDATION_CODES } from '../errors.ts';
import { closeIfBodyUnread } from './limits.ts';
import { allowedMethods } from './methods.ts';
import { toInvalid } from './validate.ts';

/** The error body of last resort, written when rendering an error failed. */
const fallbackBody = (requestId: string) =>
  `{"requestId":${JSON.stringify(requestId)},"errors":[{"name":"InternalError","message":"An unexpected error occurred.","code":5001}]}`;

/**
 * Sends `error` as the error object with its status and headers (and `X-Request-Id`). Never
 * throws: a failure to render sends the fixed 500 error object.
 */
export function send(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  try {
    const body: Record<string, unknown> = { requestId: request.id, errors: error.entries };
    if (error.oauth) Object.assign(body, error.oauth);
    const json = JSON.stringify(body);
    return reply.code(error.status).headers(error.headers).header('x-request-id', request.id).type('application/json; charset=utf-8').send(json);
  } catch (failure) {
    request.log.error({ err: failure }, 'rendering an error failed');
    return reply.code(500).header('x-request-id', request.id).type('application/json; charset=utf-8').send(fallbackBody(String(request.id)));
  }
}

/** An error thrown anywhere (ours or Fastify's) as the ApiError it is answered with; never throws. */
export function toApiError(error: FastifyError, request?: FastifyRequest): ApiError {
  try {
    return error instanceof ApiError ? error : mapFastifyError(error, request);
  } catch {
    return internalError();
  }
}

function mapFastifyError(error: FastifyError, request?: FastifyRequest): ApiError {
  if (error.validation) {
    const part = error.validationContext as 'body' | 'querystring' | 'params' | 'headers' | undefined;
    const data = !request ? undefined : part === 'querystring' ? request.query : part ? request[part] : undefined;
    return validationError(toInvalid(error.validation as never, data));
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return validationError([{ propertyName: 'body', message: 'Request body is too large.', code: VALIDATION_CODES.range }], 413);
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return validationError([{ propertyName: 'Content-Type', message: 'Unsupported content type; send application/json.', code: VALIDATION_CODES.format }], 415);
  }
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return validationError([{ propertyName: 'body', message: 'Malformed JSON body.', reason: error.message, code: VALIDATION_CODES.format }]);
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return validationError([{ propertyName: 'path', message: 'A path parameter is too long.', code: VALIDATION_CODES.range }], 414);
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return validationError([{ propertyName: 'path', message: 'The path is not a valid URL path (bad percent-encoding).', code: VALIDATION_CODES.format }]);
  }
  if (error.statusCode === 404) return notFoundError('Not found.');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return validationError([{ propertyName: 'request', message: error.message }], error.statusCode);
  }
  return internalError();
}

/**
 * Errors of the HTTP parser, met before there is a request to answer (Node's `clientError`):
 * the status and the error object's entry for each.
 */
function clientErrorOf(code: string | undefined): { status: number; error: ApiError } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, error: validationError([{ propertyName: 'headers', message: 'The request line and headers are too large.', code: VALIDATION_CODES.range }], 431) };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, error: validationError([{ propertyName: 'request', message: 'The request was not received in time.', code: VALIDATION_CODES.range }], 408) };
  }
  return { status: 400, error: validationError([{ propertyName: 'request', message: 'Malformed HTTP request.', code: VALIDATION_CODES.format }]) };
}

/**
 * Fastify's `clientErrorHandler`: writes the error object for an error of the HTTP parser on the
 * socket (with a request id of its own, also in `X-Request-Id`), then closes it.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const { status, error: apiError } = clientErrorOf(error.code);
    const requestId = randomBytes(12).toString('hex');
    const body = JSON.stringify({ requestId, errors: apiError.entries });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Fastify's `frameworkErrors`: errors the router meets before a route runs (a path parameter
 * beyond `maxParamLength`, a malformed percent-encoding) answered as the error object, on a
 * connection then closed when the request's body has not all arrived (`closeIfBodyUnread`).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  closeIfBodyUnread(request, reply);
  send(reply, request, toApiError(error, request));
}

/**
 * Makes every error leave `app` as the error object (docs/api.md#errors): `X-Request-Id` on every
 * answer, thrown errors mapped by `toApiError` (a 5xx also logged), and an unknown route answered
 * 404, or 405 with `Allow` when the path exists for other methods.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    return send(reply, request, apiError);
  });
  const allowed = allowedMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const methods = allowed(path);
    if (methods.length) {
      const error = validationError([{ propertyName: 'method', message: `${request.method} is not allowed on ${path}; use ${methods.join(', ')}.`, propertyValue: request.method, code: VALIDATION_CODES.enum }], 405);
      return send(reply.header('allow', methods.join(', ')), request, error);
    }
    return send(reply, request, notFoundError(`No route for ${request.method} ${path}.`));
  });
}
