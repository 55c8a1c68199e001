/**
 * Content items in the queue of a collection (docs/api.md#content-item, docs/api.md#item-state). An
 * item is stored once per collection, keyed by its id (`<service>_<native id>`); the item itself is
 * kept as a JSON document beside the columns that reads filter and sort on. With the collection's
 * `dedupe` on, an item that repeats a card (same canonical URL, or near-same text) is merged into
 * it instead (docs/api.md#duplicates).
 *
 * Every insert and moderation bumps the collection's `version` in the same transaction and
 * stamps the touched items with it (`seq`), so any process can tell cheaply whether a
 * collection changed (page cache) and what changed (event streams).
 */
import { CompiledQuery, type Transaction, sql } from 'kysely';
import { type ContentItem, type Duplicate, inShape } from '../item.ts';
import { inertHtml, inertItem, plainTitle } from '../lib/item-html.ts';
import { boundingBox, EARTH_RADIUS_M } from '../lib/geo.ts';
import { DEDUPE_MODES, type DedupeMode, type ItemKeys, PRINT_SPACES, printRows, probeRows, type Signature, TEXT_WINDOW_MS, textKeys, titlePrinted, urlKeys } from '../lib/item-keys.ts';
import { bandRows, fromBandRow, hamming, NEAR_BITS, type SimHash, SPACE_KEYS, spaceOf } from '../lib/simhash.ts';
import { trendingScore } from '../lib/ranking.ts';
import { type Actor, type AuditItem, auditItems, changedSince, findAuditEntry, markReverted, recordAudit } from './audit.ts';
import { insertNew, insertNewKeys } from './batch.ts';
import { type Db, isPostgres, serializable } from './db.ts';
import { type ItemEdit, type ItemModeration, moderationText, parseModeration, type PinState, reorderPins, withEdit } from './item-moderation.ts';
import { emitEvents, itemSubject } from './outbox.ts';
import type { Database, ItemRow } from './tables.ts';

/** The states a moderator sets (docs/api.md#item-state). */
export type ItemState = 'published' | 'unpublished';
/** The states a stored item may be in: a moderator's, or `removed` at the source (store/removals.ts, docs/api.md#removed-at-the-source), which no moderation changes. */
export type StoredState = ItemState | 'removed';

/** Rows per INSERT statement (well under the bound-parameter limits of SQLite and PostgreSQL). */
const BATCH = 200;

/** Bumps the collection's version inside `trx`; returns the new version. */
export async function bumpVersion(trx: Transaction<Database>, collectionId: string): Promise<number> {
  const row = await trx
    .updateTable('collections')
    .set({ version: sql<number>`version + 1` })
    .where('id', '=', collectionId)
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

/**
 * The ids among `ids` that the collection already holds (any number of ids; asked in batches):
 * its items and the duplicates merged into them (docs/api.md#duplicates), so the collector
 * neither judges nor stores either again.
 */
export async function storedItemIds(db: Db | Transaction<Database>, collectionId: string, ids: string[]): Promise<Set<string>> {
  const known = await cardIds(db, collectionId, ids);
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await db.selectFrom('itemDuplicates').select('id').where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    for (const row of rows) known.add(row.id);
  }
  return known;
}

/**
 * The ids among `ids` of the collection's items (cards; not the duplicates merged into them).
 * With `live`, only cards that can take duplicates: not those removed at the source
 * (store/removals.ts), whose de-duplication keys a removal may not all find again.
 */
async function cardIds(db: Db | Transaction<Database>, collectionId: string, ids: string[], live = false): Promise<Set<string>> {
  const known = new Set<string>();
  for (let i = 0; i < ids.length; i += BATCH) {
    let query = db.selectFrom('items').select('id').where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + BATCH));
    if (live) query = query.where('state', '!=', 'removed');
    const rows = await query.execute();
    for (const row of rows) known.add(row.id);
  }
  return known;
}

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

/** The row of a new item. */
function itemRow(target: StoreTarget, item: ContentItem, seq: number, now: number) {
  const { state: _ignored, ...body } = item;
  const held = target.held?.get(item.id);
  const state = held ? 'unpublished' : target.state;
  return {
    collectionId: target.collectionId,
    id: item.id,
    contractId: target.contractId,
    inputId: target.inputId,
    service: item.service,
    type: item.type,
    state,
    held: held ? JSON.stringify(held) : null,
    dateMs: Date.parse(item.date),
    score: item.kudos.score,
    trend: trendingScore(item.kudos.score, Date.parse(item.date)),
    language: item.language ?? null,
    latitude: item.location?.latitude ?? null,
    longitude: item.location?.longitude ?? null,
    // Unpublished arrivals are not news to streams (and their ids stay private) until moderated.
    seq: state === 'published' ? seq : 0,
    body: JSON.stringify(body),
    createdAt: now,
  };
}

/**
 * Stores the items not yet in the collection, in state `state`; returns how many were new
 * (cards and duplicates merged into cards). Items already stored (by id) are left untouched,
 * moderation included; `known` are the ids the caller already found stored in this transaction
 * (`storedItemIds`), else they are asked here. An item is stored with the language it has: the
 * collector detects a missing one before filtering (`lib/language.ts`), so the queue shows what
 * the filter saw. With the collection's `dedupe` on, a duplicate of a card is merged into it
 * (`storeDeduplicated`). `seen` are items the caller found already stored: a card among them
 * whose title, text or media changed at the source is updated (`applyEdits`).
 */
export async function storeItems(trx: Transaction<Database>, target: StoreTarget, items: ContentItem[], now = Date.now(), known?: Set<string>, seen: ContentItem[] = []): Promise<number> {
  return (await storeNewItems(trx, target, items, now, known, seen)).added;
}

/**
 * `storeItems` that also tells which items became new cards of the collection (`cards`, ids in
 * the order given; not the duplicates merged into cards): what the collector reports as
 * `item.collected` (docs/api.md#webhook-events).
 */
export async function storeNewItems(
  trx: Transaction<Database>,
  target: StoreTarget,
  items: ContentItem[],
  now = Date.now(),
  known?: Set<string>,
  seen: ContentItem[] = [],
): Promise<{ added: number; cards: string[] }> {
  const stored = known ?? (await storedItemIds(trx, target.collectionId, items.map((item) => item.id)));
  const fresh = [...new Map(items.filter((item) => !stored.has(item.id)).map((item) => [item.id, item])).values()];
  let seq: number | undefined;
  const version = async () => (seq ??= await bumpVersion(trx, target.collectionId));
  let result = { added: 0, cards: [] as string[] };
  if (fresh.length) {
    const mode = await dedupeMode(trx, target.collectionId);
    if (mode === 'off') {
      const at = await version();
      const cards = await insertNewKeys(trx, 'items', fresh.map((item) => itemRow(target, item, at, now)), ['collectionId', 'id'], BATCH, 'id');
      result = { added: cards.length, cards };
    } else {
      result = await storeDeduplicated(trx, target, fresh, mode, version, now);
    }
  }
  if (seen.length) await applyEdits(trx, target.collectionId, seen, version);
  return result;
}

/** The collection's de-duplication mode (`off` for an unknown collection). */
async function dedupeMode(trx: Transaction<Database>, collectionId: string): Promise<DedupeMode> {
  const row = await trx.selectFrom('collections').select('dedupe').where('id', '=', collectionId).executeTakeFirst();
  return (DEDUPE_MODES as readonly string[]).includes(row?.dedupe ?? '') ? (row!.dedupe as DedupeMode) : 'off';
}

interface Candidate {
  itemId: string;
  dateMs: number;
  simhash: SimHash;
  /** The space the card is indexed in (lib/item-keys.ts `PRINT_SPACES`). */
  space: number;
}

/**
 * Stores `fresh` (new to the collection) with de-duplication (docs/api.md#duplicates): each item
 * either becomes a card or is merged into the card of an earlier item with one of its canonical
 * URLs or, in mode `url+text`, one of its fingerprints within `NEAR_BITS` of a card's indexed
 * one, dated within `TEXT_WINDOW_MS`.
 * Every check is an indexed lookup, a few statements per batch of items: the URL hashes through
 * the primary key of `item_urls`, the fingerprints through that of `item_prints`
 * (`nearCandidates`), which return only the near cards.
 * A new card claims its URL hashes before it is inserted (ON CONFLICT DO NOTHING): when another
 * transaction claimed one first (two collectors storing the same story at once; PostgreSQL waits
 * for that transaction), the item is merged into that card instead. Returns how many items were
 * stored or merged, and the ids of the new cards.
 */
async function storeDeduplicated(
  trx: Transaction<Database>,
  target: StoreTarget,
  fresh: ContentItem[],
  mode: DedupeMode,
  version: () => Promise<number>,
  now: number,
): Promise<{ added: number; cards: string[] }> {
  const { collectionId } = target;
  const keyed = fresh.map((item) => ({ item, keys: urlKeys(item), dateMs: Date.parse(item.date) }));
  const owners = await urlOwners(trx, collectionId, [...new Set(keyed.flatMap((k) => k.keys.urlHashes))]);
  // An item whose URL a card already owns is merged whatever its text: its fingerprints are not computed.
  const printed = mode === 'url+text' ? keyed.filter((k) => !k.keys.urlHashes.some((hash) => owners.has(hash))) : [];
  // The spaces that hold cards: the collection's, and whole texts when an item of this batch may become a card indexed by one.
  const spaces = printed.length ? await indexedSpaces(trx, collectionId) : new Set<number>();
  const cardSpaces = new Set([...spaces, ...(printed.some((k) => !titlePrinted(k.item)) ? [PRINT_SPACES.text] : [])]);
  for (const k of printed) Object.assign(k.keys, textKeys(k.item, cardSpaces));
  // Candidates by band: a near fingerprint shares at least one band (pigeonhole), so only those are compared.
  const byBand = new Map<number, Candidate[]>();
  const index = (c: Candidate) => {
    for (const { key } of bandRows(c.simhash, c.space)) {
      const bucket = byBand.get(key);
      if (bucket) bucket.push(c);
      else byBand.set(key, [c]);
    }
  };
  for (const c of await nearCandidates(trx, collectionId, keyed, spaces)) index(c);
  const near = (signatures: Signature[], dateMs: number) => {
    for (const s of signatures) {
      for (const { key } of probeRows(s)) {
        const found = byBand.get(key)?.find((c) => Math.abs(c.dateMs - dateMs) <= TEXT_WINDOW_MS && hamming(s.simhash, c.simhash) <= NEAR_BITS);
        if (found) return found.itemId;
      }
    }
    return undefined;
  };

  const cards: typeof keyed = [];
  const merged: { item: ContentItem; cardId: string; urlHashes: string[] }[] = [];
  for (const k of keyed) {
    const cardId = k.keys.urlHashes.map((hash) => owners.get(hash)).find(Boolean) ?? near(k.keys.signatures, k.dateMs);
    if (cardId) {
      merged.push({ item: k.item, cardId, urlHashes: k.keys.urlHashes });
      for (const hash of k.keys.urlHashes) if (!owners.has(hash)) owners.set(hash, cardId);
      continue;
    }
    cards.push(k);
    for (const hash of k.keys.urlHashes) owners.set(hash, k.item.id);
    if (k.keys.indexed) index({ itemId: k.item.id, dateMs: k.dateMs, ...k.keys.indexed });
  }

  // Claim the new cards' URL hashes; a card that lost its first hash to another writer merges.
  const claims = cards.flatMap((k) => k.keys.urlHashes.map((urlHash) => ({ collectionId, urlHash, itemId: k.item.id })));
  const claimed = new Set(await insertNewKeys(trx, 'itemUrls', claims, ['collectionId', 'urlHash'], BATCH, 'urlHash'));
  const lost = cards.filter((k) => k.keys.urlHashes.length > 0 && !claimed.has(k.keys.urlHashes[0]!));
  if (lost.length) {
    const winners = await urlOwners(trx, collectionId, lost.map((k) => k.keys.urlHashes[0]!));
    for (const k of lost) {
      const cardId = winners.get(k.keys.urlHashes[0]!);
      if (cardId && cardId !== k.item.id) merged.push({ item: k.item, cardId, urlHashes: k.keys.urlHashes });
    }
  }
  const lostIds = new Set(lost.map((k) => k.item.id));
  const stay = cards.filter((k) => !lostIds.has(k.item.id));

  const seq = await version();
  const inserted = await insertNewKeys(trx, 'items', stay.map((k) => itemRow(target, k.item, seq, now)), ['collectionId', 'id'], BATCH, 'id');
  let added = inserted.length;
  // A card another writer stored meanwhile (same id) has its rows already.
  await insertPrints(trx, collectionId, stay.flatMap(({ item, keys, dateMs }) => printRows(keys).map(({ key, rest }) => ({ key, itemId: item.id, dateMs, rest }))));
  if (merged.length) added += await mergeDuplicates(trx, target, merged, seq, now);
  return { added, cards: inserted };
}

/**
 * The cards owning the URL hashes among `hashes` (primary key lookups, in batches). A row whose
 * card is gone — a key that retention could not find again from the card's document
 * (`deleteCardKeys`) — is deleted and its hash is free.
 */
async function urlOwners(trx: Transaction<Database>, collectionId: string, hashes: string[]): Promise<Map<string, string>> {
  const rows: { urlHash: string; itemId: string }[] = [];
  for (let i = 0; i < hashes.length; i += BATCH) {
    rows.push(...(await trx.selectFrom('itemUrls').select(['urlHash', 'itemId']).where('collectionId', '=', collectionId).where('urlHash', 'in', hashes.slice(i, i + BATCH)).execute()));
  }
  const live = await cardIds(trx, collectionId, [...new Set(rows.map((row) => row.itemId))], true);
  const stale = rows.filter((row) => !live.has(row.itemId)).map((row) => row.urlHash);
  for (let i = 0; i < stale.length; i += BATCH) await trx.deleteFrom('itemUrls').where('collectionId', '=', collectionId).where('urlHash', 'in', stale.slice(i, i + BATCH)).execute();
  return new Map(rows.filter((row) => live.has(row.itemId)).map((row) => [row.urlHash, row.itemId]));
}

/**
 * Deletes the de-duplication keys of cards being deleted (retention, docs/api.md#retention):
 * their URL hashes and those of the duplicates merged into them (`duplicates`, from
 * `item_duplicates`), and the band rows of their fingerprints, all computed again from the
 * documents and deleted by primary key. What cannot be found again so (the fingerprint of a card's
 * earlier version, keys of an older canonical form) stays; lookups skip keys of cards that are
 * gone (`urlOwners`, `nearCandidates`).
 */
export async function deleteCardKeys(
  trx: Transaction<Database>,
  collectionId: string,
  cards: { id: string; body: unknown; dateMs: number | string }[],
  duplicates: { cardId: string; body: string }[],
): Promise<void> {
  const ids = cards.map((card) => card.id);
  const hashes = new Set<string>();
  for (const card of cards) for (const hash of urlKeys(itemBody(card.body)).urlHashes) hashes.add(hash);
  for (const duplicate of duplicates) for (const hash of urlKeys(JSON.parse(duplicate.body) as ContentItem).urlHashes) hashes.add(hash);
  const list = [...hashes];
  for (let i = 0; i < list.length; i += BATCH) {
    // Only rows these cards own: a hash computed here may belong to another card.
    await trx.deleteFrom('itemUrls').where('collectionId', '=', collectionId).where('urlHash', 'in', list.slice(i, i + BATCH)).where('itemId', 'in', ids).execute();
  }
  for (const card of cards) {
    const keys = printRows(textKeys(inShape(itemBody(card.body)))).map((row) => row.key);
    if (keys.length) await trx.deleteFrom('itemPrints').where('collectionId', '=', collectionId).where('bandKey', 'in', keys).where('dateMs', '=', Number(card.dateMs)).where('itemId', '=', card.id).execute();
  }
}

/**
 * Rows as one bound parameter, read back as a SELECT of their columns in order: a JSON array
 * through `json_each` on SQLite, one array per column (of PostgreSQL type `types[i]`) through
 * `unnest` on PostgreSQL. One statement text whatever the number of rows (prepared once), nothing
 * bound per row: what the key lookups and inserts of de-duplication send.
 */
function rowsParameter(postgres: boolean, types: string[], rows: unknown[][]) {
  if (postgres) return sql`select * from unnest(${sql.join(types.map((type, i) => sql`${rows.map((row) => row[i])}::${sql.raw(type)}[]`))})`;
  return sql`select ${sql.raw(types.map((_, i) => `value ->> ${i}`).join(', '))} from json_each(${JSON.stringify(rows)})`;
}

/** Inserts band rows of the collection's cards (`item_prints`), leaving out rows already stored. */
async function insertPrints(trx: Transaction<Database>, collectionId: string, rows: { key: number; itemId: string; dateMs: number; rest: number }[]): Promise<void> {
  if (!rows.length) return;
  const values = rowsParameter(isPostgres(trx), ['integer', 'text', 'bigint', 'bigint'], rows.map((r) => [r.key, r.itemId, r.dateMs, r.rest]));
  // WHERE true: SQLite would read ON CONFLICT as a join constraint of the SELECT.
  await sql`insert into item_prints (collection_id, band_key, item_id, date_ms, rest)
    select ${collectionId}, r.* from (${values}) r where true on conflict do nothing`.execute(trx);
}

/**
 * `(popcount of a XOR b) <= NEAR_BITS` in SQL, for two non-negative integer expressions. SQLite
 * calls `near_rests` (registered by store/db.ts: `nearRests` of lib/simhash.ts). PostgreSQL runs
 * bit arithmetic: XOR as `(a | b) - (a & b)`, then the lowest set bit cleared (`x & (x - 1)`)
 * `NEAR_BITS` times leaves 0 exactly when at most `NEAR_BITS` bits were set.
 */
function withinNearBits(postgres: boolean, a: string, b: string) {
  if (!postgres) return sql.raw(`near_rests(${a}, ${b}) = 1`);
  let x = `((${a} | ${b}) - (${a} & ${b}))`;
  for (let i = 0; i < NEAR_BITS; i++) x = `(${x} & (${x} - 1))`;
  return sql.raw(`${x} = 0`);
}

/**
 * The spaces of band keys (lib/item-keys.ts `PRINT_SPACES`) in which the collection has at least
 * one row of `item_prints`: one primary-key seek per space, in one statement.
 */
async function indexedSpaces(trx: Transaction<Database>, collectionId: string): Promise<Set<number>> {
  const spaces = Object.values(PRINT_SPACES);
  const probes = spaces.map(
    (space) =>
      sql`(select 1 from item_prints where collection_id = ${collectionId} and band_key >= ${space * SPACE_KEYS} and band_key < ${(space + 1) * SPACE_KEYS} limit 1)`,
  );
  const { rows } = await sql<Record<string, number | null>>`select ${sql.join(probes.map((probe, i) => sql`${probe} as ${sql.ref(`s${i}`)}`))}`.execute(trx);
  return new Set(spaces.filter((_, i) => rows[0]?.[`s${i}`] != null));
}

/**
 * The cards with a fingerprint within `NEAR_BITS` of one of the items' and dated within
 * `TEXT_WINDOW_MS` of that item. A near fingerprint shares at least one band (pigeonhole), so each
 * signature probes its four band rows through the primary key of `item_prints`; the distance and
 * the date are checked in SQL on the probed rows, and only near cards come back. A space of band
 * keys in which the collection has no card (not in `spaces`, from `indexedSpaces`) is not probed:
 * the cards of an RSS collection are all indexed by title and those of a Mastodon collection by
 * whole text, so half of their probes would look into an empty space. One statement; the cards
 * found are then checked to exist (`cardIds`).
 */
async function nearCandidates(trx: Transaction<Database>, collectionId: string, keyed: { keys: ItemKeys; dateMs: number }[], spaces: ReadonlySet<number>): Promise<Candidate[]> {
  const probes = new Map<string, { key: number; rest: number; dateMs: number }>();
  for (const { keys, dateMs } of keyed) {
    for (const signature of keys.signatures) {
      for (const { key, rest } of probeRows(signature)) if (spaces.has(spaceOf(key))) probes.set(`${key} ${rest} ${dateMs}`, { key, rest, dateMs });
    }
  }
  const list = [...probes.values()];
  if (!list.length) return [];
  const postgres = isPostgres(trx);
  // The probes go as one parameter (`rowsParameter`). CROSS JOIN keeps SQLite's join order
  // (probes outside, the key lookups inside): with an inner join and a few hundred probes it chose
  // to scan the collection's rows against an automatic index of the probes.
  const probe = rowsParameter(postgres, ['integer', 'bigint', 'bigint'], list.map((p) => [p.key, p.rest, p.dateMs]));
  const { rows } = await sql<{ itemId: string; dateMs: number | string; bandKey: number; rest: number | string }>`
    with probe (band_key, rest, date_ms) as ${postgres ? sql`` : sql`materialized`} (${probe})
    select p.item_id, p.date_ms, p.band_key, p.rest
    from probe cross join item_prints p
    where p.collection_id = ${collectionId} and p.band_key = probe.band_key
      and p.date_ms >= probe.date_ms - ${TEXT_WINDOW_MS} and p.date_ms <= probe.date_ms + ${TEXT_WINDOW_MS}
      and ${withinNearBits(postgres, 'p.rest', 'probe.rest')}`.execute(trx);
  const found = new Map<string, Candidate>();
  for (const row of rows) {
    const simhash = fromBandRow(Number(row.bandKey), Number(row.rest));
    const space = spaceOf(Number(row.bandKey));
    found.set(`${row.itemId} ${simhash.hi} ${simhash.lo} ${space}`, { itemId: row.itemId, dateMs: Number(row.dateMs), simhash, space });
  }
  // Rows of cards that are gone (see `deleteCardKeys`) are skipped.
  const candidates = [...found.values()];
  const live = await cardIds(trx, collectionId, [...new Set(candidates.map((c) => c.itemId))], true);
  return candidates.filter((c) => live.has(c.itemId));
}

/** A card's entry for a duplicate. */
const entryOf = (item: ContentItem): Duplicate => ({ id: item.id, service: item.service, url: item.url, author: item.author });

/**
 * Merges items into their cards: each kept in `item_duplicates` (once per collection), listed
 * in its card's `duplicates`, its score added to the card's `kudos.score` and counted in
 * `kudos.duplicates`; its URL hashes point to the card. A published card is stamped with `seq`
 * (streams and caches see the change). Returns how many items were merged.
 */
async function mergeDuplicates(trx: Transaction<Database>, target: StoreTarget, merged: { item: ContentItem; cardId: string; urlHashes: string[] }[], seq: number, now: number): Promise<number> {
  const { collectionId } = target;
  const rows = merged.map(({ item, cardId }) => {
    const { state: _ignored, ...body } = item;
    return { collectionId, id: item.id, cardId, inputId: target.inputId, body: JSON.stringify(body), createdAt: now };
  });
  const inserted = new Set(await insertNewKeys(trx, 'itemDuplicates', rows, ['collectionId', 'id'], BATCH, 'id'));
  const urls = merged.flatMap(({ cardId, urlHashes }) => urlHashes.map((urlHash) => ({ collectionId, urlHash, itemId: cardId })));
  await insertNew(trx, 'itemUrls', urls, ['collectionId', 'urlHash'], BATCH);
  const byCard = new Map<string, ContentItem[]>();
  for (const { item, cardId } of merged) if (inserted.has(item.id)) byCard.set(cardId, [...(byCard.get(cardId) ?? []), item]);
  for (const [cardId, items] of byCard) {
    await updateCard(trx, collectionId, cardId, seq, (card) => {
      const duplicates = [...(card.duplicates ?? []), ...items.map(entryOf)];
      const score = card.kudos.score + items.reduce((sum, item) => sum + item.kudos.score, 0);
      return { ...card, duplicates, kudos: { ...card.kudos, score, duplicates: duplicates.length } };
    });
  }
  return inserted.size;
}

/** Rewrites a card's document with `change`, its score column with it, and stamps a published card with `seq`. */
async function updateCard(trx: Transaction<Database>, collectionId: string, cardId: string, seq: number, change: (card: ContentItem) => ContentItem): Promise<void> {
  const row = await trx.selectFrom('items').select(['body', 'state', 'dateMs']).where('collectionId', '=', collectionId).where('id', '=', cardId).executeTakeFirst();
  if (!row) return;
  const { state: _ignored, ...body } = change(inShape(itemBody(row.body)));
  await trx
    .updateTable('items')
    .set({ body: JSON.stringify(body), score: body.kudos.score, trend: trendingScore(body.kudos.score, Number(row.dateMs)), ...(row.state === 'published' ? { seq } : {}) })
    .where('collectionId', '=', collectionId)
    .where('id', '=', cardId)
    .execute();
}

/**
 * An item's later version (same id) updates its card: title, text and media are replaced when
 * any of them changed at the source (a feed entry's edited title), and the collection version
 * is bumped so caches and streams see it. The rest — state, kudos, duplicates — stays; a card
 * removed at the source (state `removed`, store/removals.ts) is left as it is. A moderator's edit
 * (`moderation.edit`) is laid over the stored document when served, so it stays what the item
 * shows and the update changes its `original` only (docs/api.md#edit-an-item). Returns the ids
 * of the cards updated. The
 * edit is not judged again: the filter judged the item when it arrived. In mode `url+text` the
 * edited card is also indexed by the fingerprint of its new text, beside the old one: a later
 * near duplicate of either version meets it (docs/api.md#duplicates).
 */
export async function applyEdits(trx: Transaction<Database>, collectionId: string, seen: ContentItem[], version: () => Promise<number>): Promise<string[]> {
  const latest = new Map(seen.map((item) => [item.id, item]));
  const ids = [...latest.keys()];
  const edited: { card: ContentItem; dateMs: number }[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await trx
      .selectFrom('items')
      .select(['id', 'body', 'dateMs'])
      .where('collectionId', '=', collectionId)
      .where('id', 'in', ids.slice(i, i + BATCH))
      .where('state', '!=', 'removed')
      .execute();
    for (const row of rows) {
      const stored = inShape(itemBody(row.body));
      const now = latest.get(row.id)!;
      const same = stored.title === now.title && stored.text === now.text && JSON.stringify(stored.media) === JSON.stringify(now.media ?? null);
      if (same) continue;
      const seq = await version();
      const edit = (card: ContentItem): ContentItem => {
        const { title: _title, ...rest } = card;
        return { ...rest, ...(now.title !== undefined && { title: now.title }), text: now.text, media: now.media ?? null };
      };
      await updateCard(trx, collectionId, row.id, seq, edit);
      edited.push({ card: edit(stored), dateMs: Number(row.dateMs) });
    }
  }
  if (edited.length && (await dedupeMode(trx, collectionId)) === 'url+text') {
    await insertPrints(trx, collectionId, edited.flatMap(({ card, dateMs }) => printRows(textKeys(card)).map(({ key, rest }) => ({ key, itemId: card.id, dateMs, rest }))));
  }
  return edited.map(({ card }) => card.id);
}

/**
 * Splits the duplicate `duplicateId` out of card `cardId` (docs/api.md#split-a-duplicate): the
 * duplicate becomes a card of its own in the card's state, and the card loses its entry, its
 * score and its count; both are stamped with a new collection version (with `audit`, recorded as
 * action `split` in the same transaction). Returns the new card's
 * row, or undefined when the card holds no such duplicate (nothing changed).
 */
export async function splitDuplicate(
  db: Db,
  target: { collectionId: string; contractId: string },
  cardId: string,
  duplicateId: string,
  audit?: ModerationAudit,
  now = Date.now(),
): Promise<ItemRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const { collectionId } = target;
    const duplicate = await trx.selectFrom('itemDuplicates').selectAll().where('collectionId', '=', collectionId).where('id', '=', duplicateId).where('cardId', '=', cardId).executeTakeFirst();
    const card = await trx.selectFrom('items').select('state').where('collectionId', '=', collectionId).where('id', '=', cardId).executeTakeFirst();
    if (!duplicate || !card) return undefined;
    const item = inShape(JSON.parse(duplicate.body) as ContentItem);
    const seq = await bumpVersion(trx, collectionId);
    await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collectionId).where('id', '=', duplicateId).execute();
    await updateCard(trx, collectionId, cardId, seq, withoutDuplicate(duplicateId, item.kudos.score));
    const { children: _children, ...own } = item;
    await trx.insertInto('items').values(itemRow({ ...target, inputId: duplicate.inputId, state: card.state as ItemState }, { ...own, children: item.children ?? [] }, seq, now)).execute();
    if (audit) {
      const split = { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId: cardId, action: 'split', collectionId };
      await recordAudit(trx, { ...split, before: { id: cardId, duplicateId }, after: { id: cardId, splitId: duplicateId, state: card.state } }, now);
    }
    return trx.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where('id', '=', duplicateId).executeTakeFirstOrThrow();
  });
}

/** A card's change that drops its duplicate `duplicateId` (entry, `score` and count), as a split or an erasure does. */
function withoutDuplicate(duplicateId: string, score: number): (card: ContentItem) => ContentItem {
  return (stored) => {
    const duplicates = (stored.duplicates ?? []).filter((d) => d.id !== duplicateId);
    const { duplicates: _all, ...rest } = stored;
    const kudos = { ...stored.kudos, score: stored.kudos.score - score, duplicates: duplicates.length };
    if (!duplicates.length) delete (kudos as { duplicates?: number }).duplicates;
    return { ...rest, ...(duplicates.length && { duplicates }), kudos };
  };
}

/**
 * Deletes duplicate `duplicate` (a row of `item_duplicates`) for good, inside `trx` (an erasure,
 * docs/api.md#erasure): its row, its entry, score and count on its card (stamped `seq`), and the
 * URL hashes of it that point to the card (those the card's own URL shares stay).
 */
export async function removeDuplicate(trx: Transaction<Database>, duplicate: { collectionId: string; id: string; cardId: string; body: string }, seq: number): Promise<void> {
  const item = inShape(JSON.parse(duplicate.body) as ContentItem);
  await trx.deleteFrom('itemDuplicates').where('collectionId', '=', duplicate.collectionId).where('id', '=', duplicate.id).execute();
  await updateCard(trx, duplicate.collectionId, duplicate.cardId, seq, withoutDuplicate(duplicate.id, item.kudos.score));
  // Only its own: a hash the card shares (the same canonical URL, what made it a duplicate) stays the card's.
  const card = await trx.selectFrom('items').select('body').where('collectionId', '=', duplicate.collectionId).where('id', '=', duplicate.cardId).executeTakeFirst();
  const kept = new Set(card ? urlKeys(itemBody(card.body)).urlHashes : []);
  const hashes = urlKeys(item).urlHashes.filter((hash) => !kept.has(hash));
  if (hashes.length) await trx.deleteFrom('itemUrls').where('collectionId', '=', duplicate.collectionId).where('itemId', '=', duplicate.cardId).where('urlHash', 'in', hashes).execute();
}

/** A circle on the Earth: centre in degrees, radius in meters. */
export interface Circle {
  longitude: number;
  latitude: number;
  radius: number;
}

/** What a read selects: one collection, a time window in ms (after `sinceMs`, until `untilMs` inclusive). */
export interface ItemQuery {
  collectionId: string;
  /** Only items in this state (content and count read `published`; the queue may ask `removed`); all when omitted. */
  state?: StoredState;
  /** true: only items held for review; false: only the others; all when omitted (docs/filters.md#hold-for-review). */
  held?: boolean;
  sinceMs: number;
  untilMs: number;
  services?: string[];
  types?: string[];
  languages?: string[];
  /** Only items located within the circle (great-circle distance, docs/api.md#location-parameter). */
  location?: Circle;
}

/**
 * The SQL text of a read with its bound parameters, in the database's placeholder style (`?` on
 * SQLite, `$1…` on PostgreSQL). Reads are written as SQL text rather than through the query
 * builder: a read's text is a few string joins (about 1 µs), it names its columns exactly as the
 * covering indexes do (migration 2026-11-29-read-indexes), and it is what EXPLAIN checks
 * (test/http/content-params.test.ts).
 */
export class ReadSql {
  readonly parameters: unknown[] = [];
  readonly postgres: boolean;
  constructor(postgres: boolean) {
    this.postgres = postgres;
  }
  /** The placeholder of `value`, bound in order. */
  bind(value: unknown): string {
    this.parameters.push(value);
    return this.postgres ? `$${this.parameters.length}` : '?';
  }
  /** A number bound for SQL arithmetic: PostgreSQL would otherwise read `2 * $1` as integer and refuse 6371008.8. */
  real(value: number): string {
    return `cast(${this.bind(value)} as double precision)`;
  }
  list(values: unknown[]): string {
    return `(${values.map((v) => this.bind(v)).join(', ')})`;
  }
}

/**
 * The WHERE clause of a read (columns of `items`, unqualified): each term is answered by the
 * covering index the read walks (migration 2026-11-29-read-indexes), never by the table.
 */
export function whereSql(p: ReadSql, query: ItemQuery, dateTerms: 'indexed' | 'filtered' = 'indexed'): string {
  // `+date_ms` (SQLite): the date range filters the walk instead of choosing the index.
  const date = dateTerms === 'filtered' ? '+date_ms' : 'date_ms';
  const terms = [`collection_id = ${p.bind(query.collectionId)}`, `${date} > ${p.bind(query.sinceMs)}`, `${date} <= ${p.bind(query.untilMs)}`];
  // An enum of three values, written as a literal: the planner then knows which index prefix it fixes.
  if (query.state) terms.push(`state = '${query.state === 'published' ? 'published' : query.state === 'removed' ? 'removed' : 'unpublished'}'`);
  // Held for review or not (the queue's `held`): tested on the row, not an index.
  if (query.held !== undefined) terms.push(query.held ? 'held is not null' : 'held is null');
  if (query.services?.length) terms.push(`service in ${p.list(query.services)}`);
  if (query.types?.length) terms.push(`type in ${p.list(query.types)}`);
  if (query.languages?.length) terms.push(`language in ${p.list(query.languages)}`);
  if (query.location) {
    // The box narrows through index items_read_location; the haversine check is exact: on SQLite
    // lib/geo.ts `distanceMeters` itself, registered as `distance_m` (store/db.ts), on PostgreSQL
    // the same formula in SQL.
    const { latitude, longitude, radius } = query.location;
    const box = boundingBox({ latitude, longitude }, radius);
    terms.push(`latitude >= ${p.bind(box.minLatitude)}`, `latitude <= ${p.bind(box.maxLatitude)}`);
    terms.push(
      box.minLongitude <= box.maxLongitude
        ? `longitude >= ${p.bind(box.minLongitude)} and longitude <= ${p.bind(box.maxLongitude)}`
        : `(longitude >= ${p.bind(box.minLongitude)} or longitude <= ${p.bind(box.maxLongitude)})`,
    );
    // Placeholders bound in the order they appear (SQLite's `?` are positional).
    terms.push(
      p.postgres
        ? `2 * ${p.real(EARTH_RADIUS_M)} * asin(sqrt(power(sin(radians(latitude - ${p.real(latitude)}) / 2), 2) + cos(radians(${p.real(latitude)})) * cos(radians(latitude)) * power(sin(radians(longitude - ${p.real(longitude)}) / 2), 2))) <= ${p.real(radius)}`
        : `distance_m(latitude, longitude, ${p.bind(latitude)}, ${p.bind(longitude)}) <= ${p.bind(radius)}`,
    );
  }
  return terms.join(' and ');
}

export interface Page {
  count: number;
  offset: number;
  sort: 'time' | 'kudos' | 'trending';
  order: 'asc' | 'desc';
}

/**
 * The column each sort orders by, ties broken by `id` in the same direction: the one place that
 * knows the sorts (a new sort adds its column here and its covering indexes in a migration).
 */
export const SORT_COLUMNS: Record<Page['sort'], string> = { time: 'date_ms', kudos: 'score', trending: 'trend' };

function orderSql(page: Page, table = ''): string {
  const direction = page.order === 'asc' ? 'asc' : 'desc';
  return `${table}${SORT_COLUMNS[page.sort]} ${direction}, ${table}id ${direction}`;
}

/**
 * The page is chosen from a covering index alone (filters, sort, ties by id and offset never touch
 * the stored documents; the index walk stops after offset + count matches). `keys`: the page's
 * keys, which every read index holds (migration 2026-12-01-read-seq), straight from that walk.
 * `documents`: a deferred join, then only the page's rows are read, on SQLite each by its rowid
 * (the index entry holds it), on PostgreSQL by primary key. A join on the derived table, not
 * `id IN (subquery)`: with IN, SQLite walked the whole collection along a sort index testing each
 * row against the list.
 */
function pageSql<R>(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents', exclude: string[] = []): CompiledQuery<R> {
  const postgres = isPostgres(db);
  const p = new ReadSql(postgres);
  // The trending order walks its own index (items_read_state_trend, items_read_trend) and stops
  // after offset + count matches: SQLite, which cannot know how wide a bound date range is,
  // otherwise chose the date index and read every item of the window from the table to sort it
  // by `trend` (bench:content: p50 11 ms at 1 000 000 items). A trending score grows with the
  // item's date (docs/api.md#trending), so a window's items lie near the top of that walk.
  let where = whereSql(p, query, page.sort === 'trending' && !postgres && !query.location ? 'filtered' : 'indexed');
  // The pinned items shown in front (`pinnedFirst`): tested on the index entries, which hold `id`.
  if (exclude.length) where += ` and id not in ${p.list(exclude)}`;
  const key = read === 'keys' ? 'collection_id, id, seq, state' : postgres ? 'id' : 'rowid as row';
  const chosen = `select ${key} from items where ${where} order by ${orderSql(page)} limit ${p.bind(page.count)} offset ${p.bind(page.offset)}`;
  if (read === 'keys') return CompiledQuery.raw(chosen, p.parameters);
  const join = postgres ? `items.collection_id = ${p.bind(query.collectionId)} and items.id = page.id` : 'items.rowid = page.row';
  return CompiledQuery.raw(`select ${DOCUMENT_COLUMNS} from (${chosen}) as page join items on ${join} order by ${orderSql(page, 'items.')}`, p.parameters);
}

/** The columns of a documents read (`ItemDocument`). */
const DOCUMENT_COLUMNS = 'items.body, items.state, items.pin_position, items.moderation, items.held, items.removed';

/**
 * The collection's pinned items that `query` selects, first pin first (at most `MAX_PINNED`):
 * a walk of the partial index items_pinned (migration 2026-12-07-pins-edits), named on SQLite
 * (whose planner would otherwise take a read index and test every row of the window), the
 * read's other terms tested on those few rows. With `id` besides the read's columns.
 */
function pinnedSql<R>(db: Db, query: ItemQuery, read: 'keys' | 'documents'): CompiledQuery<R> {
  const postgres = isPostgres(db);
  const p = new ReadSql(postgres);
  const columns = read === 'keys' ? 'items.collection_id, items.id, items.seq, items.state' : `items.id, ${DOCUMENT_COLUMNS}`;
  return CompiledQuery.raw(
    `select ${columns} from items ${postgres ? '' : 'indexed by items_pinned '}where ${whereSql(p, query)} and pin_position > 0 order by pin_position, id`,
    p.parameters,
  );
}

/** Which items a read takes with respect to pins: pinned first (the default), only the pinned, or only the others. */
export type PinnedRead = 'first' | 'only' | 'none';

/**
 * A page of `pageSql` with the pinned items first (docs/api.md#pin-and-spotlight): the pinned
 * items `query` selects, in their order, then the others in the page's sort, as one list that
 * `offset` and `count` page through (the count of a read is unchanged). Two statements: the
 * pinned items (`pinnedSql`, a tiny index), then the page of the others with the pinned ids left
 * out on the index walk; the second only when the page reaches past the pins.
 */
async function pinnedFirst<R extends object>(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents', pins: PinnedRead): Promise<R[]> {
  const pinned = (await db.executeQuery(pinnedSql<R & { id: string }>(db, query, read))).rows;
  if (pins === 'only') return pinned.slice(page.offset, page.offset + page.count);
  const ids = pinned.map((row) => row.id);
  if (pins === 'none') return (await db.executeQuery(pageSql<R>(db, query, page, read, ids))).rows;
  const front = pinned.slice(page.offset, page.offset + page.count);
  const rest = page.count - front.length;
  if (rest <= 0) return front;
  const others = (await db.executeQuery(pageSql<R>(db, query, { ...page, count: rest, offset: Math.max(0, page.offset - pinned.length) }, read, ids))).rows;
  return [...front, ...others];
}

/** What identifies a stored item's current version: enough to find its serialized form in a cache. */
export type ItemKey = Pick<ItemRow, 'collectionId' | 'id' | 'seq' | 'state'>;

/**
 * `listItems` without the stored documents: the page's items' keys, in the page's order. A
 * reader that keeps items serialized (queue/read-path.ts) then reads only the documents it lacks
 * (`findItems`), instead of creating every document's text on every read.
 */
export async function listItemKeys(db: Db, query: ItemQuery, page: Page, pins: PinnedRead = 'first'): Promise<ItemKey[]> {
  return pinnedFirst<ItemKey>(db, query, page, 'keys', pins);
}

function countSql(db: Db, query: ItemQuery): CompiledQuery<{ n: number | string }> {
  const p = new ReadSql(isPostgres(db));
  return CompiledQuery.raw(`select count(*) as n from items where ${whereSql(p, query)}`, p.parameters);
}

/**
 * What a page read returns of each item: its document and state, all `rowToItem` needs. The
 * other fifteen columns are left in the table: creating them cost a page of 20 items about 40 µs
 * of the 90 its read took on SQLite (bench:content).
 */
export type ItemDocument = Pick<ItemRow, 'body' | 'state'> & Partial<Pick<ItemRow, 'pinPosition' | 'moderation' | 'held' | 'removed'>>;

/**
 * One page of items, the pinned first (`pinnedFirst`), the others sorted by time (item date), kudos
 * (score) or trending score (docs/api.md#trending), ties broken by id.
 */
export async function listItems(db: Db, query: ItemQuery, page: Page, pins: PinnedRead = 'first'): Promise<ItemDocument[]> {
  return pinnedFirst<ItemDocument>(db, query, page, 'documents', pins);
}

/** The SQL of a page read (`listItems`, or with `keys` `listItemKeys`) after the pins, for `EXPLAIN QUERY PLAN` in tests and the benchmark. */
export function compilePage(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents' = 'documents', exclude: string[] = []): CompiledQuery {
  return pageSql(db, query, page, read, exclude);
}

/** The SQL of the pinned items' read (`pinnedSql`), for `EXPLAIN QUERY PLAN`. */
export function compilePinned(db: Db, query: ItemQuery, read: 'keys' | 'documents' = 'keys'): CompiledQuery {
  return pinnedSql(db, query, read);
}

/** The SQL of a count, for `EXPLAIN QUERY PLAN`. */
export function compileCount(db: Db, query: ItemQuery): CompiledQuery {
  return countSql(db, query);
}

/** How many items `query` selects: a range count over the covering index the read's filters fix. */
export async function countItems(db: Db, query: ItemQuery): Promise<number> {
  const { rows } = await db.executeQuery(countSql(db, query));
  return Number(rows[0]!.n);
}

/** The stored item `id` of the collection, every column, or undefined. */
export async function findItem(db: Db, collectionId: string, id: string): Promise<ItemRow | undefined> {
  return db.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirst();
}

/**
 * Inside `trx`: marks the collection's items in `held` as held for review, each with its reason
 * (docs/filters.md#hold-for-review); their state is the caller's to set (`changeStates`).
 */
export async function holdItems(trx: Transaction<Database>, collectionId: string, held: ReadonlyMap<string, Held>): Promise<void> {
  for (const [id, why] of held) {
    await trx.updateTable('items').set({ held: JSON.stringify(why) }).where('collectionId', '=', collectionId).where('id', '=', id).execute();
  }
}

/**
 * The collection's items dated after `sinceMs` (ms), newest first, at most `limit`: their
 * documents, for the spam score's recent items (filter/spam.ts). Walks the read index on date.
 */
export async function recentItems(db: Db, collectionId: string, sinceMs: number, limit: number): Promise<ContentItem[]> {
  const rows = await db.selectFrom('items').select('body').where('collectionId', '=', collectionId).where('dateMs', '>', sinceMs).orderBy('dateMs', 'desc').limit(limit).execute();
  return rows.map((row) => itemBody(row.body));
}

/** Who moderates, for the audit trail (docs/api.md#audit-trail): recorded in the moderation's transaction. */
export interface ModerationAudit {
  contractId: string;
  actor: Actor;
}

/**
 * Inside `trx`: sets the state of the collection's items (cards) among `ids` to `state`, bumping
 * the collection's version once and stamping them with it; publishing clears an item's `held`. With `onlyFrom`, only items now in
 * that state change. With `all`, nothing changes unless every id is found (`missing` lists the
 * others). Each item whose state changed gets its `item.published` or `item.unpublished` event
 * in the outbox (docs/api.md#webhook-events). An item removed at the source (state `removed`,
 * docs/api.md#removed-at-the-source) never changes: it is listed in `removed`, and with `all`
 * nothing changes. Returns each changed item's state before, the ids not found and the removed.
 */
export async function changeStates(
  trx: Transaction<Database>,
  contractId: string,
  collectionId: string,
  ids: string[],
  state: ItemState,
  options: { onlyFrom?: ItemState; all?: boolean } = {},
): Promise<{ before: Map<string, ItemState>; missing: string[]; removed: string[] }> {
  const before = new Map<string, ItemState>();
  const removed: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    let query = trx.selectFrom('items').select(['id', 'state']).where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + BATCH));
    if (options.onlyFrom) query = query.where('state', '=', options.onlyFrom);
    for (const row of await query.execute()) {
      if (row.state === 'removed') removed.push(row.id);
      else before.set(row.id, row.state as ItemState);
    }
  }
  const missing = options.onlyFrom ? [] : ids.filter((id) => !before.has(id) && !removed.includes(id));
  if (options.all && (missing.length || removed.length)) return { before: new Map(), missing, removed };
  if (before.size === 0) return { before, missing, removed };
  const seq = await bumpVersion(trx, collectionId);
  const found = [...before.keys()];
  for (let i = 0; i < found.length; i += BATCH) {
    // Publishing an item releases it from a hold (docs/filters.md#hold-for-review).
    await trx.updateTable('items').set({ state, seq, ...(state === 'published' ? { held: null } : {}) }).where('collectionId', '=', collectionId).where('id', 'in', found.slice(i, i + BATCH)).execute();
  }
  await emitEvents(trx, contractId, moderationEvents(contractId, collectionId, found.filter((id) => before.get(id) !== state), state));
  return { before, missing, removed };
}

/**
 * Sets the state of every item among `ids` (deduplicated by the caller) and bumps the
 * collection's version once, in one transaction: all or none. The moderation is recorded in the
 * same transaction as one audit entry listing every item (docs/api.md#audit-trail), with an
 * `item.published` or `item.unpublished` event per item whose state changed. Returns the audit
 * entry's id (the `Audit-Id` of the answer, docs/api.md#moderation), or the ids the collection
 * does not hold, or those removed at the source (docs/api.md#removed-at-the-source), in which
 * case nothing changed.
 */
export async function setItemsState(db: Db, collectionId: string, ids: string[], state: ItemState, moderation: ModerationAudit): Promise<{ auditId: string } | { missing: string[] } | { removed: string[] }> {
  return db.transaction().execute(async (trx) => {
    const { before, missing, removed } = await changeStates(trx, moderation.contractId, collectionId, ids, state, { all: true });
    if (missing.length) return { missing };
    if (removed.length) return { removed };
    return { auditId: await recordModeration(trx, collectionId, ids.map((id) => ({ itemId: id, before: before.get(id)!, after: state })), moderation) };
  });
}

/** The audit entry of a moderation (action `moderate`, resource `item`; resource id: the single item, or the collection for several). */
function recordModeration(trx: Transaction<Database>, collectionId: string, items: AuditItem[], audit: ModerationAudit) {
  const resourceId = items.length === 1 ? items[0]!.itemId : collectionId;
  return recordAudit(trx, { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId, action: 'moderate', collectionId, items });
}

/** What one moderation of one item changes (docs/api.md, PATCH /v1/queue/{contract}); absent: unchanged. */
export interface ItemChange {
  state?: ItemState;
  pinned?: boolean;
  /** With `pinned` true: the place among the pinned items, 1 = first. */
  position?: number;
  spotlight?: boolean;
  /** The edit laid over the source's title, text and media (null: the source's again). */
  edit?: ItemEdit | null;
}

/** `auditIds`: the entries the change recorded, in the order state, pin, edit (none for an aspect that changed nothing). */
export type ItemChangeOutcome = { auditIds: string[] } | { missing: true } | { removed: true } | { pinsFull: true } | { mediaCount: number };

/**
 * Changes item `id` of the collection as `change` asks, all in one transaction (serializable on
 * PostgreSQL: two pins at once cannot pass `MAX_PINNED`), each aspect recorded as its own audit
 * entry so that each can be reverted alone (docs/api.md#audit-trail): the state as a `moderate`
 * entry (`setItemsState`), the pin and spotlight as `pin` or `unpin` (docs/api.md#pin-and-spotlight),
 * the edit as `edit` (docs/api.md#edit-an-item). The collection's version is bumped and every
 * item whose pin or moderation changed is stamped with it (caches and streams see it).
 * Pinning publishes nothing: the state changes only by `state`. Returns `missing` for an unknown
 * item, `pinsFull` when a new pin would pass `MAX_PINNED`, `mediaCount` (the item's) when the edit
 * names more media than the item has, `removed` for an item removed at the source
 * (docs/api.md#removed-at-the-source); then nothing changed. Otherwise `auditIds`, the ids of the
 * entries recorded (the answer's `Audit-Id`, docs/api.md#moderation).
 */
export async function changeItem(db: Db, collectionId: string, id: string, change: ItemChange, audit: ModerationAudit): Promise<ItemChangeOutcome> {
  return serializable(db, async (trx) => {
    const row = await trx.selectFrom('items').select(['id', 'state', 'body', 'pinPosition', 'moderation']).where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirst();
    if (!row) return { missing: true };
    if (row.state === 'removed') return { removed: true };
    if (change.edit) {
      const count = inShape(itemBody(row.body)).media?.length ?? 0;
      if ((change.edit.media?.length ?? 0) > count) return { mediaCount: count };
    }
    let seq: number | undefined;
    const version = async () => (seq ??= await bumpVersion(trx, collectionId));
    let state = row.state as ItemState;
    const auditIds: string[] = [];
    if (change.state) {
      const { before } = await changeStates(trx, audit.contractId, collectionId, [id], change.state, { all: true });
      auditIds.push(await recordModeration(trx, collectionId, [{ itemId: id, before: before.get(id)!, after: change.state }], audit));
      state = change.state;
    }
    if (change.pinned !== undefined || change.spotlight !== undefined) {
      const pin = await setPin(trx, audit.contractId, collectionId, id, change, version);
      if (!pin) return { pinsFull: true } as const;
      if (pin.changed) auditIds.push(await recordItemChange(trx, collectionId, id, state, pin.after.pinned || !pin.before.pinned ? 'pin' : 'unpin', { pin: pin.before }, { pin: pin.after }, audit));
    }
    if (change.edit !== undefined) {
      const edited = await setEdit(trx, collectionId, id, change.edit, version);
      if (edited.changed) auditIds.push(await recordItemChange(trx, collectionId, id, state, 'edit', { edit: edited.before }, { edit: edited.after }, audit));
    }
    return { auditIds };
  });
}

/** The audit entry of a pin or edit of one item: `before`/`after` `{id, pin}` or `{id, edit}`, the item listed (its state unchanged) so its history shows it. */
function recordItemChange(trx: Transaction<Database>, collectionId: string, id: string, state: string, action: string, before: object, after: object, audit: ModerationAudit) {
  const items = [{ itemId: id, before: state, after: state }];
  return recordAudit(trx, { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId: id, action, collectionId, items, before: { id, ...before }, after: { id, ...after } });
}

/** The item's pin as recorded, from its row. */
function pinStateOf(row: { pinPosition: number | null; moderation: string | null }): PinState {
  const position = row.pinPosition == null ? undefined : Number(row.pinPosition);
  return { pinned: position !== undefined, ...(position !== undefined && { position }), spotlight: parseModeration(row.moderation).spotlight === true };
}

/**
 * Inside `trx`: pins, moves or unpins item `id` (`reorderPins`) and sets its spotlight, renumbering
 * the collection's pinned items 1…n; the items whose position changed are stamped with the
 * collection's new version. Emits `item.pinned` (pinned or moved) or `item.unpinned` for `id`
 * (docs/api.md#webhook-events). Returns undefined (nothing changed) when a new pin would pass
 * `MAX_PINNED`.
 */
async function setPin(
  trx: Transaction<Database>,
  contractId: string,
  collectionId: string,
  id: string,
  change: Pick<ItemChange, 'pinned' | 'position' | 'spotlight'>,
  version: () => Promise<number>,
): Promise<{ before: PinState; after: PinState; changed: boolean } | undefined> {
  const pins = await trx.selectFrom('items').select(['id', 'pinPosition']).where('collectionId', '=', collectionId).where('pinPosition', '>', 0).orderBy('pinPosition').orderBy('id').execute();
  const row = await trx.selectFrom('items').select(['pinPosition', 'moderation']).where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirstOrThrow();
  const before = pinStateOf(row);
  const order = pins.map((pin) => pin.id);
  const next = change.pinned === undefined ? order : reorderPins(order, id, change.pinned, change.position);
  if (!next) return undefined;
  const now = new Map(pins.map((pin) => [pin.id, Number(pin.pinPosition)]));
  const moves = [...new Set([...order, ...next])].map((one) => ({ id: one, position: next.indexOf(one) + 1 || null })).filter((m) => m.position !== (now.get(m.id) ?? null));
  const moderation = parseModeration(row.moderation);
  const spotlight = change.spotlight ?? moderation.spotlight === true;
  const spotlightChanged = spotlight !== (moderation.spotlight === true);
  if (!moves.length && !spotlightChanged) return { before, after: before, changed: false };
  const seq = await version();
  for (const move of moves) {
    await trx.updateTable('items').set({ pinPosition: move.position, seq }).where('collectionId', '=', collectionId).where('id', '=', move.id).execute();
  }
  if (spotlightChanged) {
    const { spotlight: _old, ...rest } = moderation;
    await trx.updateTable('items').set({ moderation: moderationText({ ...rest, ...(spotlight && { spotlight: true }) }), seq }).where('collectionId', '=', collectionId).where('id', '=', id).execute();
  }
  const position = next.indexOf(id) + 1 || undefined;
  const after: PinState = { pinned: position !== undefined, ...(position !== undefined && { position }), spotlight };
  if (after.pinned !== before.pinned || after.position !== before.position) {
    const type = after.pinned ? ('item.pinned' as const) : ('item.unpinned' as const);
    await emitEvents(trx, contractId, [{ type, subject: itemSubject(collectionId, id), data: { contractId, collectionId, itemId: id, pinned: after.pinned, ...(position !== undefined && { position }) } }]);
  }
  return { before, after, changed: true };
}

/** Inside `trx`: sets (or with null removes) item `id`'s edit, stamping it with the collection's new version. */
async function setEdit(trx: Transaction<Database>, collectionId: string, id: string, edit: ItemEdit | null, version: () => Promise<number>): Promise<{ before: ItemEdit | null; after: ItemEdit | null; changed: boolean }> {
  const row = await trx.selectFrom('items').select('moderation').where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirstOrThrow();
  const moderation: ItemModeration = parseModeration(row.moderation);
  const before = moderation.edit ?? null;
  if (JSON.stringify(before) === JSON.stringify(edit)) return { before, after: edit, changed: false };
  const { edit: _old, ...rest } = moderation;
  await trx.updateTable('items').set({ moderation: moderationText({ ...rest, ...(edit && { edit }) }), seq: await version() }).where('collectionId', '=', collectionId).where('id', '=', id).execute();
  return { before, after: edit, changed: true };
}

/**
 * Reverts a pin or edit entry (its `before`/`after` hold `pin` or `edit`) inside `trx`: the item
 * gets the entry's `before` back, unless it was changed since (its pin or spotlight, or its edit,
 * is no longer what the entry set; a position moved by other pins does not count) or is gone.
 */
async function revertItemChange(trx: Transaction<Database>, entry: { contractId: string; collectionId: string; resourceId: string }, before: Record<string, unknown>, after: Record<string, unknown>): Promise<{ changed: string[] } | { before: object; after: object; state: string }> {
  const id = entry.resourceId;
  const row = await trx.selectFrom('items').select(['state', 'pinPosition', 'moderation']).where('collectionId', '=', entry.collectionId).where('id', '=', id).executeTakeFirst();
  if (!row) return { changed: [id] };
  if ('pin' in after) {
    const now = pinStateOf(row);
    const set = after.pin as PinState;
    const was = before.pin as PinState;
    if (now.pinned !== set.pinned || now.spotlight !== set.spotlight) return { changed: [id] };
    let seq: number | undefined;
    const pin = await setPin(trx, entry.contractId, entry.collectionId, id, { pinned: was.pinned, position: was.position, spotlight: was.spotlight }, async () => (seq ??= await bumpVersion(trx, entry.collectionId)));
    if (!pin) return { changed: [id] };
    return { before: { id, pin: pin.before }, after: { id, pin: pin.after }, state: row.state };
  }
  const now = parseModeration(row.moderation).edit ?? null;
  if (JSON.stringify(now) !== JSON.stringify(after.edit ?? null)) return { changed: [id] };
  let seq: number | undefined;
  const edited = await setEdit(trx, entry.collectionId, id, (before.edit as ItemEdit | null) ?? null, async () => (seq ??= await bumpVersion(trx, entry.collectionId)));
  return { before: { id, edit: edited.before }, after: { id, edit: edited.after }, state: row.state };
}

/** Whether an audit entry's `after` is that of a pin or an edit (`recordItemChange`). */
function itemChangeOf(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const value = JSON.parse(text) as unknown;
  return value && typeof value === 'object' && ('pin' in value || 'edit' in value) ? (value as Record<string, unknown>) : undefined;
}

/** Actions whose entries can be reverted: they changed items' states, pins or edits (docs/api.md#revert). */
export const REVERTABLE = ['moderate', 'apply', 'revert', 'pin', 'unpin', 'edit'] as const;

export type RevertOutcome = { revertId: string } | { alreadyRevertedBy: string } | { changed: string[] } | { notRevertable: true };

/**
 * Reverts moderation entry `entry` (docs/api.md#revert): every item it changed gets back its
 * state before, in one transaction with the revert's own entry (action `revert`, `reverts`
 * naming the entry), and the entry is marked reverted. All or nothing: when any of its items
 * was moderated since (its state is no longer what the entry set) or is gone, nothing changes
 * and `changed` names them (at most 10); an entry reverted already is not reverted twice.
 * Serializable on PostgreSQL, so two reverts of one entry from two processes cannot both win.
 */
export async function revertModeration(db: Db, entryId: string, actor: Actor, now = Date.now()): Promise<RevertOutcome> {
  return serializable(db, async (trx) => {
    const entry = await findAuditEntry(trx, entryId);
    if (!entry || !entry.collectionId || !(REVERTABLE as readonly string[]).includes(entry.action) || Number(entry.itemCount) === 0) return { notRevertable: true };
    if (entry.revertedBy) return { alreadyRevertedBy: entry.revertedBy };
    const itemChange = itemChangeOf(entry.after);
    if (itemChange) {
      const outcome = await revertItemChange(trx, { ...entry, collectionId: entry.collectionId }, itemChangeOf(entry.before) ?? {}, itemChange);
      if ('changed' in outcome) return outcome;
      const revert = { contractId: entry.contractId, actor, resource: 'item', resourceId: entry.resourceId, action: 'revert', collectionId: entry.collectionId };
      const items = [{ itemId: entry.resourceId, before: outcome.state, after: outcome.state }];
      const revertId = await recordAudit(trx, { ...revert, items, before: outcome.before, after: outcome.after, reverts: entry.id }, now);
      await markReverted(trx, entry.id, revertId);
      return { revertId };
    }
    const changed = await changedSince(trx, entry.id);
    if (changed.length) return { changed };
    const reverted: AuditItem[] = [];
    for (const [state, group] of Map.groupBy(await auditItems(trx, entry.id), (item) => item.before)) {
      const { before } = await changeStates(trx, entry.contractId, entry.collectionId, group.map((item) => item.itemId), state as ItemState);
      for (const [itemId, was] of before) reverted.push({ itemId, before: was, after: state });
    }
    const revert = { contractId: entry.contractId, actor, resource: 'item', resourceId: entry.resourceId, action: 'revert', collectionId: entry.collectionId };
    const revertId = await recordAudit(trx, { ...revert, items: reverted, reverts: entry.id }, now);
    await markReverted(trx, entry.id, revertId);
    return { revertId };
  });
}

/** The events of items moved to `state` (docs/api.md#webhook-events). */
function moderationEvents(contractId: string, collectionId: string, ids: string[], state: ItemState) {
  const type = state === 'published' ? ('item.published' as const) : ('item.unpublished' as const);
  return ids.map((itemId) => ({ type, subject: itemSubject(collectionId, itemId), data: { contractId, collectionId, itemId, state } }));
}

/**
 * The items of the collection in `ids` (any state), in no particular order: their keys and
 * documents, what serializing them needs (`rowToItem`, queue/read-path.ts), not the other columns.
 */
export async function findItems(db: Db, collectionId: string, ids: string[]): Promise<(ItemKey & ItemDocument)[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('items').select(['collectionId', 'id', 'seq', 'state', 'body', 'pinPosition', 'moderation', 'held', 'removed']).where('collectionId', '=', collectionId).where('id', 'in', ids).execute();
}

/** When the collection's latest item arrived (`createdAt`, ms), or 0 before any (index items_arrivals). */
export async function latestArrival(db: Db, collectionId: string): Promise<number> {
  const row = await db
    .selectFrom('items')
    .select((eb) => eb.fn.max('createdAt').as('at'))
    .where('collectionId', '=', collectionId)
    .executeTakeFirst();
  return Number(row?.at ?? 0);
}

/** Items that arrived at or after `fromMs` (any state), oldest arrival first, at most `limit` (index items_arrivals). */
export async function arrivedItems(db: Db, collectionId: string, fromMs: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('createdAt', '>=', fromMs)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The collection's current version (0 before any item), or undefined for an unknown collection. */
export async function collectionVersion(db: Db, collectionId: string): Promise<number | undefined> {
  const row = await db.selectFrom('collections').select('version').where('id', '=', collectionId).executeTakeFirst();
  return row ? Number(row.version) : undefined;
}

/** Items added or moderated after version `afterSeq`, up to `untilSeq`, oldest change first. */
export async function changedItems(db: Db, collectionId: string, afterSeq: number, untilSeq: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', untilSeq)
    .orderBy('seq')
    .orderBy('id')
    .limit(limit)
    .execute();
}

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

/** The published items of the collection among `ids` (at most 100), newest first. */
export async function findPublishedItems(db: Db, collectionId: string, ids: string[]): Promise<ItemRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('state', '=', 'published')
    .where('id', 'in', ids.slice(0, 100))
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** A stored item as a filter application judges it (docs/api.md#apply-a-filter). */
export interface StoredItem {
  id: string;
  state: ItemState;
  dateMs: number;
  item: ContentItem;
  /** A moderator published it against its filter (`filter_override`): filter applications leave it alone. */
  override: boolean;
}

/**
 * One page of the contract's collection's stored items dated after `sinceMs` until `untilMs`
 * (inclusive), newest first, those after `after` (the last of the previous page), at most
 * `limit`: a keyset walk along index items_read_time, any number of items at a bounded cost per page.
 */
export async function storedItemsPage(
  db: Db,
  window: { contractId: string; collectionId: string; sinceMs: number; untilMs: number },
  after: { dateMs: number; id: string } | undefined,
  limit: number,
): Promise<StoredItem[]> {
  let query = db
    .selectFrom('items')
    .select(['id', 'state', 'dateMs', 'body', 'filterOverride'])
    .where('collectionId', '=', window.collectionId)
    .where('contractId', '=', window.contractId)
    .where('dateMs', '>', window.sinceMs)
    .where('dateMs', '<=', window.untilMs);
  if (after) query = query.where((eb) => eb.or([eb('dateMs', '<', after.dateMs), eb.and([eb('dateMs', '=', after.dateMs), eb('id', '<', after.id)])]));
  const rows = await query.orderBy('dateMs', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, state: row.state as ItemState, dateMs: Number(row.dateMs), item: inShape(itemBody(row.body)), override: row.filterOverride !== null }));
}

/**
 * The contract's collection's stored items dated after `sinceMs` as content items (without
 * `state`), each with the input that collected it, newest first, at most `limit` (the filter dry
 * run re-evaluates them and names each story, docs/api.md#filter-dry-run).
 */
export async function storedItemsSince(db: Db, contractId: string, collectionId: string, sinceMs: number, limit: number): Promise<{ item: ContentItem; inputId: string }[]> {
  const rows = await db
    .selectFrom('items')
    .select(['body', 'inputId'])
    .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
    .where('dateMs', '>', sinceMs)
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ item: inShape(itemBody(row.body)), inputId: row.inputId }));
}
