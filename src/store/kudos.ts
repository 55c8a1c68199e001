/**
 * Kudos that keep counting (docs/services.md#kudos-refresh): which items of ranked collections
 * are due for a fresh read of their engagement, and writing what was read.
 *
 * An item is due when it is younger than the window (KUDOS_WINDOW, by its `date`) and its kudos
 * were last read (`kudos_at`, else when it was stored) longer ago than its age's interval
 * (`KUDOS_TIERS` of src/lib/ranking.ts × KUDOS_REFRESH); an item removed at the source
 * (docs/api.md#removed-at-the-source) is never due. A claim marks the items read now before
 * they are looked up, in one statement (on PostgreSQL skipping rows another process is claiming),
 * so collector processes sharing a database never look the same item up twice; a lookup that
 * fails leaves them until their next interval.
 */
import { sql, type Updateable } from 'kysely';
import type { ContentItem } from '../item.ts';
import { KUDOS_TIERS, trendingScore } from '../lib/ranking.ts';
import { iso } from '../lib/time.ts';
import { type Db, isPostgres } from './db.ts';
import { bumpVersion } from './items/changes.ts';
import { itemBody } from './items/rows.ts';
import type { Database } from './tables.ts';

/** An item claimed for a kudos refresh. */
export interface KudosDue {
  collectionId: string;
  id: string;
  inputId: string;
  contractId: string;
  service: string;
}

/**
 * Claims up to `limit` items due for a kudos refresh at `now` (ms) among `services` (those with
 * a batch lookup), oldest read first; `refreshS` and `windowS` in seconds.
 */
export async function claimKudosDue(db: Db, now: number, options: { refreshS: number; windowS: number; services: string[]; limit: number }): Promise<KudosDue[]> {
  const { refreshS, windowS, services, limit } = options;
  if (!services.length || limit <= 0) return [];
  // The intervals are literals: typed by the database as numbers (parameters would be text in a CASE on PostgreSQL).
  const interval = sql.join(
    KUDOS_TIERS.map((tier, i) =>
      i === KUDOS_TIERS.length - 1 ? sql`else ${sql.lit(tier.factor * refreshS * 1000)}` : sql`when i.date_ms > ${now - tier.untilS * 1000} then ${sql.lit(tier.factor * refreshS * 1000)}`,
    ),
    sql` `,
  );
  const lock = isPostgres(db) ? sql`for update of i skip locked` : sql``;
  const result = await sql<{ collectionId: string; id: string; inputId: string; contractId: string; service: string }>`
    update items set kudos_at = ${now}
    where (collection_id, id) in (
      select i.collection_id, i.id from items i join collections c on c.id = i.collection_id
      where c.type = 'ranked' and c.active = 1
        and i.date_ms >= ${now - windowS * 1000}
        and i.service in (${sql.join(services)})
        and i.state <> 'removed'
        and coalesce(i.kudos_at, i.created_at) + (case ${interval} end) <= ${now}
      order by coalesce(i.kudos_at, i.created_at)
      limit ${limit}
      ${lock}
    )
    returning collection_id, id, input_id, contract_id, service`.execute(db);
  return result.rows;
}

/**
 * Writes the kudos read at `now` (ms) for items of collection `collectionId` of contract `contractId` (`kudos` by item id,
 * as the connector makes them): per item whose counters changed, its `kudos` become the fresh
 * counters and score plus what its duplicates add (docs/api.md#duplicates), with `updated` (ISO
 * 8601); `score` and `trend` follow; state and everything else stay, and a published one is
 * stamped with a new collection version (its `seq`), so streams, caches and walls see the new
 * counts. An item whose counters are as they were keeps its document; only `kudosAt` (when it was
 * read) moves. One transaction; answers how many items' scores changed.
 */
export async function updateKudos(db: Db, contractId: string, collectionId: string, kudos: Map<string, ContentItem['kudos']>, now: number): Promise<number> {
  const ids = [...kudos.keys()];
  if (!ids.length) return 0;
  return db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('items').select(['id', 'body', 'state', 'dateMs', 'score']).where('collectionId', '=', collectionId).where('id', 'in', ids).where('contractId', '=', contractId).execute();
    const cards = rows.filter((row) => (itemBody(row.body).kudos.duplicates ?? 0) !== 0).map((row) => row.id);
    const extra = new Map<string, number>();
    if (cards.length) {
      const duplicates = await trx.selectFrom('itemDuplicates').select(['cardId', 'body']).where('collectionId', '=', collectionId).where('cardId', 'in', cards).execute();
      for (const d of duplicates) extra.set(d.cardId, (extra.get(d.cardId) ?? 0) + (Number(itemBody(d.body).kudos?.score) || 0));
    }
    let seq: number | undefined;
    let changed = 0;
    for (const row of rows) {
      const body = itemBody(row.body);
      const fresh = kudos.get(row.id)!;
      const score = fresh.score + (extra.get(row.id) ?? 0);
      const counters = { ...fresh, score, ...(body.kudos.duplicates !== undefined && { duplicates: body.kudos.duplicates }) };
      // Read again and found as they were: only the time of the next refresh moves.
      let set: Updateable<Database['items']> = { kudosAt: now };
      if (!sameCounters(body.kudos, counters)) {
        if (score !== Number(row.score)) changed++;
        set = { ...set, body: JSON.stringify({ ...body, kudos: { ...counters, updated: iso(now) } }), score, trend: trendingScore(score, Number(row.dateMs)) };
        // Every change to a published item's document gets a new seq (queue/read-path.ts keys its JSON on it).
        if (row.state === 'published') set.seq = seq ??= await bumpVersion(trx, contractId, collectionId);
      }
      await trx.updateTable('items').set(set).where('contractId', '=', contractId).where('collectionId', '=', collectionId).where('id', '=', row.id).execute();
    }
    return changed;
  });
}

/** Whether `before` (a stored item's kudos) holds exactly the counters of `after`, `updated` aside. */
function sameCounters(before: ContentItem['kudos'], after: ContentItem['kudos']): boolean {
  const keys = (kudos: ContentItem['kudos']) => Object.keys(kudos).filter((key) => key !== 'updated');
  const names = keys(after);
  return keys(before).length === names.length && names.every((key) => before[key] === after[key]);
}
