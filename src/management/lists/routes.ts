/**
 * Filter lists on {api_url} (docs/api.md#filter-lists):
 *
 *   POST   /collection/lists        create → 201
 *   GET    /collection/lists        the contract's lists (contract_id)
 *   GET    /collection/lists/{id}   one list
 *   PATCH  /collection/lists/{id}   name, entries, active (type and contractId fixed)
 *   DELETE /collection/lists/{id}   → 204; 409 while a set uses it
 *   DELETE /collection/lists        {"ids": [...]}, all or nothing → 204
 *
 * The built-in lists (filter/builtin-lists.ts, docs/filters.md#built-in-lists) follow the
 * contract's own in the listing, are read by id by any authenticated caller, and are read-only:
 * a change or delete naming one answers 403 ForbiddenError naming the list.
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { setsUsingLists } from '../../store/filters.ts';
import type { FilterListRow } from '../../store/tables.ts';
import { recordRoutes } from '../schemas.ts';
import { forbiddenError } from '../../errors.ts';
import { BUILT_IN_LISTS, type BuiltInList, builtInList } from '../../filter/builtin-lists.ts';
import { authenticate, noContractToCheck } from '../../http/authenticate.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentList } from './present.ts';
import { checkEntries, List, ListCreate, ListUpdate } from './schema.ts';

const spec: Spec<FilterListRow> = {
  table: 'filterLists',
  label: 'filter list',
  create: ListCreate,
  update: ListUpdate,
  present: presentList,
  fixed: ['type'],
  references: checkEntries,
  columns: (body) => ({ type: body.type, entries: JSON.stringify(body.entries) }),
  changes: (body) => (body.entries ? { entries: JSON.stringify(body.entries) } : {}),
  users: setsUsingLists,
};

/** Registers the module's routes on `app` (see the module's description). */
export function listRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const own = resource(db, spec);
  const schema = recordRoutes('filter lists', List, ListCreate, ListUpdate);
  const readOnly = (list: BuiltInList) => forbiddenError(`The filter list ${list.id} (${list.name}) is built in and read-only.`, 'id', list.id);
  const lists: typeof own = {
    ...own,
    async list(request) {
      return [...(await own.list(request)), ...BUILT_IN_LISTS.map(presentBuiltIn)];
    },
    async get(request) {
      const list = builtInList(request.params.id);
      if (!list) return own.get(request);
      noContractToCheck(await authenticate(db, request));
      return presentBuiltIn(list);
    },
    async update(request) {
      const list = builtInList(request.params.id);
      if (!list) return own.update(request);
      noContractToCheck(await authenticate(db, request));
      throw readOnly(list);
    },
    async remove(request, reply) {
      const list = builtInList(request.params.id);
      if (!list) return own.remove(request, reply);
      noContractToCheck(await authenticate(db, request));
      throw readOnly(list);
    },
    async removeMany(request, reply) {
      const ids = (request.body as { ids?: unknown } | undefined)?.ids;
      const list = Array.isArray(ids) ? ids.map((id) => builtInList(String(id))).find((found) => found !== undefined) : undefined;
      if (!list) return own.removeMany(request, reply);
      noContractToCheck(await authenticate(db, request));
      throw readOnly(list);
    },
  };
  recordOperations(app, '/collection/lists', lists, schema);
}

/** A built-in list as the API presents it: no contract, `builtIn`, its language and version. */
function presentBuiltIn(list: BuiltInList): Record<string, unknown> {
  const since = '2026-12-22T00:00:00.000Z';
  return {
    _id: list.id,
    name: list.name,
    contractId: null,
    type: list.type,
    entries: list.entries,
    builtIn: true,
    language: list.language,
    version: list.version,
    active: true,
    created: since,
    createdBy: list.version,
    lastModified: since,
    lastModifiedBy: list.version,
  };
}
