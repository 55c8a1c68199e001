/**
 * Customizations on {api_url} (interface §4.6, decisions §5):
 *
 *   POST   /publication/customizations        create → 201 (version defaults to "1")
 *   GET    /publication/customizations        the contract's customizations (contract_id)
 *   GET    /publication/customizations/{id}   one customization
 *   PATCH  /publication/customizations/{id}   name, version, data, description, active;
 *                                             version incremented unless sent
 *   DELETE /publication/customizations/{id}   → 204
 *   DELETE /publication/customizations        {"ids": [...]}, all or nothing → 204
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import type { CustomizationRow } from '../../store/tables.ts';
import { recordRoutes } from '../docs.ts';
import { resource, type Spec } from '../resource.ts';
import { presentCustomization } from './present.ts';
import { Customization, CustomizationCreate, CustomizationUpdate, dataProblems, nextVersion } from './schema.ts';

const spec: Spec<CustomizationRow> = {
  table: 'customizations',
  label: 'customization',
  create: CustomizationCreate,
  update: CustomizationUpdate,
  present: presentCustomization,
  fixed: ['type'],
  rules: dataProblems,
  columns: (body) => ({ type: body.type, data: body.data, version: body.version ?? '1', description: body.description ?? null }),
  changes: (body, current) => ({
    version: (body.version as string | undefined) ?? nextVersion(current.version),
    ...(body.data !== undefined ? { data: body.data } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
  }),
};

export function customizationRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const customizations = resource(db, spec);
  const schema = recordRoutes('customizations', Customization, CustomizationCreate, CustomizationUpdate);
  app.post('/publication/customizations', { schema: schema.create }, customizations.create);
  app.get('/publication/customizations', { schema: schema.list }, customizations.list);
  app.get('/publication/customizations/:id', { schema: schema.get }, customizations.get);
  app.patch('/publication/customizations/:id', { schema: schema.update }, customizations.update);
  app.delete('/publication/customizations/:id', { schema: schema.remove }, customizations.remove);
  app.delete('/publication/customizations', { schema: schema.removeMany }, customizations.removeMany);
}
