/**
 * Inputs on {api_url} (docs/api.md#inputs):
 *
 *   POST /collection/inputs        create one (object) or several (array, all or nothing) → 201
 *   GET  /collection/inputs        list by contract_id, optional collection_id
 *   GET  /collection/inputs/{id}   one input
 *   PUT  /collection/inputs/{id}   replace the updatable fields
 *   DELETE /collection/inputs/{id} delete one → 204
 *   DELETE /collection/inputs      delete {"ids": [...]}, all or nothing → 204
 *   GET  /collection/inputs/{id}/rejections  the 100 most recent items its filter rejected,
 *        newest first: [{id, url, title, set: {id, name}, rule, reason, date, publishable}] (docs/api.md#rejections)
 *   POST /collection/inputs/{id}/poll  poll it now, answer what the source gave (docs/api.md#poll-now)
 *   POST /collection/inputs/{id}/rejections/publish  {itemId} → 200 {id, collectionId, state, auditId}:
 *        publish a rejected item anyway (store/rejections.ts `publishRejected`; moderator role)
 *   GET  /collection/services      the services an input may name, their types and fields (services.ts)
 *
 * An input whose source its collection already has (the same service, type and normalized
 * source, `sources.ts`) is refused, on create and on a replace that changes the source or the
 * collection: 409 ConflictError naming `input` (`[i].input` in a bulk body; two elements of
 * one body count too), `reason` `same source as input <id>`; unless the query says `force=true`.
 * Only the collection's own inputs count: another collection's, or another contract's, never.
 *
 * A bulk create holds 1 to `MAX_BULK_INPUTS` inputs (400 naming `body` beyond).
 *
 * `credentialId` must name a credential of the input's contract (404 unknown, 403 other contract)
 * and of its service (400); without it the collector uses the contract's default credential for
 * the service (docs/api.md#credentials).
 *
 * An Instagram `tag` input counts its hashtag against its credential's quota at once: the 31st
 * unique hashtag in 7 days → 400 naming `input` (`quotas.ts`, docs/api.md#quotas).
 *
 * `filterId` must name a filter set or chain of the input's contract (404 unknown, 403 other
 * contract). Deleting an input deletes only the input: the items it collected stay in their
 * collection's queue (moderated, published or not, as they were).
 *
 * Each handler: authenticate → validate → authorize (contract grant; referenced collection in
 * the same contract) → act → present.
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ApiError, conflictError, displayValue, type Invalid, notFoundError, rateLimitError, validationError, VALIDATION_CODES } from '../../errors.ts';
import { authenticate, type Principal, requireContractAccess } from '../../http/authenticate.ts';
import { check, handlerValidated, isValid } from '../../http/validate.ts';
import { newId } from '../../lib/ids.ts';
import { newRecordFields, iso } from '../../lib/time.ts';
import { type NewAuditEntry, recordAudit } from '../../store/audit.ts';
import type { Transaction } from 'kysely';
import type { Db } from '../../store/db.ts';
import { publishRejected, recentRejections } from '../../store/rejections.ts';
import { deleteInputs, findInput, findInputs, insertInputs, listInputs, takePollNowTurn, updateInput } from '../../store/inputs.ts';
import type { Database, InputRow, NewInput } from '../../store/tables.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { BulkDelete, TokenQuery } from '../schemas.ts';
import { COLLECTION, CREDENTIAL, FILTER, INPUT, owned } from '../ownership.ts';
import { actorOf } from '../resource.ts';
import { PublishAnyway, PublishedAnyway, presentInput, presentRejection, Rejection } from './present.ts';
import { ForceQuery, IdParams, Input, InputCreate, InputListQuery, InputReplace, inputRules, MAX_BULK_INPUTS, PollResult, POLL_NOW_EVERY_S } from './schema.ts';
import { sourceKey, type SourceOf } from './sources.ts';
import { serviceRoutes } from './services.ts';
import { countHashtags } from './quotas.ts';
import { ownsEntries } from '../../services/table.ts';

const tags = ['inputs'];
const security = TOKEN_SECURITY;
const schemas = {
  create: {
    tags,
    security,
    querystring: ForceQuery,
    body: handlerValidated(Type.Union([InputCreate, Type.Array(InputCreate, { minItems: 1, maxItems: MAX_BULK_INPUTS })])),
    response: { 201: Type.Union([Input, Type.Array(Input)]), ...errorResponses(400, 401, 403, 404, 409, 413) },
  },
  list: { tags, security, querystring: InputListQuery, response: { 200: Type.Array(Input), ...errorResponses(400, 401, 403, 404) } },
  get: { tags, security, params: IdParams, querystring: TokenQuery, response: { 200: Input, ...errorResponses(400, 401, 403, 404) } },
  replace: { tags, security, params: IdParams, querystring: ForceQuery, body: handlerValidated(InputReplace), response: { 200: Input, ...errorResponses(400, 401, 403, 404, 409, 413) } },
  remove: { tags, security, params: IdParams, querystring: TokenQuery, response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404, 409) } },
  removeMany: { tags, security, querystring: TokenQuery, body: handlerValidated(BulkDelete), response: { 204: Type.Null({ description: 'all deleted' }), ...errorResponses(400, 401, 403, 404, 409, 413) } },
  rejections: { tags, security, params: IdParams, querystring: TokenQuery, response: { 200: Type.Array(Rejection), ...errorResponses(400, 401, 403, 404) } },
  poll: { tags, security, params: IdParams, querystring: TokenQuery, response: { 200: PollResult, ...errorResponses(400, 401, 403, 404, 429) } },
  publishAnyway: {
    tags,
    security,
    summary: 'Publish a rejected item anyway: it enters the queue published and filter applications leave it alone',
    params: IdParams,
    querystring: TokenQuery,
    body: handlerValidated(PublishAnyway),
    response: { 200: PublishedAnyway, ...errorResponses(400, 401, 403, 404, 409, 413) },
  },
};

/** The inputs `rows` as stored, read contract by contract (a bulk create may name several). */
async function storedInputs(db: Db | Transaction<Database>, rows: NewInput[]): Promise<InputRow[]> {
  const found: InputRow[] = [];
  for (const [contractId, group] of Map.groupBy(rows, (row) => row.contractId)) found.push(...(await findInputs(db, contractId, group.map((row) => row.id))));
  return found;
}

/**
 * A poll of one input now (docs/api.md#poll-now), given by the composition (`app.ts`,
 * `collect/poll-now.ts`): `polled` with the input as the poll left it and the new items it
 * stored, or not polled because the input or its host's politeness slots are taken.
 */
export type PollInput = (input: InputRow) => Promise<{ polled: true; items: number; input: InputRow } | { polled: false; busy: 'input' | 'host'; retryAfterSeconds: number }>;

/**
 * Throws 409 ConflictError naming `propertyName` of each source in `adding` that collection
 * `collectionId` already has (its inputs other than `except`) or that an earlier element of
 * `adding` has (the module's description).
 */
async function refuseDuplicates(db: Db | Transaction<Database>, contractId: string, collectionId: string, adding: Array<{ source: SourceOf; propertyName: string; id: string }>, except?: string): Promise<void> {
  const known = new Map<string, string>();
  for (const row of await listInputs(db, contractId, collectionId)) if (row.id !== except) known.set(sourceKey(row), row.id);
  const conflicts: Array<{ propertyName: string; value: string; existing: string }> = [];
  for (const { source, propertyName, id } of adding) {
    const key = sourceKey(source);
    const existing = known.get(key);
    if (existing) conflicts.push({ propertyName, value: source.input, existing });
    else known.set(key, id);
  }
  if (!conflicts.length) return;
  throw new ApiError(
    409,
    conflicts.map(({ propertyName, value, existing }) => ({
      name: 'ConflictError',
      message: `collection ${collectionId} already has this source (input ${existing}); send force=true to add it anyway`,
      propertyName,
      propertyValue: displayValue(value)!,
      reason: `same source as input ${existing}`,
      code: 4091,
    })),
  );
}

/** The columns an input body sets, on create and on replace (defaults for what is not sent). */
function settingsOf(body: InputReplace) {
  return {
    service: body.service,
    type: body.type,
    input: body.input,
    filterId: body.filterId ?? null,
    credentialId: body.credentialId ?? null,
    latitude: body.latitude ?? null,
    longitude: body.longitude ?? null,
    radius: body.radius ?? null,
    display: body.display === false ? 0 : 1,
    active: body.active === false ? 0 : 1,
    pollInterval: body.interval ?? null,
  };
}

/**
 * Throws unless credential `id` may serve an input of `service` in `contractId`: 404 unknown, 403
 * of another contract (docs/api.md#credentials), 400 of another service; each naming `propertyName`.
 */
async function checkCredential(db: Db, id: string, contractId: string, service: string, propertyName: string): Promise<void> {
  const credential = await owned(db, CREDENTIAL, id, contractId, propertyName);
  if (credential.service !== service) {
    throw validationError([{ propertyName, message: `credential ${id} is a ${credential.service} credential, not a ${service} one`, propertyValue: id, code: VALIDATION_CODES.format }]);
  }
}

/** Registers the module's routes on `app` (see the module's description). */
export function inputRoutes(app: App, { db, config, pollInput }: { db: Db; config: Config; pollInput: PollInput }): void {
  serviceRoutes(app, { db, config });
  const intervalLimits = { min: config.pollIntervalMin, max: config.pollIntervalMax };
  app.post('/collection/inputs', { schema: schemas.create }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const bulk = Array.isArray(request.body);
    const bodies: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
    if (bulk && bodies.length === 0) {
      throw validationError([{ propertyName: 'body', message: 'the array of inputs must not be empty', code: VALIDATION_CODES.range }]);
    }
    if (bodies.length > MAX_BULK_INPUTS) {
      throw validationError([{ propertyName: 'body', message: `at most ${MAX_BULK_INPUTS} inputs can be created at once`, propertyValue: bodies.length, code: VALIDATION_CODES.range }]);
    }
    const invalid: Invalid[] = [];
    const inputs: InputCreate[] = [];
    bodies.forEach((body, i) => {
      const prefix = bulk ? `[${i}]` : '';
      if (!isValid(InputCreate, body, invalid, prefix)) return;
      invalid.push(...inputRules(body, intervalLimits, prefix, config.allowPrivateFetch));
      inputs.push(body);
    });
    if (invalid.length) throw validationError(invalid);

    const now = Date.now();
    const rows: NewInput[] = [];
    for (const [i, body] of inputs.entries()) {
      const prefix = bulk ? `[${i}].` : '';
      await requireContractAccess(db, principal, body.contractId, `${prefix}contractId`);
      await owned(db, COLLECTION, body.collectionId, body.contractId, `${prefix}collectionId`);
      if (body.filterId) await owned(db, FILTER, body.filterId, body.contractId, `${prefix}filterId`);
      if (body.credentialId) await checkCredential(db, body.credentialId, body.contractId, body.service, `${prefix}credentialId`);
      rows.push({
        id: newId(now),
        contractId: body.contractId,
        collectionId: body.collectionId,
        ...settingsOf(body),
        ...newRecordFields(principal.consumer.name, now),
        sourceState: '{}',
        lastRun: null,
        lastSuccess: null,
        lastError: null,
        nextRunAt: now,
        failures: 0,
        collected: 0,
        rejected: 0,
      });
    }
    await db.transaction().execute(async (trx) => {
      await countHashtags(trx, config, rows.map((row, i) => ({ input: row, propertyName: bulk ? `[${i}].input` : 'input' })), now);
      if (!request.query.force) {
        const byCollection = Map.groupBy(rows.map((row, i) => ({ row, i })), ({ row }) => `${row.contractId} ${row.collectionId}`);
        for (const group of byCollection.values()) {
          const { contractId, collectionId } = group[0]!.row;
          await refuseDuplicates(trx, contractId, collectionId, group.map(({ row, i }) => ({ source: row, propertyName: bulk ? `[${i}].input` : 'input', id: row.id })));
        }
      }
      await insertInputs(trx, rows);
      for (const row of await storedInputs(trx, rows)) await recordAudit(trx, inputChange(principal, 'create', row.contractId, row.id, undefined, row));
    });
    // In the order sent, whatever order the store returns them in.
    const stored = new Map((await storedInputs(db, rows)).map((row) => [row.id, row]));
    const created = rows.map((row) => presentInput(stored.get(row.id)!));
    return reply.code(201).send(bulk ? created : created[0]);
  });

  app.get('/collection/inputs', { schema: schemas.list }, async (request) => {
    const principal = await authenticate(db, request);
    const { query } = request;
    await requireContractAccess(db, principal, query.contract_id, 'contract_id');
    if (query.collection_id) await owned(db, COLLECTION, query.collection_id, query.contract_id, 'collection_id');
    return (await listInputs(db, query.contract_id, query.collection_id)).map(presentInput);
  });

  app.get('/collection/inputs/:id', { schema: schemas.get }, async (request) => {
    const principal = await authenticate(db, request);
    return presentInput(await owned(db, INPUT, request.params.id, principal));
  });

  app.get('/collection/inputs/:id/rejections', { schema: schemas.rejections }, async (request) => {
    const principal = await authenticate(db, request);
    const input = await owned(db, INPUT, request.params.id, principal);
    return (await recentRejections(db, input.contractId, input.id)).map(presentRejection);
  });

  app.post('/collection/inputs/:id/poll', { schema: schemas.poll }, async (request) => {
    const principal = await authenticate(db, request);
    const input = await owned(db, INPUT, request.params.id, principal);
    const waitMs = await takePollNowTurn(db, input.contractId, input.id, Date.now(), POLL_NOW_EVERY_S * 1000);
    if (waitMs > 0) throw rateLimitError(Math.ceil(waitMs / 1000), `input ${input.id} was polled now less than ${POLL_NOW_EVERY_S} s ago; try again later`, 'id');
    const outcome = await pollInput(input);
    if (!outcome.polled) {
      const why = outcome.busy === 'input' ? `input ${input.id} is being polled` : `the source's host has all its polls under way (COLLECT_HOST_CONCURRENCY)`;
      throw rateLimitError(outcome.retryAfterSeconds, `${why}; try again later`, 'id');
    }
    const after = presentInput(outcome.input);
    const error = outcome.input.lastError;
    return { status: error === null ? ('ok' as const) : ('error' as const), items: outcome.items, title: after.title ?? null, error, input: after };
  });

  app.post('/collection/inputs/:id/rejections/publish', { schema: schemas.publishAnyway }, async (request) => {
    const principal = await authenticate(db, request);
    const input = await owned(db, INPUT, request.params.id, principal);
    const { itemId } = check(PublishAnyway, request.body);
    const outcome = await publishRejected(db, input, itemId, actorOf(principal), ownsEntries);
    if ('refused' in outcome) {
      if (outcome.refused === 'unknown') throw notFoundError(`Input ${input.id} has no rejection of item ${itemId}.`, 'itemId', itemId);
      if (outcome.refused === 'not-kept') throw conflictError(`Item ${itemId} was rejected before rejected items were kept; it cannot be published from its rejection.`, 'itemId', itemId);
      throw conflictError(`The collection already holds item ${itemId}: moderate it in the queue.`, 'itemId', itemId);
    }
    return { id: itemId, collectionId: input.collectionId, state: 'published' as const, auditId: outcome.auditId };
  });

  app.put('/collection/inputs/:id', { schema: schemas.replace }, async (request) => {
    const principal = await authenticate(db, request);
    const current = await owned(db, INPUT, request.params.id, principal);
    const body = check(InputReplace, request.body);
    const invalid = inputRules(body, intervalLimits, '', config.allowPrivateFetch);
    if (body.contractId !== undefined && body.contractId !== current.contractId) {
      invalid.push({ propertyName: 'contractId', message: 'contractId cannot be changed', propertyValue: body.contractId, code: VALIDATION_CODES.format });
    }
    if (invalid.length) throw validationError(invalid);
    const collectionId = body.collectionId ?? current.collectionId;
    if (collectionId !== current.collectionId) await owned(db, COLLECTION, collectionId, current.contractId, 'collectionId');
    if (body.filterId && body.filterId !== current.filterId) await owned(db, FILTER, body.filterId, current.contractId, 'filterId');
    if (body.credentialId) await checkCredential(db, body.credentialId, current.contractId, body.service, 'credentialId');
    const sourceChanged = body.service !== current.service || body.type !== current.type || body.input !== current.input;
    const circleChanged = (body.latitude ?? null) !== current.latitude || (body.longitude ?? null) !== current.longitude || (body.radius ?? null) !== current.radius;
    const now = Date.now();
    await db.transaction().execute(async (trx) => {
      // A new source is looked up afresh (its hashtag counted); an unchanged one is not.
      if (sourceChanged) await countHashtags(trx, config, [{ input: { ...body, contractId: current.contractId }, propertyName: 'input' }], now);
      if (!request.query.force && (sourceChanged || circleChanged || collectionId !== current.collectionId)) {
        await refuseDuplicates(trx, current.contractId, collectionId, [{ source: body, propertyName: 'input', id: current.id }], current.id);
      }
      await updateInput(trx, current.contractId, current.id, {
        ...settingsOf(body),
        collectionId,
        lastModified: iso(now),
        lastModifiedBy: principal.consumer.name,
        // A changed input is polled within seconds (docs/services.md#polling); a new source starts afresh.
        nextRunAt: now,
        failures: 0,
        ...(sourceChanged ? { sourceState: '{}', lastError: null, warnings: '[]', sourceTitle: null } : {}),
      });
      const [after] = await findInputs(trx, current.contractId, [current.id]);
      await recordAudit(trx, inputChange(principal, 'update', current.contractId, current.id, current, after));
    });
    return presentInput((await findInput(db, current.contractId, current.id))!);
  });

  app.delete('/collection/inputs/:id', { schema: schemas.remove }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const row = await owned(db, INPUT, request.params.id, principal);
    await db.transaction().execute(async (trx) => {
      await deleteInputs(trx, row.contractId, [row.id]);
      await recordAudit(trx, inputChange(principal, 'delete', row.contractId, row.id, row));
    });
    return reply.code(204).send(null);
  });

  app.delete('/collection/inputs', { schema: schemas.removeMany }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const ids = [...new Set(check(BulkDelete, request.body).ids)];
    const rows: InputRow[] = [];
    for (const [i, id] of ids.entries()) rows.push(await owned(db, INPUT, id, principal, `ids[${i}]`));
    await db.transaction().execute(async (trx) => {
      for (const [contractId, group] of Map.groupBy(rows, (row) => row.contractId)) await deleteInputs(trx, contractId, group.map((row) => row.id));
      for (const row of rows) await recordAudit(trx, inputChange(principal, 'delete', row.contractId, row.id, row));
    });
    return reply.code(204).send(null);
  });
}

/** The audit entry of a change of input `id` (docs/api.md#audit-trail): the input as presented before and after. */
function inputChange(principal: Principal, action: string, contractId: string, id: string, before?: InputRow, after?: InputRow): NewAuditEntry {
  return { contractId, actor: actorOf(principal), resource: 'input', resourceId: id, action, before: before && presentInput(before), after: after && presentInput(after) };
}
