/**
 * Contracts of the caller on {api_url} (docs/api.md, contracts):
 *
 *   GET   /v1/customer/contracts/me   the contracts the token's consumer was granted → 200 array
 *   PATCH /collection/contracts/{id}  {filterId: id | null} → 200 the contract: sets (null:
 *                                     clears) the contract's filter, the last level of the
 *                                     governing filter (docs/filters.md, governing filter)
 *   PUT   /collection/contracts/{id}/two-factor  {required: boolean} → 200 the contract: whether
 *                                     members acting with a user's token must have two-factor
 *                                     sign-in on (owner only, scope `team`;
 *                                     docs/api.md#requiring-two-factor-sign-in)
 *
 * Each contract: `_id`, `name`, `slug`, `filterId` (only when set), `requireTwoFactor` (`true`,
 * only when set), `role` (the caller's role on it, docs/api.md#roles-and-scopes: what the console
 * shows), `active` and the common record fields. PATCH: authenticate → validate (400 naming the
 * property) → the contract (404
 * unknown, 403 not granted, without its data) → the filter, a set or chain of that contract (404
 * unknown, 403 another contract's, naming `filterId`) → update. The CLI's
 * `admin contract set-filter` does the same for the operator. The change is recorded in the audit
 * trail in its transaction (docs/api.md#audit-trail).
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { forbiddenError, notFoundError } from '../../errors.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import type { App } from '../../http/typed.ts';
import { type GrantRole, grantedContracts, setContractFilter } from '../../store/contracts.ts';
import { recordAudit } from '../../store/audit.ts';
import type { Db } from '../../store/db.ts';
import { findTwoFactor, setRequireTwoFactor } from '../../store/two-factor.ts';
import type { ContractRow } from '../../store/tables.ts';
import { common, Id, IdParams, recordFields, TokenQuery } from '../schemas.ts';
import { FILTER, owned } from '../ownership.ts';
import { actorOf } from '../resource.ts';
import { Role } from '../team/schema.ts';

const { contractId: _contractId, ...fields } = common;
const Contract = Type.Object({
  ...fields,
  name: Type.String(),
  slug: Type.String(),
  filterId: Type.Optional({ ...Id, description: "the contract's filter (a set or chain of the contract); absent when none" }),
  requireTwoFactor: Type.Optional(Type.Literal(true, { description: "members acting with a user's token must have two-factor sign-in on; absent when not required" })),
  role: { ...Role, description: "the role of the token's consumer on the contract (docs/api.md#roles-and-scopes)" },
});

/** The body of `PUT /collection/contracts/{id}/two-factor`. */
export const TwoFactorRequirement = Type.Object({
  required: Type.Boolean({ description: "true: members acting with a user's token must have two-factor sign-in on (machine clients are not affected)" }),
});

/** The body of `PATCH /collection/contracts/{id}`. */
export const ContractUpdate = Type.Object({
  filterId: Type.Union([Id, Type.Null()], { description: 'a filter set or chain of the contract; null removes the filter' }),
});

/** `GET /v1/customer/contracts/me` for the OpenAPI description; the handler reads only the token. */
const schema = {
  tags: ['contracts'],
  summary: 'The contracts the consumer of the token was granted',
  security: TOKEN_SECURITY,
  querystring: handlerValidated(TokenQuery),
  response: { 200: Type.Array(Contract), ...errorResponses(401) },
};

const updateSchema = {
  tags: ['contracts'],
  summary: "Set or clear the contract's filter (the filter of items whose input and collection name none)",
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: TokenQuery,
  body: handlerValidated(ContractUpdate),
  response: { 200: Contract, ...errorResponses(400, 401, 403, 404, 413) },
};

const twoFactorSchema = {
  tags: ['contracts'],
  summary: 'Require (or stop requiring) two-factor sign-in of the members who act with a user token',
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: TokenQuery,
  body: handlerValidated(TwoFactorRequirement),
  response: { 200: Contract, ...errorResponses(400, 401, 403, 404, 413) },
};

/** Contract row → the contract (docs/api.md#contracts) with the common record fields; `filterId` only when set. */
export function presentContract(row: ContractRow) {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    ...(row.filterId ? { filterId: row.filterId } : {}),
    ...(Number(row.requireTwoFactor) === 1 ? { requireTwoFactor: true as const } : {}),
    ...recordFields(row),
  };
}

/** The contract as the caller lists it (docs/api.md#contracts): `presentContract` with the caller's `role` on it. */
function contractOfCaller(row: ContractRow, role: GrantRole) {
  return { ...presentContract(row), role };
}

async function contractById(db: Db, id: string): Promise<ContractRow | undefined> {
  return db.selectFrom('contracts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Registers the module's routes on `app` (see the module's description). */
export function contractRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.get('/v1/customer/contracts/me', { schema }, async (request) => {
    const { consumer } = await authenticate(db, request);
    return (await grantedContracts(db, consumer.id)).map(({ role, ...row }) => contractOfCaller(row, role as GrantRole));
  });

  app.patch('/collection/contracts/:id', { schema: updateSchema }, async (request) => {
    const principal = await authenticate(db, request);
    const { filterId } = check(ContractUpdate, request.body);
    const { id } = request.params;
    const contract = await contractById(db, id);
    if (!contract) throw notFoundError(`No contract ${id}.`, 'id', id);
    const role = await requireContractAccess(db, principal, id, 'id');
    if (filterId !== null) await owned(db, FILTER, filterId, id, 'filterId');
    await db.transaction().execute(async (trx) => {
      await setContractFilter(trx, id, filterId, principal.consumer.name);
      const after = await trx.selectFrom('contracts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const change = { contractId: id, actor: actorOf(principal), resource: 'contract', resourceId: id, action: 'update' };
      await recordAudit(trx, { ...change, before: presentContract(contract), after: presentContract(after) });
    });
    return contractOfCaller((await contractById(db, id))!, role);
  });

  app.put('/collection/contracts/:id/two-factor', { schema: twoFactorSchema }, async (request) => {
    const principal = await authenticate(db, request);
    const { required } = check(TwoFactorRequirement, request.body);
    const { id } = request.params;
    if (!(await contractById(db, id))) throw notFoundError(`No contract ${id}.`, 'id', id);
    const role = await requireContractAccess(db, principal, id, 'id');
    // As the members will have to: an owner who signs in with a password turns it on for themself first.
    if (required && principal.consumer.type === 'user' && (await findTwoFactor(db, principal.consumer.id))?.enabledAt == null) {
      throw forbiddenError('Turn on two-factor sign-in for your own account first (Account, or POST /v1/account/two-factor), then require it of the team.', 'twoFactor');
    }
    await setRequireTwoFactor(db, id, required, actorOf(principal));
    return contractOfCaller((await contractById(db, id))!, role);
  });
}
