/**
 * Renders every error response as the error object of interface §7 (decisions §2), and sets
 * `X-Request-Id` on every response. Fastify's own errors are mapped here: schema failures → 400
 * naming the property, malformed JSON → 400, body too large → 413, unknown route → 404; anything
 * unexpected → 500 with a generic message (the cause is logged, never sent).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, notFoundError, validationError, VALIDATION_CODES } from '../errors.ts';
import { toInvalid } from './validate.ts';

export function send(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  const body: Record<string, unknown> = { requestId: request.id, errors: error.entries };
  if (error.oauth) Object.assign(body, error.oauth);
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(body);
}

/** An error thrown anywhere (ours or Fastify's) as the ApiError it is answered with. */
export function toApiError(error: FastifyError, request?: FastifyRequest): ApiError {
  return error instanceof ApiError ? error : mapFastifyError(error, request);
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
  if (error.statusCode === 404) return notFoundError('Not found.');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return validationError([{ propertyName: 'request', message: error.message }], error.statusCode);
  }
  return internalError();
}

export function installErrorHandling(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    return send(reply, request, apiError);
  });
  app.setNotFoundHandler((request, reply) => send(reply, request, notFoundError(`No route for ${request.method} ${request.url.split('?')[0]}.`)));
}
