/**
 * Filter sets on {api_url} (docs/api.md#filter-sets, docs/filters.md#rules):
 *
 *   POST   /collection/sets        create → 201 (rules and preCondition validated)
 *   GET    /collection/sets        the contract's sets (contract_id)
 *   GET    /collection/sets/{id}   one set
 *   PATCH  /collection/sets/{id}   name, rules, preCondition, or, action, active (partial)
 *   DELETE /collection/sets/{id}   → 204; 409 while a chain, input, collection or the contract uses it
 *   DELETE /collection/sets        {"ids": [...]}, all or nothing → 204
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { chainsUsingSets, usersOfFilters } from '../../store/filters.ts';
import type { Executor } from '../../store/records.ts';
import type { FilterSetRow } from '../../store/tables.ts';
import { recordRoutes } from '../schemas.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentSet } from './present.ts';
import { checkSet, FilterSet, SetCreate, SetUpdate } from './schema.ts';

const spec: Spec<FilterSetRow> = {
  table: 'filterSets',
  label: 'filter set',
  create: SetCreate,
  update: SetUpdate,
  present: presentSet,
  references: checkSet,
  columns: (body) => ({ rules: JSON.stringify(body.rules), preCondition: JSON.stringify(body.preCondition), anyRule: body.or === true ? 1 : 0, action: body.action === 'hold' ? 'hold' : 'reject' }),
  changes: (body) => ({
    ...(body.rules ? { rules: JSON.stringify(body.rules) } : {}),
    ...(body.preCondition ? { preCondition: JSON.stringify(body.preCondition) } : {}),
    ...(body.or !== undefined ? { anyRule: body.or ? 1 : 0 } : {}),
    ...(body.action !== undefined ? { action: body.action === 'hold' ? 'hold' : 'reject' } : {}),
  }),
  users: async (db: Executor, contractId: string, ids: string[]) => [...(await chainsUsingSets(db, contractId, ids)), ...(await usersOfFilters(db, contractId, ids))],
};

/** Registers the module's routes on `app` (see the module's description). */
export function setRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const sets = resource(db, spec);
  const schema = recordRoutes('filter sets', FilterSet, SetCreate, SetUpdate);
  recordOperations(app, '/collection/sets', sets, schema);
}
