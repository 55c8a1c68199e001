/**
 * The application as the route modules see it: Fastify with the TypeBox type provider
 * (@fastify/type-provider-typebox), so that a handler's `request.params`, `request.query` and
 * `request.body` have the static types of the route's schemas, checked against the validation
 * that runs (http/validate.ts). A schema marked `handlerValidated` types its part as `unknown`:
 * the handler checks it. The provider is used for types only; validation stays ours.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** The request of a route whose schema is `S`, for handlers written apart from their route. */
export type TypedRequest<S extends FastifySchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, S, TypeBoxTypeProvider>;

/** The reply of a route whose schema is `S`. */
export type TypedReply<S extends FastifySchema> = FastifyReply<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, unknown, S, TypeBoxTypeProvider>;
