/**
 * Inputs (docs/api.md#inputs, docs/services.md#polling): what to collect, from which service, for
 * which collection; plus the collector's bookkeeping (schedule, errors, counters, source state).
 * Every read or change of a contract's inputs carries the contract id
 * (docs/architecture.md#tenant-in-every-query): as a parameter, or as the `contractId` of the
 * input row the collector holds. The scheduling queries over every contract's inputs (due,
 * claims, streams) are the installation's, listed in test/store-tenant.test.ts.
 */
import { type RawBuilder, type Transaction, sql } from 'kysely';
import { insertAll } from './batch.ts';
import { type Db, isPostgres } from './db.ts';
import type { Database, FeedMode, InputRow, InputUpdate, NewInput } from './tables.ts';

/** Inserts the inputs, any number of them (in batches under the parameter limit, `insertAll`). */
export async function insertInputs(trx: Transaction<Database>, rows: NewInput[]): Promise<void> {
  await insertAll(trx, 'inputs', rows);
}

/** The contract's input with this id, or undefined (none, or another contract's). */
export async function findInput(db: Db, contractId: string, id: string): Promise<InputRow | undefined> {
  return db.selectFrom('inputs').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/** The contract's inputs with these ids that exist, in id order (others' are left out). */
export async function findInputs(db: Db | Transaction<Database>, contractId: string, ids: string[]): Promise<InputRow[]> {
  if (!ids.length) return [];
  return db.selectFrom('inputs').selectAll().where('contractId', '=', contractId).where('id', 'in', ids).orderBy('id').execute();
}

/**
 * The ids of the inputs of `service`, of every contract, active or not, that follow the source
 * `input` (the text stored: a feed's URL in its canonical form, `sourceForm`): those whose items a
 * deletion announced by that source concerns, and no other (an Atom tombstone's `ref` means
 * something only within its feed: docs/services.md#rss, "Deletions").
 */
export async function inputIdsOfSource(db: Db | Transaction<Database>, service: string, input: string): Promise<string[]> {
  const rows = await db.selectFrom('inputs').select('id').where('service', '=', service).where('input', '=', input).orderBy('id').execute();
  return rows.map((row) => row.id);
}

/** The contract's inputs, optionally of one collection, oldest first. */
export async function listInputs(db: Db | Transaction<Database>, contractId: string, collectionId?: string): Promise<InputRow[]> {
  let query = db.selectFrom('inputs').selectAll().where('contractId', '=', contractId);
  if (collectionId) query = query.where('collectionId', '=', collectionId);
  return query.orderBy('id').execute();
}

/** Changes the columns `changes` of the contract's input `id` (nothing when it is gone or another contract's). */
export async function updateInput(db: Db | Transaction<Database>, contractId: string, id: string, changes: InputUpdate): Promise<void> {
  await db.updateTable('inputs').set(changes).where('contractId', '=', contractId).where('id', '=', id).execute();
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

/** `liveInputs` due at `now` (ms): `nextRunAt` reached, and not claimed by a collector process whose lease runs (`claimDueInputs`). */
function dueAt(db: Db, now: number) {
  return liveInputs(db)
    .where('inputs.nextRunAt', '<=', now)
    .where((eb) => eb.or([eb('inputs.claimedUntil', 'is', null), eb('inputs.claimedUntil', '<=', now)]));
}

/**
 * Inputs due for a poll at `now` (ms): those that may run (`liveInputs`) whose `nextRunAt` is
 * reached and that no process has claimed; soonest first, at most `limit`, skipping `exclude`
 * (polls under way).
 */
export async function dueInputs(db: Db, now: number, limit: number, exclude: string[] = []): Promise<InputRow[]> {
  let query = dueAt(db, now);
  if (exclude.length) query = query.where('inputs.id', 'not in', exclude);
  return query.orderBy('inputs.nextRunAt').limit(limit).execute();
}

/** Whether any input is due at `now` (ms) and not claimed (`dueInputs`); one row read at most. */
export async function anyDueInput(db: Db, now: number): Promise<boolean> {
  return (await dueAt(db, now).clearSelect().select('inputs.id').limit(1).executeTakeFirst()) !== undefined;
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
 * The politeness key (lib/politeness.ts `politenessKey`) of the `inputs` row in SQL: on
 * PostgreSQL the same rule written with a regular expression (the host of an http(s) URL, lower
 * case; else `<service>:<contract id>:<credential id or default>`), on SQLite a call of that very
 * function (registered by `openDb` as `politeness_key`).
 */
export function politenessKeySql(db: Db): RawBuilder<string> {
  const [service, input, contractId, credentialId] = (['inputs.service', 'inputs.input', 'inputs.contractId', 'inputs.credentialId'] as const).map((column) => sql.ref(column));
  if (!isPostgres(db)) return sql<string>`politeness_key(${service}, ${input}, ${contractId}, ${credentialId})`;
  return sql<string>`(case when ${input} ~* '^https?://' then lower(substring(${input} from '^[A-Za-z]+://(?:[^/?#]*@)?(\\[[0-9A-Fa-f:.]*\\]|[^/?#:]*)')) else ${service} || ':' || ${contractId} || ':' || coalesce(${credentialId}, 'default') end)`;
}

/** A claimed input (`claimDueInputs`): `claimedUntil` (ms) identifies the claim. */
export type ClaimedInput = InputRow & { claimedUntil: number };

/**
 * Claims up to `limit` due inputs (as `dueInputs`) for one collector process among several
 * (docs/operations.md#several-processes), taking only inputs it can start now: of each
 * politeness key at most `perKey` (COLLECT_HOST_CONCURRENCY) minus the inputs of that key already
 * claimed by any process whose lease runs, soonest due first. Each claimed input's
 * `claimedUntil` becomes `now + leaseMs` (ms): no process claims it again until the claim is
 * released (`releaseSlot`, when its poll ends; `releaseClaims`) or runs out (the claimer died);
 * its `nextRunAt` stays the time it was due. Claims are taken one at a time across processes (on
 * PostgreSQL a transaction-level advisory lock per schema; SQLite runs one write at a time, and
 * here the claim is one statement), so the slots of a key are never over-counted. Walks the
 * due inputs (index `inputs_due`) and the claimed ones (partial index `inputs_claimed`), never
 * the whole table.
 */
export async function claimDueInputs(db: Db, now: number, limit: number, leaseMs: number, perKey: number): Promise<ClaimedInput[]> {
  if (limit < 1) return [];
  const until = now + leaseMs;
  const key = politenessKeySql(db);
  const inputsId = sql.ref('inputs.id');
  const due = dueAt(db, now)
    .clearSelect()
    .select(['inputs.id', 'inputs.nextRunAt'])
    .select(key.as('politenessKey'))
    .select(sql<number>`row_number() over (partition by ${key} order by ${sql.ref('inputs.nextRunAt')}, ${inputsId})`.as('rank'));
  const claimed = db
    .selectFrom('inputs')
    .select(key.as('politenessKey'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    // Both terms: the first matches the partial index `inputs_claimed`.
    .where('inputs.claimedUntil', 'is not', null)
    .where('inputs.claimedUntil', '>', now)
    .groupBy(key);
  const chosen = sql<{ id: string }>`with due as materialized ${due}, claimed as materialized ${claimed}
    select due.id from due left join claimed on claimed.politeness_key = due.politeness_key
    where due.rank <= ${perKey} - coalesce(claimed.n, 0) order by due.next_run_at, due.id limit ${limit}`;
  const claim = async (executor: Db | Transaction<Database>) => {
    const { rows } = await sql<InputRow>`update inputs set claimed_until = ${until} where id in (${chosen}) returning *`.execute(executor);
    return rows;
  };
  const rows = isPostgres(db)
    ? await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(current_schema() || ':sluice-claim-inputs'))`.execute(trx);
        return claim(trx);
      })
    : await claim(db);
  return rows
    .map((row) => ({ ...row, claimedUntil: until }))
    .sort((a, b) => a.nextRunAt - b.nextRunAt || (a.id < b.id ? -1 : 1));
}

/**
 * Gives back claims (`claimDueInputs`) of inputs not polled: each input whose `claimedUntil` is
 * still its claim's value is free again, due as it was, for any process to claim.
 */
export async function releaseClaims(db: Db, claimed: Pick<ClaimedInput, 'id' | 'claimedUntil'>[]): Promise<void> {
  for (const [claim, inputs] of Map.groupBy(claimed, (input) => input.claimedUntil)) {
    await db.updateTable('inputs').set({ claimedUntil: null }).where('id', 'in', inputs.map((input) => input.id)).where('claimedUntil', '=', claim).execute();
  }
}

/**
 * Releases the claim of an input whose poll has ended (its outcome set the next run): its
 * politeness key's slot is free at once for any process (`claimDueInputs`). Nothing happens when
 * the claim is no longer this one.
 */
export async function releaseSlot(db: Db, claimed: Pick<ClaimedInput, 'id' | 'contractId' | 'claimedUntil'>): Promise<void> {
  await db.updateTable('inputs').set({ claimedUntil: null }).where('contractId', '=', claimed.contractId).where('id', '=', claimed.id).where('claimedUntil', '=', claimed.claimedUntil).execute();
}

/**
 * Whether `input` is still as the collector read it (same `lastModified`), inside the poll's
 * transaction: a poll of an input changed meanwhile is dropped, as the change scheduled a new one.
 */
export async function inputUnchanged(trx: Transaction<Database>, input: Pick<InputRow, 'id' | 'contractId' | 'lastModified'>): Promise<boolean> {
  const current = await trx.selectFrom('inputs').select('lastModified').where('contractId', '=', input.contractId).where('id', '=', input.id).executeTakeFirst();
  return current?.lastModified === input.lastModified;
}

/**
 * Records a successful poll of `input`: the connector's new `sourceState` (JSON), the times
 * (`lastRun`, `lastSuccess` ISO 8601; `nextRunAt` ms), no error, no failures, this poll's
 * `warnings` (a JSON array, docs/api.md#input-status) in place of the last ones, and `collected`
 * and `rejected` grown by this poll's new items and rejections (in SQL, so concurrent writers add
 * up), and the source's own title (`sourceTitle`) when the poll read one (else the stored one
 * stays); unless the input was changed since it was read (same test as `inputUnchanged`, in the same
 * statement, so a poll with nothing to store needs no transaction). Returns whether it was recorded.
 */
export async function recordPollSuccess(
  db: Db | Transaction<Database>,
  input: Pick<InputRow, 'id' | 'contractId' | 'lastModified'>,
  poll: { sourceState: string; lastRun: string; lastSuccess: string; nextRunAt: number; collected: number; rejected: number; warnings: string; sourceTitle?: string | undefined },
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
      ...(poll.sourceTitle ? { sourceTitle: poll.sourceTitle } : {}),
    })
    .where('contractId', '=', input.contractId)
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
  input: Pick<InputRow, 'id' | 'contractId' | 'lastModified'>,
  poll: { lastRun: string; lastError: string; failures: number; nextRunAt: number },
): Promise<boolean> {
  const result = await db.updateTable('inputs').set(poll).where('contractId', '=', input.contractId).where('id', '=', input.id).where('lastModified', '=', input.lastModified).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Marks inputs `ids` (of any contracts: one stream serves many) as fed by `mode` (docs/api.md#input-status): `feedSince` becomes `now` (ms)
 * for those whose mode changes; inputs already fed so keep their `feedSince`.
 */
export async function setFeedMode(db: Db | Transaction<Database>, ids: string[], mode: FeedMode, now = Date.now()): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('inputs').set({ feedMode: mode, feedSince: now }).where('id', 'in', ids).where('feedMode', '!=', mode).execute();
}

/**
 * Records items pushed or streamed to the contract's input `id` (not a poll: its schedule, source state and
 * error stay as they are): `collected` and `rejected` grow by `added` and `rejected`, and
 * `lastEventAt` becomes `at` (ms). Answers false when the input is gone or inactive.
 */
export async function recordPushed(trx: Transaction<Database>, contractId: string, id: string, pushed: { added: number; rejected: number; at: number }): Promise<boolean> {
  const result = await trx
    .updateTable('inputs')
    .set({ collected: sql<number>`collected + ${pushed.added}`, rejected: sql<number>`rejected + ${pushed.rejected}`, lastEventAt: pushed.at })
    .where('contractId', '=', contractId)
    .where('id', '=', id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Takes the contract's input `id`'s turn for a poll now (docs/api.md#poll-now): when no poll now took it in the
 * last `everyMs` (ms) before `now`, records `now` (`pollNowAt`) and answers 0; else answers how
 * many ms until the next turn. One statement, so two requests at once cannot both take it.
 */
export async function takePollNowTurn(db: Db, contractId: string, id: string, now: number, everyMs: number): Promise<number> {
  const taken = await db
    .updateTable('inputs')
    .set({ pollNowAt: now })
    .where('contractId', '=', contractId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('pollNowAt', 'is', null), eb('pollNowAt', '<=', now - everyMs)]))
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) > 0) return 0;
  const row = await db.selectFrom('inputs').select('pollNowAt').where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
  return Math.max(1, (row?.pollNowAt ?? now) + everyMs - now);
}

/**
 * Claims the contract's input `id` for a poll outside the schedule (docs/api.md#poll-now), as `claimDueInputs`
 * claims due ones: `claimedUntil` becomes `now + leaseMs` (ms) when the input is not claimed
 * already (`busy: 'input'`: a poll of it is under way) and its politeness key has fewer than
 * `perKey` (COLLECT_HOST_CONCURRENCY) claims whose lease runs (`busy: 'host'`). Taken under the
 * same lock as `claimDueInputs` on PostgreSQL, so the slots of a key are never over-counted;
 * release it with `releaseSlot`.
 */
export async function claimInput(db: Db, contractId: string, id: string, now: number, leaseMs: number, perKey: number): Promise<ClaimedInput | { busy: 'input' | 'host' }> {
  const until = now + leaseMs;
  const key = politenessKeySql(db);
  const claim = async (executor: Db | Transaction<Database>): Promise<ClaimedInput | { busy: 'input' | 'host' }> => {
    const row = await executor.selectFrom('inputs').select(['inputs.claimedUntil']).select(key.as('politenessKey')).where('inputs.contractId', '=', contractId).where('inputs.id', '=', id).executeTakeFirst();
    if (!row) return { busy: 'input' };
    if (row.claimedUntil !== null && row.claimedUntil > now) return { busy: 'input' };
    const held = await executor
      .selectFrom('inputs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('inputs.claimedUntil', 'is not', null)
      .where('inputs.claimedUntil', '>', now)
      .where(key, '=', row.politenessKey)
      .executeTakeFirstOrThrow();
    if (Number(held.n) >= perKey) return { busy: 'host' };
    const [claimed] = await sql<InputRow>`update inputs set claimed_until = ${until} where contract_id = ${contractId} and id = ${id} returning *`.execute(executor).then((result) => result.rows);
    return claimed ? { ...claimed, claimedUntil: until } : { busy: 'input' };
  };
  return isPostgres(db)
    ? db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(current_schema() || ':sluice-claim-inputs'))`.execute(trx);
        return claim(trx);
      })
    : db.transaction().execute(claim);
}
