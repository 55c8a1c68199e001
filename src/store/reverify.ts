/**
 * Re-verification of polled services (docs/services.md#re-verification): which stored items are
 * due for a check at their source, and when they were last checked (`items.verified_at`, migration
 * 2026-12-26-reverify).
 *
 * An item of a service with a cadence (`hours` > 0) is due when it was last checked (`verified_at`,
 * else when it was stored) `hours` or more ago and, when `days` > 0, its date is within the last
 * `days` days; items removed at the source are never due. A claim stamps the items checked now
 * before they are looked up, in one statement (on PostgreSQL skipping rows another process is
 * claiming), so collector processes sharing a database never check the same item twice. Every
 * collection is covered, active or not, ranked or realtime.
 */
import { sql } from 'kysely';
import { type Db, isPostgres } from './db.ts';

/** A stored item claimed for re-verification (one row: a collection's copy). */
export interface VerifyDue {
  /** The contract of the copy's collection and input. */
  contractId: string;
  collectionId: string;
  id: string;
  inputId: string;
  service: string;
}

/** A service's cadence: `hours` between checks (0: none), `days` of items checked by date (0: all). */
export type Cadence = Record<string, { hours: number; days: number }>;

const HOUR_MS = 3_600_000;

/**
 * Claims up to `limit` items due at `now` (ms) for re-verification among `services` (those with a
 * batch lookup), by `cadence`; least recently checked first.
 */
export async function claimVerifyDue(db: Db, now: number, options: { cadence: Cadence; services: string[]; limit: number }): Promise<VerifyDue[]> {
  const { cadence, limit } = options;
  const services = options.services.filter((service) => (cadence[service]?.hours ?? 0) > 0);
  if (!services.length || limit <= 0) return [];
  // One condition per service; the bounds are literals (numbers for the database on both dialects).
  const due = sql.join(
    services.map((service) => {
      const { hours, days } = cadence[service]!;
      const window = days > 0 ? sql` and i.date_ms >= ${sql.lit(now - days * 24 * HOUR_MS)}` : sql``;
      return sql`(i.service = ${service} and coalesce(i.verified_at, i.created_at) <= ${sql.lit(now - hours * HOUR_MS)}${window})`;
    }),
    sql` or `,
  );
  const lock = isPostgres(db) ? sql`for update of i skip locked` : sql``;
  const result = await sql<VerifyDue>`
    update items set verified_at = ${now}
    where (collection_id, id) in (
      select i.collection_id, i.id from items i
      where i.state <> 'removed' and (${due})
      order by coalesce(i.verified_at, i.created_at)
      limit ${limit}
      ${lock}
    )
    returning contract_id, collection_id, id, input_id, service`.execute(db);
  return result.rows;
}

/**
 * Stamps every stored copy (in any collection) of `ids` of `service` as checked at `at` (ms): a
 * lookup's answer holds for every collection that stored the item, so their copies are not due
 * before the next interval. For a lookup that failed, `at` is set back so that they are due again
 * when the lookup may be tried again (`releaseVerify`).
 */
export async function markVerified(db: Db, service: string, ids: string[], at: number): Promise<void> {
  for (let i = 0; i < ids.length; i += 200) {
    await db.updateTable('items').set({ verifiedAt: at }).where('service', '=', service).where('id', 'in', ids.slice(i, i + 200)).where('state', '!=', 'removed').execute();
  }
}

/**
 * Makes the items `ids` of `service` due again at `retryAt` (ms) under `cadence`: after a failed
 * lookup or a rate limit, so that they are not left until the next full interval.
 */
export async function releaseVerify(db: Db, service: string, ids: string[], retryAt: number, cadence: Cadence): Promise<void> {
  const hours = cadence[service]?.hours ?? 0;
  if (hours > 0) await markVerified(db, service, ids, retryAt - hours * HOUR_MS);
}
