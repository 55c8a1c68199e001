/**
 * Inputs (docs/api.md#inputs, docs/services.md#polling): what to collect, from which service, for
 * which collection; plus the collector's bookkeeping (schedule, errors, counters, source state).
 * Every read by id returns the row whatever its contract: callers check access.
 */
import { type Transaction, sql } from 'kysely';
import { insertAll } from './batch.ts';
import type { Db } from './db.ts';
import type { Database, FeedMode, InputRow, InputUpdate, NewInput } from './tables.ts';

/** Inserts the inputs, any number of them (in batches under the parameter limit, `insertAll`). */
export async function insertInputs(trx: Transaction<Database>, rows: NewInput[]): Promise<void> {
  await insertAll(trx, 'inputs', rows);
}

/** The input with this id, of any contract (callers check the contract), or undefined. */
export async function findInput(db: Db, id: string): Promise<InputRow | undefined> {
  return db.selectFrom('inputs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The inputs with these ids that exist, of any contract, in id order. */
export async function findInputs(db: Db | Transaction<Database>, ids: string[]): Promise<InputRow[]> {
  if (!ids.length) return [];
  return db.selectFrom('inputs').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

/** The contract's inputs, optionally of one collection, oldest first. */
export async function listInputs(db: Db, contractId: string, collectionId?: string): Promise<InputRow[]> {
  let query = db.selectFrom('inputs').selectAll().where('contractId', '=', contractId);
  if (collectionId) query = query.where('collectionId', '=', collectionId);
  return query.orderBy('id').execute();
}

/** Changes the columns `changes` of input `id` (nothing when it is gone). */
export async function updateInput(db: Db | Transaction<Database>, id: string, changes: InputUpdate): Promise<void> {
  await db.updateTable('inputs').set(changes).where('id', '=', id).execute();
}

/**
 * Deletes the contract's inputs with these ids and their record of rejected items; the items
 * they collected stay in their queues.
 */
export async function deleteInputs(trx: Transaction<Database>, contractId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await trx.deleteFrom('rejections').where('contractId', '=', contractId).where('inputId', 'in', ids).execute();
  await trx.deleteFrom('inputs').where('contractId', '=', contractId).where('id', 'in', ids).execute();
}

/**
 * The query of the inputs that may run: active, in an active collection of an active contract
 * (docs/api.md#collections: an inactive collection is not collected; the same holds for a
 * contract), every column of `inputs`. Callers add their own conditions and order.
 */
export function liveInputs(db: Db) {
  return db
    .selectFrom('inputs')
    .innerJoin('collections', 'collections.id', 'inputs.collectionId')
    .innerJoin('contracts', 'contracts.id', 'inputs.contractId')
    .selectAll('inputs')
    .where('inputs.active', '=', 1)
    .where('collections.active', '=', 1)
    .where('contracts.active', '=', 1);
}

/**
 * Inputs due for a poll at `now` (ms): those that may run (`liveInputs`) whose `nextRunAt` is
 * reached; soonest first, at most `limit`, skipping `exclude` (polls under way).
 */
export async function dueInputs(db: Db, now: number, limit: number, exclude: string[] = []): Promise<InputRow[]> {
  let query = liveInputs(db).where('inputs.nextRunAt', '<=', now);
  if (exclude.length) query = query.where('inputs.id', 'not in', exclude);
  return query.orderBy('inputs.nextRunAt').limit(limit).execute();
}

/**
 * The active inputs of `service` (of one of `types` when given), in an active collection of an
 * active contract, of every contract: what a stream serving many inputs (Mastodon streaming,
 * the Bluesky Jetstream listener: docs/services.md#push-and-streams) matches each event against,
 * storing it per input.
 */
export async function activeInputsOf(db: Db, service: string, types?: string[]): Promise<InputRow[]> {
  if (types && !types.length) return [];
  let query = liveInputs(db).where('inputs.service', '=', service);
  if (types) query = query.where('inputs.type', 'in', types);
  return query.orderBy('inputs.id').execute();
}

/**
 * Claims up to `limit` due inputs (as `dueInputs`) for one collector process among several: each
 * claimed input's `nextRunAt` is pushed to `now + leaseMs` (one update), so no other process claims it again
 * until the poll records its outcome (which sets the real next run) or the lease runs out (the
 * claimer died). The update re-checks that the input is still due, so of two processes that saw the
 * same due input only one gets it back (read committed re-checks the condition on PostgreSQL;
 * SQLite writes one at a time). Returns the claimed rows as they were before the claim, with
 * `nextRunAt` set to the claim's value, which identifies this claim, and `dueAt` the time (ms) it was due.
 */
export async function claimDueInputs(db: Db, now: number, limit: number, leaseMs: number): Promise<(InputRow & { dueAt: number })[]> {
  const due = await dueInputs(db, now, limit);
  if (!due.length) return [];
  const until = now + leaseMs;
  const won = await db
    .updateTable('inputs')
    .set({ nextRunAt: until })
    .where('id', 'in', due.map((input) => input.id))
    .where('nextRunAt', '<=', now)
    .returning('id')
    .execute();
  const ids = new Set(won.map((row) => row.id));
  return due.filter((input) => ids.has(input.id)).map((input) => ({ ...input, nextRunAt: until, dueAt: input.nextRunAt }));
}

/**
 * Gives back claims (`claimDueInputs`) of inputs not polled: each input whose `nextRunAt` is
 * still its claim's value is due again at `now` (ms), for any process to claim.
 */
export async function releaseClaims(db: Db, claimed: Pick<InputRow, 'id' | 'nextRunAt'>[], now: number): Promise<void> {
  for (const [claim, inputs] of Map.groupBy(claimed, (input) => input.nextRunAt)) {
    await db.updateTable('inputs').set({ nextRunAt: now }).where('id', 'in', inputs.map((input) => input.id)).where('nextRunAt', '=', claim).execute();
  }
}

/**
 * Whether `input` is still as the collector read it (same `lastModified`), inside the poll's
 * transaction: a poll of an input changed meanwhile is dropped, as the change scheduled a new one.
 */
export async function inputUnchanged(trx: Transaction<Database>, input: Pick<InputRow, 'id' | 'lastModified'>): Promise<boolean> {
  const current = await trx.selectFrom('inputs').select('lastModified').where('id', '=', input.id).executeTakeFirst();
  return current?.lastModified === input.lastModified;
}

/**
 * Records a successful poll of `input`: the connector's new `sourceState` (JSON), the times
 * (`lastRun`, `lastSuccess` ISO 8601; `nextRunAt` ms), no error, no failures, this poll's
 * `warnings` (a JSON array, docs/api.md#input-status) in place of the last ones, and `collected`
 * and `rejected` grown by this poll's new items and rejections (in SQL, so concurrent writers add
 * up); unless the input was changed since it was read (same test as `inputUnchanged`, in the same
 * statement, so a poll with nothing to store needs no transaction). Returns whether it was recorded.
 */
export async function recordPollSuccess(
  db: Db | Transaction<Database>,
  input: Pick<InputRow, 'id' | 'lastModified'>,
  poll: { sourceState: string; lastRun: string; lastSuccess: string; nextRunAt: number; collected: number; rejected: number; warnings: string },
): Promise<boolean> {
  const result = await db
    .updateTable('inputs')
    .set({
      sourceState: poll.sourceState,
      lastRun: poll.lastRun,
      lastSuccess: poll.lastSuccess,
      lastError: null,
      failures: 0,
      nextRunAt: poll.nextRunAt,
      warnings: poll.warnings,
      collected: sql<number>`collected + ${poll.collected}`,
      rejected: sql<number>`rejected + ${poll.rejected}`,
    })
    .where('id', '=', input.id)
    .where('lastModified', '=', input.lastModified)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Records a failed poll of `input` (`lastRun` ISO 8601, `lastError` the message shown in its
 * status, the count of consecutive `failures`, `nextRunAt` ms), unless the input was changed
 * since it was read (then the change's own schedule stands); returns whether it was recorded.
 */
export async function recordPollFailure(
  db: Db | Transaction<Database>,
  input: Pick<InputRow, 'id' | 'lastModified'>,
  poll: { lastRun: string; lastError: string; failures: number; nextRunAt: number },
): Promise<boolean> {
  const result = await db.updateTable('inputs').set(poll).where('id', '=', input.id).where('lastModified', '=', input.lastModified).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Marks inputs `ids` as fed by `mode` (docs/api.md#input-status): `feedSince` becomes `now` (ms)
 * for those whose mode changes; inputs already fed so keep their `feedSince`.
 */
export async function setFeedMode(db: Db | Transaction<Database>, ids: string[], mode: FeedMode, now = Date.now()): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('inputs').set({ feedMode: mode, feedSince: now }).where('id', 'in', ids).where('feedMode', '!=', mode).execute();
}

/**
 * Records items pushed or streamed to input `id` (not a poll: its schedule, source state and
 * error stay as they are): `collected` and `rejected` grow by `added` and `rejected`, and
 * `lastEventAt` becomes `at` (ms). Answers false when the input is gone or inactive.
 */
export async function recordPushed(trx: Transaction<Database>, id: string, pushed: { added: number; rejected: number; at: number }): Promise<boolean> {
  const result = await trx
    .updateTable('inputs')
    .set({ collected: sql<number>`collected + ${pushed.added}`, rejected: sql<number>`rejected + ${pushed.rejected}`, lastEventAt: pushed.at })
    .where('id', '=', id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
