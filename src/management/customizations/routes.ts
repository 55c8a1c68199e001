/**
 * Customizations on {api_url} (docs/api.md#customizations):
 *
 *   POST   /publication/customizations        create → 201 (version defaults to "1")
 *   GET    /publication/customizations        the contract's customizations (contract_id), or
 *                                             one collection's (collection_id)
 *   GET    /publication/customizations/{id}   one customization
 *   PATCH  /publication/customizations/{id}   name, version, data, description, active,
 *                                             collectionId (null: the whole contract);
 *                                             version incremented unless sent
 *   DELETE /publication/customizations/{id}   → 204
 *   DELETE /publication/customizations        {"ids": [...]}, all or nothing → 204
 *   GET    /publication/customizations/{id}/versions   earlier states, newest first (count, offset)
 *
 * Every PATCH stores the state it replaces as a version in its own transaction (docs/api.md
 * "Customization versions"); a restore is a PATCH with an old version's fields, which keeps the
 * state it replaces in turn. Versions go with their customization (ON DELETE CASCADE).
 *
 * A `collectionId` must name a collection of the customization's contract (unknown → 404,
 * another contract's → 403, naming `collectionId`); only that collection's walls apply it
 * (publication/customizations.ts).
 */
import { Type } from 'typebox';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { keepVersion, listVersions } from '../../store/customization-versions.ts';
import type { CustomizationRow } from '../../store/tables.ts';
import { IdParams, recordRoutes } from '../schemas.ts';
import { COLLECTION, owned, recordKind } from '../ownership.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentCustomization, presentVersion } from './present.ts';
import { Customization, CustomizationCreate, CustomizationListQuery, CustomizationUpdate, CustomizationVersion, dataProblems, nextVersion, VersionsQuery } from './schema.ts';

const spec: Spec<CustomizationRow> = {
  table: 'customizations',
  label: 'customization',
  create: CustomizationCreate,
  update: CustomizationUpdate,
  present: presentCustomization,
  fixed: ['type'],
  rules: dataProblems,
  references: async (db, contractId, body) => {
    if (typeof body.collectionId === 'string') await owned(db, COLLECTION, body.collectionId, contractId, 'collectionId');
  },
  narrow: async (db, contractId, query): Promise<Record<string, string>> => {
    if (typeof query.collection_id !== 'string') return {};
    await owned(db, COLLECTION, query.collection_id, contractId, 'collection_id');
    return { collectionId: query.collection_id };
  },
  columns: (body) => ({ type: body.type, data: body.data, version: body.version ?? '1', description: body.description ?? null, collectionId: body.collectionId ?? null }),
  changes: (body, current) => ({
    version: (body.version as string | undefined) ?? nextVersion(current.version),
    ...(body.data !== undefined ? { data: body.data } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.collectionId !== undefined ? { collectionId: body.collectionId } : {}),
  }),
  onUpdate: (trx, current, by, now) => keepVersion(trx, current, by, now),
};

const CUSTOMIZATION = recordKind<CustomizationRow>('customizations', 'customization');

const versionsSchema = {
  tags: ['customizations'],
  summary: 'Earlier versions of a customization, newest first (each update keeps the state it replaces)',
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: VersionsQuery,
  response: { 200: Type.Array(CustomizationVersion), ...errorResponses(400, 401, 403, 404) },
};

/** Registers the module's routes on `app` (see the module's description). */
export function customizationRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const customizations = resource(db, spec);
  const records = recordRoutes('customizations', Customization, CustomizationCreate, CustomizationUpdate);
  const schema = { ...records, list: { ...records.list, querystring: CustomizationListQuery } };
  recordOperations(app, '/publication/customizations', customizations, schema);
  app.get('/publication/customizations/:id/versions', { schema: versionsSchema }, async (request) => {
    const principal = await authenticate(db, request);
    const current = await owned(db, CUSTOMIZATION, request.params.id, principal);
    const { count = 20, offset = 0 } = request.query;
    return (await listVersions(db, current.contractId, current.id, { count, offset })).map(presentVersion);
  });
}
