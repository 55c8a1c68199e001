/**
 * Filter chains on {api_url} (docs/api.md#filter-chains: read and list like the others):
 *
 *   POST   /collection/chains        create → 201 (sets may be empty)
 *   GET    /collection/chains        the contract's chains (contract_id)
 *   GET    /collection/chains/{id}   one chain
 *   PATCH  /collection/chains/{id}   name, sets, active
 *   DELETE /collection/chains/{id}   → 204; 409 while an input, collection or the contract uses it
 *   DELETE /collection/chains        {"ids": [...]}, all or nothing → 204
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { usersOfFilters } from '../../store/filters.ts';
import type { FilterChainRow } from '../../store/tables.ts';
import { recordRoutes } from '../schemas.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentChain } from './present.ts';
import { Chain, ChainCreate, ChainUpdate, checkSetIds } from './schema.ts';

const spec: Spec<FilterChainRow> = {
  table: 'filterChains',
  label: 'filter chain',
  create: ChainCreate,
  update: ChainUpdate,
  present: presentChain,
  references: checkSetIds,
  columns: (body) => ({ sets: JSON.stringify(body.sets) }),
  changes: (body) => (body.sets ? { sets: JSON.stringify(body.sets) } : {}),
  users: usersOfFilters,
};

/** Registers the module's routes on `app` (see the module's description). */
export function chainRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const chains = resource(db, spec);
  const schema = recordRoutes('filter chains', Chain, ChainCreate, ChainUpdate);
  recordOperations(app, '/collection/chains', chains, schema);
}
