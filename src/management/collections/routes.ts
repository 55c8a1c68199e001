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
 */
import type { App } from '../../http/typed.ts';
import type { Config } from '../../config.ts';
import { normalizeSettings, type PublicationSettings, settingsProblems } from '../../lib/publication-settings.ts';
import { createCollection, DEFAULT_DEDUPE, deleteCollectionItems, drainCollectionItems, inputsOfCollections } from '../../store/collections.ts';
import type { Db } from '../../store/db.ts';
import type { CollectionRow } from '../../store/tables.ts';
import { recordRoutes } from '../docs.ts';
import { FILTER, owned } from '../ownership.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentCollection } from './present.ts';
import { Collection, CollectionCreate, CollectionUpdate } from './schema.ts';

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
  users: inputsOfCollections,
  beforeDelete: drainCollectionItems,
  onDelete: deleteCollectionItems,
};

/** Registers the module's routes on `app` (see the module's description). */
export function collectionRoutes(app: App, { db }: { db: Db; config: Config }): void {
  const collections = resource(db, spec);
  const schema = recordRoutes('collections', Collection, CollectionCreate, CollectionUpdate);
  recordOperations(app, '/collection/collections', collections, schema);
}
