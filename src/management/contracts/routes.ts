/**
 * Contracts of the caller on {api_url} (decisions §4):
 *
 *   GET /v1/customer/contracts/me   the contracts the token's consumer was granted → 200 array
 *
 * Each entry: `_id`, `name`, `slug`, `active` and the common record fields of interface §2.1.
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import { handlerValidated } from '../../http/validate.ts';
import type { App } from '../../http/typed.ts';
import { grantedContracts } from '../../store/contracts.ts';
import type { Db } from '../../store/db.ts';
import type { ContractRow } from '../../store/tables.ts';
import { common, recordFields, TokenQuery } from '../docs.ts';

const { contractId: _contractId, ...fields } = common;
const Contract = Type.Object({ ...fields, name: Type.String(), slug: Type.String() });

/** `GET /v1/customer/contracts/me` for the OpenAPI description; the handler reads only the token. */
const schema = {
  tags: ['contracts'],
  summary: 'The contracts the consumer of the token was granted (decisions §4)',
  security: TOKEN_SECURITY,
  querystring: handlerValidated(TokenQuery),
  response: { 200: Type.Array(Contract), ...errorResponses(401) },
};

export function presentContract(row: ContractRow) {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    ...recordFields(row),
  };
}

export function contractRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.get('/v1/customer/contracts/me', { schema }, async (request) => {
    const { consumer } = await authenticate(db, request);
    return (await grantedContracts(db, consumer.id)).map(presentContract);
  });
}
