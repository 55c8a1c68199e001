/**
 * Two spaces of fingerprint keys (issue 17, docs/api.md#duplicates; src/lib/item-keys.ts
 * `PRINT_SPACES`): a card indexed by the fingerprint of its whole text (it has no title of 5
 * words) now has its `item_prints` rows in the second range of band keys (`band_key` + 262 144),
 * so that an item's title-and-text fingerprint is compared only with those cards. Cards indexed by
 * their title keep their rows. Frozen: a later change is a new migration. Idempotent: a row
 * already moved is not found under its old key.
 *
 * Each collection holding fingerprints is read in batches of `BATCH` items (id order); a card
 * whose title gives no fingerprint has the four rows of its whole text's fingerprint moved. The
 * fingerprints are those of src/lib/simhash.ts as of this migration (its frozen copy,
 * `simhash-2026-11-30.ts`). Rows written for a card's earlier version (an edit) are left where
 * they are.
 */
import { type Kysely, sql } from 'kysely';
import { bandRows, simhash, SPACE_KEYS } from './simhash-2026-11-30.ts';
import { isPostgres } from './support.ts';

const BATCH = 1000;

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  const field = (name: string) => (postgres ? sql.raw(`body->>'${name}'`) : sql.raw(`json_extract(body, '$.${name}')`));
  const collections = await sql<{ id: string }>`select id from collections c where exists (select 1 from item_prints p where p.collection_id = c.id)`.execute(db);
  for (const { id: collectionId } of collections.rows) {
    let after = '';
    for (;;) {
      const { rows } = await sql<{ id: string; dateMs: number | string; title: string | null; text: string | null }>`
        select id, date_ms, ${field('title')} as title, ${field('text')} as text from items
        where collection_id = ${collectionId} and id > ${after} order by id limit ${BATCH}`.execute(db);
      if (!rows.length) break;
      after = rows.at(-1)!.id;
      const moves = rows.flatMap((row) => {
        if (simhash(row.title ?? '')) return [];
        const whole = simhash(`${row.title ?? ''} ${row.text ?? ''}`);
        return whole ? bandRows(whole).map(({ key }) => ({ key, itemId: row.id, dateMs: Number(row.dateMs) })) : [];
      });
      if (!moves.length) continue;
      // One transaction per batch (PostgreSQL runs the whole migration in one already).
      const batch = async (trx: Kysely<any>) => {
        for (const move of moves) {
          await sql`update item_prints set band_key = ${move.key + SPACE_KEYS}
            where collection_id = ${collectionId} and band_key = ${move.key} and date_ms = ${move.dateMs} and item_id = ${move.itemId}`.execute(trx);
        }
      };
      await (db.isTransaction ? batch(db) : db.transaction().execute(batch));
    }
  }
}

/** Back to one space: the moved rows return to their first keys. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`update item_prints set band_key = band_key - ${SPACE_KEYS} where band_key >= ${SPACE_KEYS}`.execute(db);
}
