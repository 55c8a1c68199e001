/**
 * Collections on {api_url} (docs/api.md#collections):
 *
 *   POST   /collection/collections        create → 201; slug derived, unique in the contract
 *   GET    /collection/collections        the contract's collections (contract_id)
 *   GET    /collection/collections/{id}   one collection
 *   PATCH  /collection/collections/{id}   name, type, filterId (null clears), active, dedupe, retention; slug kept
 *                                         (dedupe: off | url | url+text, url+text on create: docs/api.md#duplicates;
 *                                         retention: {days?, maxItems?}, {} keeps everything: docs/api.md#retention;
 *                                         publication: the wall's settings, refused when a theme's colours
 *                                         fail WCAG 2.2 AA contrast: docs/api.md#publication-settings)
 *   DELETE /collection/collections/{id}   → 204; 409 while inputs belong to it. Its stored
 *                                         content items are deleted with it: on SQLite in short
 *                                         batches first (`drainCollectionItems`), then the rest
 *                                         in the transaction that deletes it.
 *   DELETE /collection/collections        {"ids": [...]}, all or nothing → 204
 *   POST   /collection/collections/{id}/display  {"state": "live" | "paused" | "blank"} → 200, the
 *                                         collection: what its event screens show, stored, audited
 *                                         (action `display`) and sent to open screens by the content
 *                                         stream within a second: docs/api.md#display-controls
 */
import type { Static } from 'typebox';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import type { Config } from '../../config.ts';
import { type DisplayState, normalizeSettings, type PublicationSettings, settingsProblems } from '../../lib/publication-settings.ts';
import { recordAudit } from '../../store/audit.ts';
import { createCollection, DEFAULT_DEDUPE, deleteCollectionItems, drainCollectionItems, findCollection, usersOfCollections, setDisplayState } from '../../store/collections.ts';
import type { Db } from '../../store/db.ts';
import type { CollectionRow } from '../../store/tables.ts';
import { IdParams, recordRoutes, TokenQuery } from '../schemas.ts';
import { COLLECTION, FILTER, owned } from '../ownership.ts';
import { actorOf, recordOperations, resource, type Spec } from '../resource.ts';
import { presentCollection } from './present.ts';
import { Collection, CollectionCreate, CollectionUpdate, DisplayControl } from './schema.ts';

/** The columns of a schema-valid `retention` object: an absent limit is null (none). */
function retentionColumns(retention: unknown): { retentionDays: number | null; retentionMaxItems: number | null } {
  const { days, maxItems } = (retention ?? {}) as { days?: number; maxItems?: number };
  return { retentionDays: days ?? null, retentionMaxItems: maxItems ?? null };
}

/** The column of schema-valid settings: JSON of their normal form, null for `{}` (none). */
function publicationColumn(publication: unknown): string | null {
  const settings = normalizeSettings((publication ?? {}) as PublicationSettings);
  return Object.keys(settings).length ? JSON.stringify(settings) : null;
}

const spec: Spec<CollectionRow> = {
  table: 'collections',
  label: 'collection',
  create: CollectionCreate,
  update: CollectionUpdate,
  present: presentCollection,
  rules: (body) => (body.publication !== undefined ? settingsProblems(body.publication as PublicationSettings) : []),
  references: async (db, contractId, body) => {
    if (typeof body.filterId === 'string') await owned(db, FILTER, body.filterId, contractId, 'filterId');
  },
  columns: (body) => ({ type: body.type ?? 'realtime', filterId: body.filterId ?? null, dedupe: body.dedupe ?? DEFAULT_DEDUPE, ...retentionColumns(body.retention), publication: publicationColumn(body.publication) }),
  changes: (body) => ({
    ...(body.retention !== undefined ? retentionColumns(body.retention) : {}),
    ...(body.type !== undefined ? { type: body.type } : {}),
    ...(body.filterId !== undefined ? { filterId: body.filterId } : {}),
    ...(body.dedupe !== undefined ? { dedupe: body.dedupe } : {}),
    ...(body.publication !== undefined ? { publication: publicationColumn(body.publication) } : {}),
  }),
  insert: async (db, row, by, now, within) => {
    const fields = { name: row.name, type: row.type as string, filterId: row.filterId as string | null, active: row.active, dedupe: row.dedupe as string };
    const retention = { retentionDays: row.retentionDays as number | null, retentionMaxItems: row.retentionMaxItems as number | null };
    return (await createCollection(db, row.contractId, { ...fields, ...retention, publication: row.publication as string | null }, by, now, within)).id;
  },
  users: usersOfCollections,
  beforeDelete: drainCollectionItems,
  onDelete: deleteCollectionItems,
};

const displaySchema = {
  tags: ['collections'],
  summary: "Set what the collection's event screens show: live, paused (hold what is shown) or blank (a holding card); open screens follow within a second",
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: TokenQuery,
  body: handlerValidated(DisplayControl),
  response: { 200: Collection, ...errorResponses(400, 401, 403, 404) },
};

/** Registers the module's routes on `app` (see the module's description). */
export function collectionRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const collections = resource(db, spec);
  const schema = recordRoutes('collections', Collection, CollectionCreate, CollectionUpdate);
  recordOperations(app, '/collection/collections', collections, schema);

  // The display control (docs/api.md#display-controls): stored, so a screen opened later knows it;
  // the content stream polls it with the collection's version and tells every open screen.
  app.post('/collection/collections/:id/display', { schema: displaySchema }, async (request) => {
    const principal = await authenticate(db, request);
    const current = await owned(db, COLLECTION, request.params.id, principal);
    const { state } = check(DisplayControl, request.body) as { state: DisplayState };
    await db.transaction().execute(async (trx) => {
      const before = await setDisplayState(trx, current.contractId, current.id, state);
      const entry = { contractId: current.contractId, actor: actorOf(principal), resource: 'collection', resourceId: current.id, action: 'display' };
      await recordAudit(trx, { ...entry, before: { displayState: before }, after: { displayState: state } });
    });
    return presentCollection((await findCollection(db, current.contractId, current.id))!) as Static<typeof Collection>;
  });
}
