/**
 * De-duplication of stored items (docs/api.md#duplicates): with the collection's `dedupe` on, an
 * item that repeats a card (same canonical URL, or in mode `url+text` near-same text) is merged
 * into it instead of stored as a card. The keys live in `item_urls` (URL hashes) and
 * `item_prints` (band rows of SimHash fingerprints, lib/simhash.ts, lib/item-keys.ts), every
 * lookup through a primary key; merged items are kept in `item_duplicates`.
 */
import { type Transaction, sql } from 'kysely';
import type { ContentItem, Duplicate } from '../../item.ts';
import { inShape } from '../../item.ts';
import { DEDUPE_MODES, type DedupeMode, type ItemKeys, PRINT_SPACES, printRows, probeRows, type OwnsEntries, type Signature, TEXT_WINDOW_MS, textKeys, titlePrinted, urlKeys } from '../../lib/item-keys.ts';
import { bandRows, fromBandRow, hamming, NEAR_BITS, type SimHash, SPACE_KEYS, spaceOf } from '../../lib/simhash.ts';
import { insertNew, insertNewKeys } from '../batch.ts';
import { type Db, isPostgres } from '../db.ts';
import type { Database } from '../tables.ts';
import { itemRow, updateCard } from './cards.ts';
import { BATCH, itemBody, ofContract, type StoreTarget } from './rows.ts';

/**
 * The ids among `ids` of the collection's items (cards; not the duplicates merged into them).
 * With `live`, only cards that can take duplicates: not those removed at the source
 * (store/removals.ts), whose de-duplication keys a removal may not all find again.
 */
export async function cardIds(db: Db | Transaction<Database>, contractId: string, collectionId: string, ids: string[], live = false): Promise<Set<string>> {
  const known = new Set<string>();
  for (let i = 0; i < ids.length; i += BATCH) {
    let query = db.selectFrom('items').select('id').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', 'in', ids.slice(i, i + BATCH));
    if (live) query = query.where('state', '!=', 'removed');
    const rows = await query.execute();
    for (const row of rows) known.add(row.id);
  }
  return known;
}

/** The collection's de-duplication mode (`off` for a collection the contract does not hold). */
export async function dedupeMode(trx: Transaction<Database>, contractId: string, collectionId: string): Promise<DedupeMode> {
  const row = await trx.selectFrom('collections').select('dedupe').where('id', '=', collectionId).where('contractId', '=', contractId).executeTakeFirst();
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
 * stored or merged, and the ids of the new cards. `ownsEntries` tells the feeds' items (their URL
 * keys, lib/item-keys.ts), given by the caller from services/table.ts.
 */
export async function storeDeduplicated(
  trx: Transaction<Database>,
  target: StoreTarget,
  fresh: ContentItem[],
  mode: DedupeMode,
  version: () => Promise<number>,
  now: number,
  ownsEntries: OwnsEntries,
): Promise<{ added: number; cards: string[] }> {
  const { collectionId, contractId } = target;
  const keyed = fresh.map((item) => ({ item, keys: urlKeys(item, ownsEntries), dateMs: Date.parse(item.date) }));
  const owners = await urlOwners(trx, contractId, collectionId, [...new Set(keyed.flatMap((k) => k.keys.urlHashes))]);
  // An item whose URL a card already owns is merged whatever its text: its fingerprints are not computed.
  const printed = mode === 'url+text' ? keyed.filter((k) => !k.keys.urlHashes.some((hash) => owners.has(hash))) : [];
  // The spaces that hold cards: the collection's, and whole texts when an item of this batch may become a card indexed by one.
  const spaces = printed.length ? await indexedSpaces(trx, contractId, collectionId) : new Set<number>();
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
  for (const c of await nearCandidates(trx, contractId, collectionId, keyed, spaces)) index(c);
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
    const winners = await urlOwners(trx, contractId, collectionId, lost.map((k) => k.keys.urlHashes[0]!));
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
  await insertPrints(trx, contractId, collectionId, stay.flatMap(({ item, keys, dateMs }) => printRows(keys).map(({ key, rest }) => ({ key, itemId: item.id, dateMs, rest }))));
  if (merged.length) added += await mergeDuplicates(trx, target, merged, seq, now);
  return { added, cards: inserted };
}

/**
 * The cards owning the URL hashes among `hashes` (primary key lookups, in batches). A row whose
 * card is gone — a key that retention could not find again from the card's document
 * (`deleteCardKeys`) — is deleted and its hash is free.
 */
async function urlOwners(trx: Transaction<Database>, contractId: string, collectionId: string, hashes: string[]): Promise<Map<string, string>> {
  const rows: { urlHash: string; itemId: string }[] = [];
  for (let i = 0; i < hashes.length; i += BATCH) {
    rows.push(...(await trx.selectFrom('itemUrls').select(['urlHash', 'itemId']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('urlHash', 'in', hashes.slice(i, i + BATCH)).execute()));
  }
  const live = await cardIds(trx, contractId, collectionId, [...new Set(rows.map((row) => row.itemId))], true);
  const stale = rows.filter((row) => !live.has(row.itemId)).map((row) => row.urlHash);
  for (let i = 0; i < stale.length; i += BATCH) await trx.deleteFrom('itemUrls').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('urlHash', 'in', stale.slice(i, i + BATCH)).execute();
  return new Map(rows.filter((row) => live.has(row.itemId)).map((row) => [row.urlHash, row.itemId]));
}

/**
 * Deletes the de-duplication keys of cards being deleted (retention, docs/api.md#retention):
 * their URL hashes and those of the duplicates merged into them (`duplicates`, from
 * `item_duplicates`), and the band rows of their fingerprints, all computed again from the
 * documents and deleted by primary key. What cannot be found again so (the fingerprint of a card's
 * earlier version, keys of an older canonical form) stays; lookups skip keys of cards that are
 * gone (`urlOwners`, `nearCandidates`). `ownsEntries` as for `storeDeduplicated`.
 */
export async function deleteCardKeys(
  trx: Transaction<Database>,
  contractId: string,
  collectionId: string,
  cards: { id: string; body: unknown; dateMs: number | string }[],
  duplicates: { cardId: string; body: string }[],
  ownsEntries: OwnsEntries,
): Promise<void> {
  const ids = cards.map((card) => card.id);
  const hashes = new Set<string>();
  for (const card of cards) for (const hash of urlKeys(itemBody(card.body), ownsEntries).urlHashes) hashes.add(hash);
  for (const duplicate of duplicates) for (const hash of urlKeys(JSON.parse(duplicate.body) as ContentItem, ownsEntries).urlHashes) hashes.add(hash);
  const list = [...hashes];
  for (let i = 0; i < list.length; i += BATCH) {
    // Only rows these cards own: a hash computed here may belong to another card.
    await trx.deleteFrom('itemUrls').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('urlHash', 'in', list.slice(i, i + BATCH)).where('itemId', 'in', ids).execute();
  }
  for (const card of cards) {
    const keys = printRows(textKeys(inShape(itemBody(card.body)))).map((row) => row.key);
    if (keys.length) await trx.deleteFrom('itemPrints').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('bandKey', 'in', keys).where('dateMs', '=', Number(card.dateMs)).where('itemId', '=', card.id).execute();
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
export async function insertPrints(trx: Transaction<Database>, contractId: string, collectionId: string, rows: { key: number; itemId: string; dateMs: number; rest: number }[]): Promise<void> {
  if (!rows.length) return;
  const values = rowsParameter(isPostgres(trx), ['integer', 'text', 'bigint', 'bigint'], rows.map((r) => [r.key, r.itemId, r.dateMs, r.rest]));
  // A WHERE (the tenant term) also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
  await sql`insert into item_prints (collection_id, band_key, item_id, date_ms, rest)
    select ${collectionId}, r.* from (${values}) r where ${ofContract(contractId, collectionId)} on conflict do nothing`.execute(trx);
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
async function indexedSpaces(trx: Transaction<Database>, contractId: string, collectionId: string): Promise<Set<number>> {
  const spaces = Object.values(PRINT_SPACES);
  const probes = spaces.map(
    (space) =>
      sql`(select 1 from item_prints where collection_id = ${collectionId} and band_key >= ${space * SPACE_KEYS} and band_key < ${(space + 1) * SPACE_KEYS} limit 1)`,
  );
  const { rows } = await sql<Record<string, number | null>>`select ${sql.join(probes.map((probe, i) => sql`${probe} as ${sql.ref(`s${i}`)}`))} where ${ofContract(contractId, collectionId)}`.execute(trx);
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
async function nearCandidates(trx: Transaction<Database>, contractId: string, collectionId: string, keyed: { keys: ItemKeys; dateMs: number }[], spaces: ReadonlySet<number>): Promise<Candidate[]> {
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
      and ${withinNearBits(postgres, 'p.rest', 'probe.rest')} and ${ofContract(contractId, collectionId)}`.execute(trx);
  const found = new Map<string, Candidate>();
  for (const row of rows) {
    const simhash = fromBandRow(Number(row.bandKey), Number(row.rest));
    const space = spaceOf(Number(row.bandKey));
    found.set(`${row.itemId} ${simhash.hi} ${simhash.lo} ${space}`, { itemId: row.itemId, dateMs: Number(row.dateMs), simhash, space });
  }
  // Rows of cards that are gone (see `deleteCardKeys`) are skipped.
  const candidates = [...found.values()];
  const live = await cardIds(trx, contractId, collectionId, [...new Set(candidates.map((c) => c.itemId))], true);
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
  const { collectionId, contractId } = target;
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
    await updateCard(trx, contractId, collectionId, cardId, seq, (card) => {
      const duplicates = [...(card.duplicates ?? []), ...items.map(entryOf)];
      const score = card.kudos.score + items.reduce((sum, item) => sum + item.kudos.score, 0);
      return { ...card, duplicates, kudos: { ...card.kudos, score, duplicates: duplicates.length } };
    });
  }
  return inserted.size;
}
