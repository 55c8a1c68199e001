/**
 * The six operations every named management record shares (docs/api.md#record-operations,
 * docs/api.md#deleting, docs/api.md#common-record-fields), as handlers built from a resource's
 * `Spec`:
 *
 *   create      authenticate → validate → contract grant → references → unique name → insert → 201
 *   list        authenticate → contract grant (contract_id) → narrowed (`narrow`) → the contract's
 *               records, oldest first
 *   get         authenticate → 404 unknown / 403 other contract (no data) → record
 *   update      authenticate → access → validate (contractId and fixed fields unchanged) →
 *               references → unique name → update (with `onUpdate`, one transaction) → 200
 *   remove      authenticate → access → no user left (409 naming it) → delete → 204
 *   removeMany  the same for `{"ids": [...]}`, all or nothing, in one transaction
 *
 * Every create, update and delete is recorded in the audit trail in its own transaction
 * (docs/api.md#audit-trail), with the record as presented before and after.
 *
 * Names are unique per resource type inside a contract (409 ConflictError naming `name`).
 */
import type { Transaction } from 'kysely';
import type { TSchema } from 'typebox';
import { ApiError, conflictError, type Invalid, validationError, VALIDATION_CODES } from '../errors.ts';
import { authenticate, type Principal, requireContractAccess } from '../http/authenticate.ts';
import type { App, TypedReply, TypedRequest } from '../http/typed.ts';
import { check, problems } from '../http/validate.ts';
import { newId } from '../lib/ids.ts';
import { newRecordFields, iso } from '../lib/time.ts';
import { type Actor, recordAudit } from '../store/audit.ts';
import type { Db } from '../store/db.ts';
import type { User } from '../store/filters.ts';
import { deleteRecords, type Executor, findRecord, insertRecord, listRecords, nameTaken, type RecordRow, type RecordTable, updateRecord } from '../store/records.ts';
import type { Database } from '../store/tables.ts';
import { BulkDelete as BulkDeleteSchema, type recordRoutes } from './schemas.ts';
import { owned, recordKind } from './ownership.ts';

/** What a resource adds to the shared operations. `Body` bodies are schema-valid. */
export interface Spec<Row extends RecordRow> {
  table: RecordTable;
  /** Human name: `filter list`. */
  label: string;
  create: TSchema;
  update: TSchema;
  present(row: Row): Record<string, unknown>;
  /** Fields the creation's response adds to `present` (shown once, e.g. a webhook's signing secret). */
  created?(row: Row): Record<string, unknown>;
  /** Rules beyond the schema (`current` on update); empty when valid. */
  rules?(body: Record<string, unknown>, current?: Row): Invalid[];
  /** Fields the update may not change (besides contractId): 400 naming them when sent different. */
  fixed?: string[];
  /** Checks the resources the body names; throws 404/403/400. */
  references?(db: Db, contractId: string, body: Record<string, unknown>, current?: Row): Promise<void>;
  /** Columns of a new record beyond id, contractId, name, active and the audit fields (`by`: the consumer creating it). */
  columns(body: Record<string, unknown>, by: { id: string; name: string }): Record<string, unknown>;
  /** Columns an update changes, beyond name, active and the audit fields. */
  changes(body: Record<string, unknown>, current: Row): Record<string, unknown>;
  /**
   * Inserts differently (collections derive a slug); returns the new id. Calls `within` with its
   * transaction and the new id once the record is stored (the audit entry, written with it).
   */
  insert?(db: Db, row: RecordRow & Record<string, unknown>, by: string, now: number, within: (trx: Transaction<Database>, id: string) => Promise<void>): Promise<string>;
  /**
   * Narrows the list (query parameters besides `contract_id`, already checked by the route's
   * schema): the column values the listed records must have; throws 404/403 naming the parameter.
   */
  narrow?(db: Db, contractId: string, query: Record<string, unknown>): Promise<Record<string, string>>;
  /** Who still uses these records: each blocks the deletion (409). */
  users?(db: Executor, contractId: string, ids: string[]): Promise<User[]>;
  /** More work in the update transaction, before the change (a customization keeps its previous state). */
  onUpdate?(trx: Transaction<Database>, current: Row, by: string, now: number, body: Record<string, unknown>): Promise<void>;
  /** More work in the delete transaction (a collection's items). */
  onDelete?(trx: Transaction<Database>, contractId: string, ids: string[]): Promise<void>;
  /**
   * Work before the delete transaction, once no user blocks the deletion, in short transactions
   * of its own (a collection's items on SQLite, `drainCollectionItems`): keeps the transaction short.
   */
  beforeDelete?(db: Db, contractId: string, ids: string[]): Promise<unknown>;
}

/** The consumer behind a request, as the audit trail names it. */
export function actorOf(principal: Principal): Actor {
  return { id: principal.consumer.id, name: principal.consumer.name };
}

const isUniqueViolation = (error: unknown) => /UNIQUE|unique/.test(String((error as { code?: string; message?: string }).code ?? '') + String((error as Error).message ?? ''));

function duplicate(label: string, name: string): ApiError {
  return conflictError(`A ${label} named ${name} already exists in this contract.`, 'name', name);
}

/** The route schemas of the six operations (schemas.ts), which type their handlers' requests. */
type Schemas = ReturnType<typeof recordRoutes>;

/** The audit trail's name of each record table's resource (docs/api.md#audit-trail). */
const AUDIT_RESOURCE: Record<RecordTable, string> = {
  collections: 'collection',
  filterLists: 'list',
  filterSets: 'set',
  filterChains: 'chain',
  customizations: 'customization',
  credentials: 'credential',
  webhooks: 'webhook',
};

/**
 * The handlers of the six operations of the module's list for the resource `spec` describes, on
 * `db`; each throws an `ApiError` (answered as the error object, docs/api.md#errors: 400, 401,
 * 403, 404, 409) as the list says.
 */
export function resource<Row extends RecordRow>(db: Db, spec: Spec<Row>) {
  const kind = recordKind<Row>(spec.table, spec.label);
  /** Records a change of record `id` in `trx`, the change's transaction (docs/api.md#audit-trail). */
  const record = (trx: Transaction<Database>, principal: Principal, action: string, contractId: string, id: string, before?: Row, after?: Row) =>
    recordAudit(trx, {
      contractId,
      actor: actorOf(principal),
      resource: AUDIT_RESOURCE[spec.table],
      resourceId: id,
      action,
      before: before && spec.present(before),
      after: after && spec.present(after),
    });
  /** The record with this id if the principal may use its contract: 404 unknown, 403 foreign. */
  const accessible = (principal: Principal, id: string, propertyName = 'id') => owned(db, kind, id, principal, propertyName);

  function validate(schema: TSchema, body: unknown, current?: Row): Record<string, unknown> {
    const found = problems(schema, body);
    if (found.length) throw validationError(found);
    const valid = body as Record<string, unknown>;
    const invalid = spec.rules?.(valid, current) ?? [];
    if (current) {
      for (const field of ['contractId', ...(spec.fixed ?? [])]) {
        const sent = valid[field];
        if (sent !== undefined && sent !== (current as unknown as Record<string, unknown>)[field]) {
          invalid.push({ propertyName: field, message: `${field} cannot be changed`, propertyValue: sent, code: VALIDATION_CODES.format });
        }
      }
    }
    if (invalid.length) throw validationError(invalid);
    return valid;
  }

  /** Deletes the records (all or nothing): 409 naming every user that still needs one. */
  async function remove(principal: Principal, ids: string[], name: (i: number) => string): Promise<void> {
    const rows: Row[] = [];
    for (const [i, id] of ids.entries()) rows.push(await accessible(principal, id, name(i)));
    const byContract = Map.groupBy(rows, (row) => row.contractId);
    /** 409 naming every user that still needs one of the records. */
    const refuseUsed = async (executor: Executor) => {
      const blocked: User[] = [];
      for (const [contractId, group] of byContract) blocked.push(...((await spec.users?.(executor, contractId, group.map((row) => row.id))) ?? []));
      if (blocked.length) {
        throw new ApiError(
          409,
          blocked.map((user) => ({
            name: 'ConflictError',
            message: `${spec.label} ${user.uses} is used by ${user.kind} ${user.id} (${user.name}).`,
            propertyName: name(ids.indexOf(user.uses)),
            propertyValue: user.uses,
            reason: `used by ${user.kind} ${user.id}`,
            code: 4091,
          })),
        );
      }
    };
    if (spec.beforeDelete) {
      await refuseUsed(db);
      for (const [contractId, group] of byContract) await spec.beforeDelete(db, contractId, group.map((row) => row.id));
    }
    await db.transaction().execute(async (trx) => {
      await refuseUsed(trx);
      for (const [contractId, group] of byContract) {
        const groupIds = group.map((row) => row.id);
        await spec.onDelete?.(trx, contractId, groupIds);
        await deleteRecords(trx, spec.table, contractId, groupIds);
        for (const row of group) await record(trx, principal, 'delete', contractId, row.id, row);
      }
    });
  }

  return {
    async create(request: TypedRequest<Schemas['create']>, reply: TypedReply<Schemas['create']>) {
      const principal = await authenticate(db, request);
      const body = validate(spec.create, request.body);
      const contractId = body.contractId as string;
      const name = body.name as string;
      await requireContractAccess(db, principal, contractId);
      await spec.references?.(db, contractId, body);
      if (await nameTaken(db, spec.table, contractId, name)) throw duplicate(spec.label, name);
      const now = Date.now();
      const row = { id: newId(now), contractId, name, active: body.active === false ? 0 : 1, ...spec.columns(body, principal.consumer), ...newRecordFields(principal.consumer.name, now) };
      let id = row.id;
      const created = async (trx: Transaction<Database>, stored: string) => void (await record(trx, principal, 'create', contractId, stored, undefined, await findRecord<Row>(trx, spec.table, contractId, stored)));
      try {
        if (spec.insert) id = await spec.insert(db, row, principal.consumer.name, now, created);
        else {
          await db.transaction().execute(async (trx) => {
            await insertRecord(trx, spec.table, row);
            await created(trx, row.id);
          });
        }
      } catch (error) {
        throw isUniqueViolation(error) ? duplicate(spec.label, name) : error;
      }
      const stored = (await findRecord<Row>(db, spec.table, contractId, id))!;
      return reply.code(201).send({ ...spec.present(stored), ...spec.created?.(stored) });
    },

    async list(request: TypedRequest<Schemas['list']>) {
      const principal = await authenticate(db, request);
      const { contract_id: contractId } = request.query;
      await requireContractAccess(db, principal, contractId, 'contract_id');
      const where = (await spec.narrow?.(db, contractId, request.query as Record<string, unknown>)) ?? {};
      return (await listRecords<Row>(db, spec.table, contractId, where)).map(spec.present);
    },

    async get(request: TypedRequest<Schemas['get']>) {
      const principal = await authenticate(db, request);
      return spec.present(await accessible(principal, request.params.id));
    },

    async update(request: TypedRequest<Schemas['update']>) {
      const principal = await authenticate(db, request);
      const current = await accessible(principal, request.params.id);
      const body = validate(spec.update, request.body, current);
      await spec.references?.(db, current.contractId, body, current);
      const name = (body.name as string | undefined) ?? current.name;
      if (name !== current.name && (await nameTaken(db, spec.table, current.contractId, name, current.id))) throw duplicate(spec.label, name);
      const changes = {
        name,
        ...(body.active !== undefined ? { active: body.active ? 1 : 0 } : {}),
        ...spec.changes(body, current),
        lastModified: iso(),
        lastModifiedBy: principal.consumer.name,
      };
      try {
        await db.transaction().execute(async (trx) => {
          await spec.onUpdate?.(trx, current, principal.consumer.name, Date.now(), body);
          await updateRecord(trx, spec.table, current.contractId, current.id, changes);
          await record(trx, principal, 'update', current.contractId, current.id, current, await findRecord<Row>(trx, spec.table, current.contractId, current.id));
        });
      } catch (error) {
        throw isUniqueViolation(error) ? duplicate(spec.label, name) : error;
      }
      return spec.present((await findRecord<Row>(db, spec.table, current.contractId, current.id))!);
    },

    async remove(request: TypedRequest<Schemas['remove']>, reply: TypedReply<Schemas['remove']>) {
      const principal = await authenticate(db, request);
      await remove(principal, [request.params.id], () => 'id');
      return reply.code(204).send(null);
    },

    async removeMany(request: TypedRequest<Schemas['removeMany']>, reply: TypedReply<Schemas['removeMany']>) {
      const principal = await authenticate(db, request);
      const { ids } = check(BulkDeleteSchema, request.body);
      await remove(principal, [...new Set(ids)], (i) => `ids[${i}]`);
      return reply.code(204).send(null);
    },
  };
}

/** Route options added to the operations that answer with records (create, list, get, update): a `preSerialization` hook. */
export interface RecordRouteOptions {
  preSerialization?: (request: unknown, reply: unknown, payload: unknown) => Promise<unknown>;
}

/**
 * Registers the six operations of `handlers` (`resource`) on `app` under `path`: POST and GET
 * `path`, GET, PATCH and DELETE `path/:id`, DELETE `path` (docs/api.md#record-operations), with
 * the route schemas `schema` (schemas.ts `recordRoutes`, or that with one operation's response
 * changed); `options` go to the operations that answer with records.
 */
export function recordOperations(app: App, path: string, handlers: ReturnType<typeof resource>, schema: Schemas, options: RecordRouteOptions = {}): void {
  app.post(path, { schema: schema.create, ...options }, handlers.create);
  app.get(path, { schema: schema.list, ...options }, handlers.list);
  app.get(`${path}/:id`, { schema: schema.get, ...options }, handlers.get);
  app.patch(`${path}/:id`, { schema: schema.update, ...options }, handlers.update);
  app.delete(`${path}/:id`, { schema: schema.remove }, handlers.remove);
  app.delete(path, { schema: schema.removeMany }, handlers.removeMany);
}
