/**
 * Inputs on {api_url} (interface §4.2, decisions §5):
 *
 *   POST /collection/inputs        create one (object) or several (array, all or nothing) → 201
 *   GET  /collection/inputs        list by contract_id, optional collection_id
 *   GET  /collection/inputs/{id}   one input
 *   PUT  /collection/inputs/{id}   replace the updatable fields
 *
 * Each handler: authenticate → validate → authorize (contract grant; referenced collection in
 * the same contract) → act → present.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import { type Invalid, forbiddenError, notFoundError, validationError, VALIDATION_CODES } from '../../errors.ts';
import { authenticate, type Principal, requireContractAccess } from '../../http/authenticate.ts';
import { problems } from '../../http/validate.ts';
import { newId } from '../../lib/ids.ts';
import { audit, iso } from '../../lib/time.ts';
import { findCollection } from '../../store/collections.ts';
import { hasGrant } from '../../store/contracts.ts';
import type { Db } from '../../store/db.ts';
import { findInput, findInputs, insertInputs, listInputs, updateInput } from '../../store/inputs.ts';
import type { InputRow, NewInput } from '../../store/tables.ts';
import { presentInput } from './present.ts';
import { IdParams, InputCreate, InputListQuery, InputReplace, inputRules } from './schema.ts';

/** The columns an input body sets, on create and on replace (defaults for what is not sent). */
function settingsOf(body: InputReplace) {
  return {
    service: body.service,
    type: body.type,
    input: body.input,
    filterId: body.filterId ?? null,
    latitude: body.latitude ?? null,
    longitude: body.longitude ?? null,
    radius: body.radius ?? null,
    display: body.display === false ? 0 : 1,
    active: body.active === false ? 0 : 1,
  };
}

/** Throws 404 for an unknown collection and 403 for one of another contract. */
async function requireCollectionIn(db: Db, collectionId: string, contractId: string, propertyName: string): Promise<void> {
  const collection = await findCollection(db, collectionId);
  if (!collection) throw notFoundError(`Collection ${collectionId} does not exist.`, propertyName, collectionId);
  if (collection.contractId !== contractId) throw forbiddenError(`Collection ${collectionId} belongs to another contract.`, propertyName);
}

/** The input with this id, if the principal may use its contract (404 unknown, 403 foreign). */
async function accessibleInput(db: Db, principal: Principal, id: string): Promise<InputRow> {
  const row = await findInput(db, id);
  if (!row) throw notFoundError(`Input ${id} does not exist.`, 'id', id);
  // 403 without any of the input's data, its contract id included (decisions §2).
  if (!(await hasGrant(db, principal.consumer.id, row.contractId))) throw forbiddenError(`No access to input ${id}.`, 'id');
  return row;
}

export function inputRoutes(app: FastifyInstance, { db }: { db: Db; config: Config }): void {
  app.post('/collection/inputs', async (request, reply) => {
    const principal = await authenticate(db, request);
    const bulk = Array.isArray(request.body);
    const bodies: unknown[] = bulk ? (request.body as unknown[]) : [request.body];
    if (bulk && bodies.length === 0) {
      throw validationError([{ propertyName: 'body', message: 'the array of inputs must not be empty', code: VALIDATION_CODES.range }]);
    }
    const invalid: Invalid[] = [];
    bodies.forEach((body, i) => {
      const prefix = bulk ? `[${i}]` : '';
      const found = problems(InputCreate, body, prefix);
      invalid.push(...(found.length ? found : inputRules(body as InputCreate, prefix)));
    });
    if (invalid.length) throw validationError(invalid);

    const inputs = bodies as InputCreate[];
    const now = Date.now();
    const rows: NewInput[] = [];
    for (const [i, body] of inputs.entries()) {
      const prefix = bulk ? `[${i}].` : '';
      await requireContractAccess(db, principal, body.contractId, `${prefix}contractId`);
      await requireCollectionIn(db, body.collectionId, body.contractId, `${prefix}collectionId`);
      rows.push({
        id: newId(now),
        contractId: body.contractId,
        collectionId: body.collectionId,
        ...settingsOf(body),
        ...audit(principal.consumer.name, now),
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
    await db.transaction().execute((trx) => insertInputs(trx, rows));
    // In the order sent, whatever order the store returns them in.
    const stored = new Map((await findInputs(db, rows.map((row) => row.id))).map((row) => [row.id, row]));
    const created = rows.map((row) => presentInput(stored.get(row.id)!));
    return reply.code(201).send(bulk ? created : created[0]);
  });

  app.get('/collection/inputs', { schema: { querystring: InputListQuery } }, async (request) => {
    const principal = await authenticate(db, request);
    const query = request.query as { contract_id: string; collection_id?: string };
    await requireContractAccess(db, principal, query.contract_id, 'contract_id');
    if (query.collection_id) await requireCollectionIn(db, query.collection_id, query.contract_id, 'collection_id');
    return (await listInputs(db, query.contract_id, query.collection_id)).map(presentInput);
  });

  app.get('/collection/inputs/:id', { schema: { params: IdParams } }, async (request) => {
    const principal = await authenticate(db, request);
    return presentInput(await accessibleInput(db, principal, (request.params as { id: string }).id));
  });

  app.put('/collection/inputs/:id', { schema: { params: IdParams } }, async (request) => {
    const principal = await authenticate(db, request);
    const current = await accessibleInput(db, principal, (request.params as { id: string }).id);
    const found = problems(InputReplace, request.body);
    const invalid = found.length ? found : inputRules(request.body as InputReplace);
    const body = request.body as InputReplace;
    if (!found.length && body.contractId !== undefined && body.contractId !== current.contractId) {
      invalid.push({ propertyName: 'contractId', message: 'contractId cannot be changed', propertyValue: body.contractId, code: VALIDATION_CODES.format });
    }
    if (invalid.length) throw validationError(invalid);
    const collectionId = body.collectionId ?? current.collectionId;
    if (collectionId !== current.collectionId) await requireCollectionIn(db, collectionId, current.contractId, 'collectionId');
    const sourceChanged = body.service !== current.service || body.type !== current.type || body.input !== current.input;
    const now = Date.now();
    await updateInput(db, current.id, {
      ...settingsOf(body),
      collectionId,
      lastModified: iso(now),
      lastModifiedBy: principal.consumer.name,
      // A changed input is polled within seconds (decisions §9); a new source starts afresh.
      nextRunAt: now,
      failures: 0,
      ...(sourceChanged ? { sourceState: '{}', lastError: null } : {}),
    });
    return presentInput((await findInput(db, current.id))!);
  });
}
