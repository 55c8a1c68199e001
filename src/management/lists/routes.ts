/**
 * Filter lists on {api_url} (docs/api.md#filter-lists):
 *
 *   POST   /collection/lists        create → 201
 *   GET    /collection/lists        the contract's lists (contract_id)
 *   GET    /collection/lists/{id}   one list
 *   PATCH  /collection/lists/{id}   name, entries, active (type and contractId fixed)
 *   DELETE /collection/lists/{id}   → 204; 409 while a set uses it
 *   DELETE /collection/lists        {"ids": [...]}, all or nothing → 204
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { setsUsingLists } from '../../store/filters.ts';
import type { FilterListRow } from '../../store/tables.ts';
import { recordRoutes } from '../docs.ts';
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
  const lists = resource(db, spec);
  const schema = recordRoutes('filter lists', List, ListCreate, ListUpdate);
  recordOperations(app, '/collection/lists', lists, schema);
}
