/**
 * Erasure on request and blocked authors on {api_url} (docs/api.md#erasure, issue 34 point 3):
 *
 *   POST   /collection/erasures                      {contractId, service, author: {userid | username | name}}
 *                                                    → 201 {erasureId, removed, blockedAuthorId} (admin)
 *   GET    /collection/blocked-authors?contract_id=  the contract's blocked authors, newest first (viewer)
 *   DELETE /collection/blocked-authors/{id}          lift a block: new items of the author are collected again → 204 (admin)
 *
 * Admins only for the two changes: an erasure cannot be undone, and lifting a block undoes the
 * protection an erasure request asked for. The work is `store/erasures.ts`.
 */
import { type Static, Type } from 'typebox';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import { validationError, VALIDATION_CODES } from '../../errors.ts';
import { NAME_ONLY_SERVICES, ownsEntries, SERVICE_NAMES } from '../../services/table.ts';
import type { Db } from '../../store/db.ts';
import { AUTHOR_FIELDS, type AuthorField, eraseAuthor, findBlockedAuthor, listBlockedAuthors, unblockAuthor } from '../../store/erasures.ts';
import type { BlockedAuthorRow } from '../../store/tables.ts';
import { ContractQuery, Id, IdParams, TokenQuery } from '../schemas.ts';
import { type Kind, owned } from '../ownership.ts';
import { ownerOf } from '../../store/records.ts';
import { actorOf } from '../resource.ts';

const AuthorValue = (what: string) => Type.String({ minLength: 1, maxLength: 300, description: what });

const ErasureCreate = Type.Object(
  {
    contractId: Id,
    service: Type.String({ enum: [...SERVICE_NAMES], description: 'The service the author publishes on' }),
    author: Type.Object(
      {
        userid: Type.Optional(AuthorValue("The author's id at the service (the content item's `author.userid`)")),
        username: Type.Optional(AuthorValue("The author's handle (the content item's `author.username`)")),
        name: Type.Optional(AuthorValue(`The author's display name (\`author.name\`): only for services that give no author id (${NAME_ONLY_SERVICES.join(', ')})`)),
      },
      { additionalProperties: false, description: 'Exactly one of userid, username, name' },
    ),
  },
  { additionalProperties: false },
);

const ErasureResult = Type.Object({
  erasureId: Type.String({ description: "The erasure's audit entry (GET /collection/audit?resource=author)" }),
  removed: Type.Integer({ description: 'Items removed: cards and duplicates merged into cards' }),
  blockedAuthorId: Type.String({ description: 'The blocked author now kept from collection' }),
});

const BlockedAuthor = Type.Object({
  id: Type.String(),
  contractId: Type.String(),
  service: Type.String(),
  field: Type.String({ enum: [...AUTHOR_FIELDS], description: 'Which author field names them' }),
  value: Type.String(),
  erasureId: Type.Union([Type.String(), Type.Null()], { description: 'The audit entry of the erasure that blocked them' }),
  created: Type.String({ format: 'date-time' }),
});

const presentBlocked = (row: BlockedAuthorRow) => ({
  id: row.id,
  contractId: row.contractId,
  service: row.service,
  field: row.field,
  value: row.value,
  erasureId: row.erasureId,
  created: new Date(Number(row.createdAt)).toISOString(),
});

const BLOCKED: Kind<BlockedAuthorRow> = { label: 'blocked author', owner: (db, id) => ownerOf(db, 'blockedAuthors', id), find: findBlockedAuthor };
const tags = ['erasure'];
const security = TOKEN_SECURITY;

/** The one author field of a checked body, or a 400 naming `author` (none or several) or `author.name` (a service with ids). */
function authorKey(service: string, author: Static<typeof ErasureCreate>['author']): { field: AuthorField; value: string } {
  const given = AUTHOR_FIELDS.filter((field) => author[field] !== undefined);
  if (given.length !== 1) {
    throw validationError([{ propertyName: 'author', message: 'author must name exactly one of userid, username, name', propertyValue: author, code: VALIDATION_CODES.required }]);
  }
  const field = given[0]!;
  if (field === 'name' && !NAME_ONLY_SERVICES.includes(service)) {
    throw validationError([{ propertyName: 'author.name', message: `${service} gives author ids: name the author by userid or username`, propertyValue: author.name }]);
  }
  return { field, value: author[field]! };
}

/** Registers the module's routes on `app` (see the module's description). */
export function erasureRoutes(app: App, { db }: { db: Db }): void {
  app.post(
    '/collection/erasures',
    {
      schema: {
        tags,
        security,
        summary: "Erase an author's items from the contract and block the author (irreversible)",
        querystring: TokenQuery,
        body: handlerValidated(ErasureCreate),
        response: { 201: ErasureResult, ...errorResponses(400, 401, 403, 413) },
      },
    },
    async (request, reply) => {
      const principal = await authenticate(db, request);
      const body = check(ErasureCreate, request.body) as Static<typeof ErasureCreate>;
      await requireContractAccess(db, principal, body.contractId);
      const key = authorKey(body.service, body.author);
      const erasure = await eraseAuthor(db, body.contractId, { service: body.service, ...key }, actorOf(principal), ownsEntries);
      return reply.code(201).send(erasure);
    },
  );

  app.get(
    '/collection/blocked-authors',
    { schema: { tags, security, summary: "The contract's blocked authors, newest first", querystring: ContractQuery, response: { 200: Type.Array(BlockedAuthor), ...errorResponses(400, 401, 403) } } },
    async (request) => {
      const principal = await authenticate(db, request);
      await requireContractAccess(db, principal, request.query.contract_id, 'contract_id');
      return (await listBlockedAuthors(db, request.query.contract_id)).map(presentBlocked);
    },
  );

  app.delete(
    '/collection/blocked-authors/:id',
    {
      schema: { tags, security, summary: "Lift a block: the author's new items are collected again", params: IdParams, querystring: TokenQuery, response: { 204: Type.Null({ description: 'lifted' }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const principal = await authenticate(db, request);
      const row = await owned(db, BLOCKED, request.params.id, principal);
      await unblockAuthor(db, row, actorOf(principal));
      return reply.code(204).send(null);
    },
  );
}
