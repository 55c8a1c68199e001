/**
 * Stored content items as rows (docs/api.md#content-item, docs/api.md#item-state): the shared
 * types of an item's row (its state, key, document, hold) and the row made into the content item
 * served to the public or a moderator. An item is stored once per collection, keyed by its id
 * (`<service>_<native id>`), kept as a JSON document beside the columns that reads filter and
 * sort on. The other modules of store/items/ write, read, moderate and stream these rows, every
 * statement with the tenant's term of this module (`ofContract`).
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { type ContentItem, inShape } from '../../item.ts';
import { inertHtml, inertItem, plainTitle } from '../../lib/item-html.ts';
import { parseModeration, withEdit } from '../item-moderation.ts';
import type { ItemRow } from '../tables.ts';

/** The states a moderator sets (docs/api.md#item-state). */
export type ItemState = 'published' | 'unpublished';
/** The states a stored item may be in: a moderator's, or `removed` at the source (store/removals.ts, docs/api.md#removed-at-the-source), which no moderation changes. */
export type StoredState = ItemState | 'removed';

/**
 * The tenant term every statement of store/items/ carries (issue 31, tenant in every query): true
 * only when contract `contractId` owns collection `collectionId`, so a caller that passes another
 * contract's collection reads and changes nothing. An uncorrelated EXISTS on the collections'
 * primary key, evaluated once per statement (SQLite runs it once, PostgreSQL as a one-time
 * filter): the statement keeps the index path its own terms choose (the read indexes of
 * migration 2026-11-29-read-indexes hold no `contract_id`), and the term fits the tables without
 * a contract column (`item_urls`, `item_prints`, `item_duplicates`). `ofContractSql` is the same
 * term for SQL written as text.
 */
export function ofContract(contractId: string, collectionId: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from collections where collections.id = ${collectionId} and collections.contract_id = ${contractId})`;
}

/** `ofContract` as SQL text, its two values bound through `bind` in order (store/items/read-sql.ts `ReadSql`). */
export function ofContractSql(bind: (value: unknown) => string, contractId: string, collectionId: string): string {
  return `exists (select 1 from collections where collections.id = ${bind(collectionId)} and collections.contract_id = ${bind(contractId)})`;
}

/** Rows per INSERT statement (well under the bound-parameter limits of SQLite and PostgreSQL). */
export const BATCH = 200;

export interface StoreTarget {
  collectionId: string;
  contractId: string;
  inputId: string;
  state: ItemState;
  /** Items a holding filter set held for review, by id: stored unpublished with `held`, whatever `state` (docs/filters.md#hold-for-review). */
  held?: ReadonlyMap<string, Held>;
}

/**
 * Why an item is held for review (docs/filters.md#hold-for-review): the holding set (`id` null
 * for an unsaved set), the index of its rule and the reason, as the filter decided.
 */
export interface Held {
  set: { id: string | null; name: string };
  rule: number;
  reason: string;
}

/** What identifies a stored item's current version: enough to find its serialized form in a cache. */
export type ItemKey = Pick<ItemRow, 'collectionId' | 'id' | 'seq' | 'state'>;

/**
 * What a page read returns of each item: its document and state, all `rowToItem` needs. The
 * other fifteen columns are left in the table: creating them cost a page of 20 items about 40 µs
 * of the 90 its read took on SQLite (bench:content).
 */
export type ItemDocument = Pick<ItemRow, 'body' | 'state'> & Partial<Pick<ItemRow, 'pinPosition' | 'moderation' | 'held' | 'removed'>>;

/**
 * A stored item document: JSON text on SQLite, already parsed on PostgreSQL, where the column is
 * `jsonb` (migration 2026-11-23-items-jsonb).
 */
export function itemBody(body: unknown): ContentItem {
  return (typeof body === 'string' ? JSON.parse(body) : body) as ContentItem;
}

/** What `items.removed` holds (migration 2026-12-25-removed-state): when (ISO 8601), why, and the state before. */
export interface Removal {
  at: string;
  reason: NonNullable<ContentItem['removedReason']>;
  state: ItemState;
}

/** The stored `items.removed` text as a `Removal`, or undefined (null, or unreadable). */
export function removalOf(text: string | null | undefined): Removal | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Removal;
    return typeof value?.at === 'string' && typeof value.reason === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Who reads an item: the public (content reads, the wall, the public stream) or a moderator (queue reads and stream). */
export type Audience = 'public' | 'moderator';

/**
 * The stored row as the content item served (docs/api.md#content-item), with its state, in shape
 * whatever version stored it (`inShape`: `children` an array, `url` a string), with a moderator's
 * edit laid over it, and inert: no script, event handler or non-web URL, whatever the source or
 * the edit sent (`lib/item-html.ts`). Every item carries `pinned`, and `position` when pinned,
 * `spotlight` when set (docs/api.md#pin-and-spotlight); a moderator's item also `edited`, and the
 * source's title and text as `original` when edited (docs/api.md#edit-an-item).
 */
export function rowToItem(row: ItemDocument): ContentItem {
  return served(row, 'public');
}

/** `rowToItem` as a moderator reads it (queue reads and stream): with `edited`, and `original` when edited. */
export function rowToModeratorItem(row: ItemDocument): ContentItem {
  return served(row, 'moderator');
}

function served(row: ItemDocument, audience: Audience): ContentItem {
  const source = inShape({ ...itemBody(row.body), state: row.state as StoredState });
  const moderation = parseModeration(row.moderation);
  const item = inertItem(moderation.edit ? withEdit(source, moderation.edit) : source);
  const position = row.pinPosition == null ? undefined : Number(row.pinPosition);
  item.pinned = position !== undefined;
  if (position !== undefined) item.position = position;
  if (moderation.spotlight) item.spotlight = true;
  if (audience === 'moderator') {
    const removal = removalOf(row.removed);
    if (removal) Object.assign(item, { removedAt: removal.at, removedReason: removal.reason });
    item.edited = moderation.edit !== undefined;
    if (row.held) item.held = JSON.parse(row.held) as Held;
    if (moderation.edit) item.original = { ...(source.title !== undefined && { title: plainTitle(source.title) }), text: inertHtml(source.text) };
  }
  return item;
}
