/**
 * The audit trail on {api_url} (docs/api.md#audit-trail, docs/api.md#revert):
 *
 *   GET  /collection/audit?contract_id=…          the contract's entries, newest first; narrowed by
 *                                                 resource, id, consumer, action, since, until;
 *                                                 `count` per page, `cursor` = the last `_id` of
 *                                                 the previous page (a `Link: rel="next"` header
 *                                                 gives the next page's address while a page is full)
 *   POST /collection/audit/{id}/revert            reverts a moderation entry → 201 the revert's entry
 *
 * Contract-isolated like every read: the contract must be granted to the token's consumer (403,
 * no data); an entry of another contract → 403 without its data, an unknown one → 404.
 * Revert: only moderations (`moderate`, `apply`, `revert`) → else 400 naming `id`; an entry
 * already reverted → 409 naming it; an entry whose items were moderated since → 409 with one
 * error per item (`propertyValue` the item id), nothing changed (store/items/revert.ts `revertModeration`).
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ApiError, conflictError, forbiddenError, notFoundError, VALIDATION_CODES, validationError } from '../../errors.ts';
import { AuditEntry, presentAuditEntry } from '../../http/audit.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { findAuditEntry, listAudit } from '../../store/audit.ts';
import type { Db } from '../../store/db.ts';
import { REVERTABLE, revertModeration } from '../../store/items/revert.ts';
import { AUDIT_ENTRY, owned } from '../ownership.ts';
import { Id, IdParams, TokenQuery } from '../schemas.ts';
import { actorOf } from '../resource.ts';

export const AUDIT_RESOURCES = ['collection', 'input', 'list', 'set', 'chain', 'customization', 'credential', 'contract', 'grant', 'invitation', 'password-reset', 'item', 'account', 'author'] as const;
export const AUDIT_ACTIONS = ['create', 'update', 'delete', 'moderate', 'split', 'apply', 'revert', 'accept', 'display', 'pin', 'unpin', 'edit', 'password', 'logout-all', 'publish-anyway'] as const;

const UnixTime = Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'Unix time in seconds' });

export const AuditQuery = Type.Object({
  contract_id: Id,
  access_token: Type.Optional(Type.String()),
  resource: Type.Optional(Type.String({ enum: [...AUDIT_RESOURCES], description: 'only entries about this kind of resource' })),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: "only entries about this resource id (an item's id for item entries of one item)" })),
  consumer: Type.Optional({ ...Id, description: 'only entries made by this consumer id' }),
  action: Type.Optional(Type.String({ enum: [...AUDIT_ACTIONS] })),
  since: Type.Optional({ ...UnixTime, description: 'only entries made at or after this Unix time (seconds)' }),
  until: Type.Optional({ ...UnixTime, description: 'only entries made at or before this Unix time (seconds)' }),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional({ ...Id, description: 'the `_id` of the last entry of the previous page: entries older than it' }),
});

const listSchema = {
  tags: ['audit'],
  summary: "The contract's audit trail, newest first, paged by cursor",
  security: TOKEN_SECURITY,
  querystring: AuditQuery,
  response: { 200: Type.Array(AuditEntry), ...errorResponses(400, 401, 403) },
};

const revertSchema = {
  tags: ['audit'],
  summary: 'Revert a moderation entry: its items get back their state before, recorded as a new entry',
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: TokenQuery,
  response: { 201: AuditEntry, ...errorResponses(400, 401, 403, 404, 409) },
};

/** Registers the module's routes on `app` (see the module's description). */
export function auditRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.get('/collection/audit', { schema: listSchema }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { query } = request;
    await requireContractAccess(db, principal, query.contract_id, 'contract_id');
    const count = query.count ?? 20;
    const rows = await listAudit(db, {
      contractId: query.contract_id,
      ...(query.resource ? { resource: query.resource } : {}),
      ...(query.id ? { resourceId: query.id } : {}),
      ...(query.consumer ? { consumerId: query.consumer } : {}),
      ...(query.action ? { action: query.action } : {}),
      ...(query.since !== undefined ? { sinceMs: query.since * 1000 } : {}),
      ...(query.until !== undefined ? { untilMs: query.until * 1000 + 999 } : {}),
      ...(query.cursor ? { before: query.cursor } : {}),
      count,
    });
    if (rows.length === count) {
      const next = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (key !== 'access_token' && key !== 'cursor' && value !== undefined) next.set(key, String(value));
      next.set('cursor', rows.at(-1)!.id);
      void reply.header('link', `</collection/audit?${next}>; rel="next"`);
    }
    return rows.map(presentAuditEntry);
  });

  app.post('/collection/audit/:id/revert', { schema: revertSchema }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const { id } = request.params;
    const entry = await owned(db, AUDIT_ENTRY, id, principal);
    if (!(REVERTABLE as readonly string[]).includes(entry.action) || Number(entry.itemCount) === 0) {
      throw validationError([
        {
          propertyName: 'id',
          message: `audit entry ${id} is a ${entry.action} of ${entry.resource} ${entry.resourceId}: only moderations (${REVERTABLE.join(', ')}) that changed items can be reverted`,
          propertyValue: id,
          code: VALIDATION_CODES.enum,
        },
      ]);
    }
    const outcome = await revertModeration(db, entry.contractId, id, actorOf(principal));
    if ('alreadyRevertedBy' in outcome) throw conflictError(`Audit entry ${id} was already reverted by entry ${outcome.alreadyRevertedBy}.`, 'id', id);
    if ('changed' in outcome) {
      throw new ApiError(
        409,
        outcome.changed.map((itemId) => ({
          name: 'ConflictError',
          message: `Item ${itemId} was moderated (or removed) after audit entry ${id}; nothing was reverted.`,
          propertyName: 'id',
          propertyValue: itemId,
          reason: 'changed since',
          code: 4091,
        })),
      );
    }
    if ('notRevertable' in outcome) throw notFoundError(`No audit entry ${id}.`, 'id', id);
    return reply.code(201).send(presentAuditEntry((await findAuditEntry(db, entry.contractId, outcome.revertId))!));
  });
}
