/**
 * Schema pieces every management route declares for its OpenAPI description
 * (docs/api.md#management-api): the common record fields (docs/api.md#common-record-fields), ids,
 * and the route schema shapes (create, list, get, update, delete, bulk delete), with the error
 * responses and security of http/openapi.ts.
 *
 * A body the handler validates itself (after authentication, naming `[i].property` for bulk
 * bodies) is declared with `handlerValidated` (`http/validate.ts`): the schema documents the
 * body, and the validator compiler in `app.ts` skips it.
 */
import { Type, type TSchema } from 'typebox';
import { errorResponses, TOKEN_SECURITY } from '../http/openapi.ts';
import { handlerValidated } from '../http/validate.ts';

/** A record id's pattern: 24 lower-case hex characters (lib/ids.ts). */
export const ID_PATTERN = '^[0-9a-f]{24}$';
export const Id = Type.String({ pattern: ID_PATTERN, description: '24 lower-case hex characters' });
export const IdParams = Type.Object({ id: Id });
export const ContractQuery = Type.Object({ contract_id: Id, access_token: Type.Optional(Type.String()) });
export const TokenQuery = Type.Object({ access_token: Type.Optional(Type.String()) });
export const BulkDelete = Type.Object({ ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }) });

/** The common record fields (docs/api.md#common-record-fields). */
export const common = {
  _id: Id,
  contractId: Id,
  active: Type.Boolean(),
  created: Type.String({ format: 'date-time' }),
  createdBy: Type.String(),
  lastModified: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.String(),
};

/** The common record fields (`common`, docs/api.md) of a stored row, besides `_id` and `contractId`. */
export function recordFields(row: { active: number; created: string; createdBy: string; lastModified: string; lastModifiedBy: string }) {
  return { active: row.active === 1, created: row.created, createdBy: row.createdBy, lastModified: row.lastModified, lastModifiedBy: row.lastModifiedBy };
}

/** Route schemas of the six record operations, for `tag` (OpenAPI tag) and the record schema. */
export function recordRoutes(tag: string, record: TSchema, create: TSchema, update: TSchema) {
  const tags = [tag];
  const security = TOKEN_SECURITY;
  return {
    // 404: a resource the body names (a set's list, a chain's sets, a collection's filter) is unknown.
    create: { tags, security, querystring: TokenQuery, body: handlerValidated(create), response: { 201: record, ...errorResponses(400, 401, 403, 404, 409, 413) } },
    list: { tags, security, querystring: ContractQuery, response: { 200: Type.Array(record), ...errorResponses(400, 401, 403) } },
    get: { tags, security, params: IdParams, querystring: TokenQuery, response: { 200: record, ...errorResponses(400, 401, 403, 404) } },
    update: { tags, security, params: IdParams, querystring: TokenQuery, body: handlerValidated(update), response: { 200: record, ...errorResponses(400, 401, 403, 404, 409, 413) } },
    remove: { tags, security, params: IdParams, querystring: TokenQuery, response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404, 409) } },
    removeMany: { tags, security, querystring: TokenQuery, body: handlerValidated(BulkDelete), response: { 204: Type.Null({ description: 'all deleted' }), ...errorResponses(400, 401, 403, 404, 409, 413) } },
  };
}
