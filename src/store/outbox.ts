/**
 * The webhook outbox (docs/api.md#webhooks): events are written here in the transaction of the
 * change they report (`emitEvents`), one row per event and subscribed webhook, and a delivery
 * worker (`collect/deliver.ts`) claims, sends and records them. A change commits with its events
 * or not at all, and an event stays until delivered: at least once.
 *
 * - Nearly free without webhooks: `emitEvents` reads the contract's active webhooks (one indexed
 *   read) and writes nothing when none subscribes to the events' types.
 * - In order per subject (an item, an input, a credential) and webhook: a row is claimed only when
 *   no earlier row (`seq`) of its webhook and subject is still pending, so an item's later event
 *   waits for its earlier one, retries included.
 * - One deliverer at a time: a claim sets `claimedUntil` (a lease); on PostgreSQL the claiming
 *   read locks its rows `FOR UPDATE SKIP LOCKED`, so processes claiming at once take different
 *   rows. A process that dies mid-delivery loses its claims when the lease runs out; on SQLite,
 *   where one process owns the file, the worker releases every claim when it starts.
 * - Fair between webhooks (issue 30 point 5): claims go webhook by webhook, round-robin, each
 *   with at most WEBHOOK_CONCURRENCY deliveries under way (`claimDeliveries`), so one webhook's
 *   backlog or silent receiver holds only its own slots. Claims walk indexes (the active webhooks,
 *   each one's claimed rows, each one's due rows: `webhook_id`, `status`, `nextAttemptAt`, `seq`)
 *   and stop at the limits: no sort of the backlog. A disabled webhook's pending rows are parked
 *   (due in `PARKED_MS`); enabling it again makes them due (`wakeDeliveries`).
 * - A delivery's id in the API is its `seq` in 24 hex digits (`deliveryIdOf`): access goes
 *   through its webhook, whose contract every route checks first.
 * - Retries: exponential backoff with jitter (`retryDelayMs`) until `windowMs` after the first
 *   attempt; then the delivery is `failed` and the webhook disabled (`active` 0, with the reason).
 */
import { randomBytes } from 'node:crypto';
import type { ExpressionBuilder, Insertable, Kysely, Transaction } from 'kysely';
import { iso } from '../lib/time.ts';
import { recordAudit, SLUICE } from './audit.ts';
import { type Db, isPostgres } from './db.ts';
import type { AttemptRow, Database, OutboxRow } from './tables.ts';

/** The event types a webhook may subscribe to (docs/api.md#webhook-events). */
export const EVENT_TYPES = ['item.collected', 'item.published', 'item.unpublished', 'item.pinned', 'item.unpinned', 'item.removed', 'item.rejected', 'input.failed', 'input.recovered', 'credential.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event to emit: its type, what it is about (the ordering key) and its `data`. */
export interface NewEvent {
  type: EventType;
  /** `item:<collectionId>:<itemId>`, `input:<inputId>` or `credential:<credentialId>`. */
  subject: string;
  data: Record<string, unknown>;
}

/** The subject of an item's events. */
export const itemSubject = (collectionId: string, itemId: string) => `item:${collectionId}:${itemId}`;

/** Rows per INSERT statement (11 columns: well under the bound-parameter limits). */
const BATCH = 500;

/** How far ahead the pending rows of a disabled webhook are parked: 100 years, ms. */
const PARKED_MS = 100 * 365 * 24 * 3600 * 1000;

/** A Standard Webhooks message id: `msg_` and 24 random hex characters. */
const eventId = () => `msg_${randomBytes(12).toString('hex')}`;

/** The API id of the delivery with this `seq`: 24 hex digits. */
export const deliveryIdOf = (seq: number) => seq.toString(16).padStart(24, '0');

/** The `seq` of an API delivery id (24 hex digits), or undefined when it cannot be one. */
export function seqOf(id: string): number | undefined {
  const seq = /^0*([0-9a-f]{1,13})$/.exec(id) ? Number.parseInt(id, 16) : Number.NaN;
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * Writes `events` of contract `contractId` to the outbox inside `trx` (the transaction of the
 * change), one row per event and active webhook of the contract subscribed to its type, in the
 * order given; returns how many rows were written (0, after one indexed read, when no webhook
 * subscribes). The body of each is `{type, timestamp, data}` (timestamp: `now`, ISO 8601).
 */
export async function emitEvents(trx: Transaction<Database>, contractId: string, events: NewEvent[], now = Date.now()): Promise<number> {
  if (!events.length) return 0;
  const hooks = await trx.selectFrom('webhooks').select(['id', 'events']).where('contractId', '=', contractId).where('active', '=', 1).execute();
  if (!hooks.length) return 0;
  const subscribed = hooks.map((hook) => ({ id: hook.id, types: new Set(JSON.parse(hook.events) as string[]) }));
  const timestamp = iso(now);
  const rows: Omit<OutboxRow, 'seq' | 'attempts' | 'firstAttemptAt' | 'claimedUntil' | 'deliveredAt'>[] = [];
  for (const event of events) {
    const to = subscribed.filter((hook) => hook.types.has(event.type));
    if (!to.length) continue;
    const id = eventId();
    const payload = JSON.stringify({ type: event.type, timestamp, data: event.data });
    for (const hook of to) rows.push({ webhookId: hook.id, contractId, eventId: id, type: event.type, subject: event.subject, payload, createdAt: now, status: 'pending', nextAttemptAt: now });
  }
  for (let i = 0; i < rows.length; i += BATCH) await trx.insertInto('webhookOutbox').values(rows.slice(i, i + BATCH)).execute();
  return rows.length;
}

/** A claimed delivery: the outbox row with its webhook's URL and sealed secret. */
export interface Claimed extends OutboxRow {
  url: string;
  secret: string;
  webhookModified: string;
}

/** What one claim may take (docs/api.md#webhook-delivery). */
export interface ClaimLimits {
  /** Deliveries in all, at most. */
  limit: number;
  /** Deliveries of one webhook under way at once, at most, its claimed rows in every process included (WEBHOOK_CONCURRENCY). */
  perWebhook: number;
  /** Round-robin: webhooks are served in id order from the first after this one, then from the first. */
  after?: string;
}

/** The claimable rows `o`: pending, due, not claimed, and with no earlier pending row of the same webhook and subject. */
function claimable(eb: ExpressionBuilder<Database & { o: Database['webhookOutbox'] }, 'o'>, now: number) {
  return eb.and([
    eb('o.status', '=', 'pending'),
    eb('o.nextAttemptAt', '<=', now),
    eb('o.claimedUntil', '<=', now),
    eb.not(
      eb.exists(
        eb
          .selectFrom('webhookOutbox as e')
          .select('e.seq')
          .whereRef('e.webhookId', '=', 'o.webhookId')
          .whereRef('e.subject', '=', 'o.subject')
          .where('e.status', '=', 'pending')
          .whereRef('e.seq', '<', 'o.seq'),
      ),
    ),
  ]);
}

/**
 * Claims deliveries due at `now` (ms) for `leaseMs`, webhook by webhook so that no webhook's
 * backlog fills a claim (issue 30 point 5): the active webhooks with a claimable row (pending,
 * due, not claimed by a process, no earlier pending row of the same webhook and subject) are
 * served round-robin from `limits.after`, each up to `limits.perWebhook` minus its deliveries
 * already under way (rows claimed by any process whose lease runs), soonest due first, until
 * `limits.limit` in all. On PostgreSQL the rows are locked `FOR UPDATE SKIP LOCKED`, so processes
 * claiming at once take different rows (two such claims may each see a webhook's slots free: it
 * then has at most `perWebhook` per claiming process). Each step walks an index: the active
 * webhooks, their claimed rows (a partial index) and their due rows, never the whole backlog.
 * Returns the rows in the order their webhooks were served, with `claimedUntil` set to the
 * claim's value, which the outcome must name (`recordAttempts`).
 */
export async function claimDeliveries(db: Db, now: number, limits: ClaimLimits, leaseMs: number): Promise<Claimed[]> {
  const postgres = isPostgres(db);
  if (limits.limit < 1) return [];
  return db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('webhooks as w')
      .select('w.id')
      .select((eb) =>
        eb
          .selectFrom('webhookOutbox as c')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('c.webhookId', '=', 'w.id')
          // Both terms: the first matches the partial index `webhook_outbox_claimed`.
          .where('c.claimedUntil', '>', 0)
          .where('c.claimedUntil', '>', now)
          .as('busy'),
      )
      .where('w.active', '=', 1)
      .where(({ exists, selectFrom }) => exists(selectFrom('webhookOutbox as o').select('o.seq').whereRef('o.webhookId', '=', 'w.id').where((eb) => claimable(eb, now))))
      .orderBy('w.id')
      .execute();
    const after = limits.after;
    const turn = after === undefined ? due : [...due.filter((hook) => hook.id > after), ...due.filter((hook) => hook.id <= after)];
    const rows: Omit<Claimed, 'claimedUntil'>[] = [];
    for (const hook of turn) {
      const room = Math.min(limits.perWebhook - Number(hook.busy ?? 0), limits.limit - rows.length);
      if (room < 1) continue;
      let query = trx
        .selectFrom('webhookOutbox as o')
        .innerJoin('webhooks as w', 'w.id', 'o.webhookId')
        .selectAll('o')
        .select(['w.url', 'w.secret', 'w.lastModified as webhookModified'])
        .where('o.webhookId', '=', hook.id)
        .where('w.active', '=', 1)
        .where((eb) => claimable(eb, now))
        .orderBy('o.nextAttemptAt')
        .orderBy('o.seq')
        .limit(room);
      if (postgres) query = query.forUpdate('o').skipLocked();
      rows.push(...(await query.execute()));
      if (rows.length >= limits.limit) break;
    }
    if (!rows.length) return [];
    const until = now + leaseMs;
    await trx.updateTable('webhookOutbox').set({ claimedUntil: until }).where('seq', 'in', rows.map((row) => row.seq)).execute();
    return rows.map((row) => ({ ...row, seq: Number(row.seq), claimedUntil: until })) as Claimed[];
  });
}

/** Releases every claim (SQLite, at the start of the one process that delivers); walks the partial index of claimed rows. */
export async function releaseClaims(db: Db): Promise<void> {
  await db.updateTable('webhookOutbox').set({ claimedUntil: 0 }).where('status', '=', 'pending').where('claimedUntil', '>', 0).execute();
}

/**
 * The wait before retry number `attempt` (1 after the first failure), ms: `baseMs` doubled per
 * attempt, at most `capMs`, times a jitter in [0.5, 1) from `random` (so receivers that failed
 * together are not retried together).
 */
export function retryDelayMs(attempt: number, baseMs: number, capMs = 3_600_000, random: () => number = Math.random): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.max(1, Math.round(exponential * (0.5 + random() / 2)));
}

/** What one attempt gave. */
export interface Outcome {
  at: number;
  durationMs: number;
  /** The response status, or null when none came (the error says why). */
  statusCode: number | null;
  error: string | null;
  /** At most 1 024 characters of the response body. */
  response: string | null;
}

/** The retry settings: first wait and how long after the first attempt retries go on (ms). */
export interface RetryPolicy {
  baseMs: number;
  windowMs: number;
}

/** What `recordAttempts` decided for one attempt. */
export type Recorded = 'delivered' | 'retry' | 'failed' | 'stale';

/**
 * Records the outcomes of attempts, in one transaction: per attempt its row; a 2xx marks the
 * delivery delivered; otherwise the next attempt is scheduled by `retryDelayMs`, at the latest at
 * the end of the window, and once an attempt at or past the end of the window fails the delivery
 * is `failed` and its webhook disabled with the reason (its other pending rows parked). `stale`
 * when the claim is no longer ours (its lease ran out and another process took it): nothing is
 * written for it.
 */
export async function recordAttempts(db: Db, attempts: { claimed: Claimed; outcome: Outcome }[], policy: RetryPolicy): Promise<Recorded[]> {
  if (!attempts.length) return [];
  return db.transaction().execute(async (trx) => {
    const decided: Recorded[] = [];
    const rows: Insertable<Database['webhookAttempts']>[] = [];
    for (const { claimed, outcome } of attempts) {
      const attempt = claimed.attempts + 1;
      const first = claimed.firstAttemptAt ?? outcome.at;
      const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
      const end = first + policy.windowMs;
      const giveUp = !ok && outcome.at >= end;
      const next = ok || giveUp ? null : Math.min(end, outcome.at + retryDelayMs(attempt, policy.baseMs));
      const mine = await trx
        .updateTable('webhookOutbox')
        .set({
          attempts: attempt,
          firstAttemptAt: first,
          claimedUntil: 0,
          status: ok ? 'delivered' : giveUp ? 'failed' : 'pending',
          ...(ok ? { deliveredAt: outcome.at } : {}),
          ...(next !== null ? { nextAttemptAt: next } : {}),
        })
        .where('seq', '=', claimed.seq)
        .where('claimedUntil', '=', claimed.claimedUntil)
        .executeTakeFirst();
      if (Number(mine.numUpdatedRows) === 0) {
        decided.push('stale');
        continue;
      }
      rows.push({ deliverySeq: claimed.seq, attempt, webhookId: claimed.webhookId, at: outcome.at, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs, response: outcome.response, nextAttemptAt: next });
      if (giveUp) await disable(trx, claimed, outcome, policy);
      decided.push(ok ? 'delivered' : giveUp ? 'failed' : 'retry');
    }
    for (let i = 0; i < rows.length; i += BATCH) await trx.insertInto('webhookAttempts').values(rows.slice(i, i + BATCH)).execute();
    return decided;
  });
}

/** Disables the webhook of `claimed`, whose retries ran out, saying why; parks its other pending rows. */
async function disable(trx: Transaction<Database>, claimed: Claimed, outcome: Outcome, policy: RetryPolicy): Promise<void> {
  const hours = Math.round((policy.windowMs / 3_600_000) * 10) / 10;
  const last = outcome.statusCode !== null ? `HTTP ${outcome.statusCode}` : outcome.error;
  const reason = `deliveries failed for ${hours} h (the last: ${last}); event ${claimed.eventId} (${claimed.type}) was given up; set active to true to deliver again`;
  const changed = await trx.updateTable('webhooks').set({ active: 0, disabledReason: reason, disabledAt: iso(outcome.at) }).where('id', '=', claimed.webhookId).where('active', '=', 1).executeTakeFirst();
  await parkDeliveries(trx, claimed.webhookId, outcome.at);
  if (Number(changed.numUpdatedRows) === 0) return;
  // The contract's audit trail says so, in this transaction (docs/api.md#audit-trail).
  await recordAudit(trx, { contractId: claimed.contractId, actor: SLUICE, resource: 'webhook', resourceId: claimed.webhookId, action: 'disable', before: { active: true }, after: { active: false, disabledReason: reason } }, outcome.at);
}

/** Parks the webhook's pending rows (it is inactive): claims no longer walk them. */
export async function parkDeliveries(trx: Transaction<Database>, webhookId: string, now: number): Promise<void> {
  await trx.updateTable('webhookOutbox').set({ nextAttemptAt: now + PARKED_MS }).where('webhookId', '=', webhookId).where('status', '=', 'pending').execute();
}

/** Makes the webhook's pending rows due at `now` (it is active again). */
export async function wakeDeliveries(trx: Transaction<Database>, webhookId: string, now: number): Promise<void> {
  await trx.updateTable('webhookOutbox').set({ nextAttemptAt: now }).where('webhookId', '=', webhookId).where('status', '=', 'pending').execute();
}

/** A delivery as `GET /collection/webhooks/{id}/deliveries` lists it, with its attempts. */
export interface DeliveryWithAttempts extends OutboxRow {
  attemptRows: AttemptRow[];
}

/** The webhook's deliveries, newest first, at most `limit`, each with its attempts (oldest first). */
export async function listDeliveries(db: Db, webhookId: string, limit: number, status?: string): Promise<DeliveryWithAttempts[]> {
  let query = db.selectFrom('webhookOutbox').selectAll().where('webhookId', '=', webhookId);
  if (status) query = query.where('status', '=', status);
  const rows = (await query.orderBy('seq', 'desc').limit(limit).execute()).map((row) => ({ ...row, seq: Number(row.seq) }));
  const attempts = rows.length ? await db.selectFrom('webhookAttempts').selectAll().where('deliverySeq', 'in', rows.map((row) => row.seq)).orderBy('attempt').execute() : [];
  const byDelivery = Map.groupBy(attempts, (attempt) => Number(attempt.deliverySeq));
  return rows.map((row) => ({ ...row, attemptRows: byDelivery.get(row.seq) ?? [] }));
}

/** The webhook's delivery with API id `id` (`deliveryIdOf`), or undefined. */
export async function findDelivery(db: Db, webhookId: string, id: string): Promise<DeliveryWithAttempts | undefined> {
  const seq = seqOf(id);
  if (seq === undefined) return undefined;
  const row = await db.selectFrom('webhookOutbox').selectAll().where('webhookId', '=', webhookId).where('seq', '=', seq).executeTakeFirst();
  if (!row) return undefined;
  const attemptRows = await db.selectFrom('webhookAttempts').selectAll().where('deliverySeq', '=', seq).orderBy('attempt').execute();
  return { ...row, seq, attemptRows };
}

/**
 * Makes the webhook's delivery `id` pending again, due at `now`, with a new retry window (its
 * attempts keep counting): `POST /collection/webhooks/{id}/deliveries/{deliveryId}/resend`.
 * Returns whether it exists.
 */
export async function resendDelivery(db: Db, webhookId: string, id: string, now: number): Promise<boolean> {
  const seq = seqOf(id);
  if (seq === undefined) return false;
  const result = await db
    .updateTable('webhookOutbox')
    .set({ status: 'pending', nextAttemptAt: now, firstAttemptAt: null, claimedUntil: 0 })
    .where('webhookId', '=', webhookId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes the deliveries and attempts of these webhooks of the contract (the webhooks are being deleted). */
export async function deleteDeliveries(trx: Transaction<Database>, contractId: string, webhookIds: string[]): Promise<void> {
  if (!webhookIds.length) return;
  await trx.deleteFrom('webhookAttempts').where('webhookId', 'in', webhookIds).execute();
  await trx.deleteFrom('webhookOutbox').where('contractId', '=', contractId).where('webhookId', 'in', webhookIds).execute();
}

/**
 * Deletes deliveries that ended (delivered or failed) before `before` (ms), with their attempts,
 * at most `limit` at a time; returns how many. The outbox keeps what was sent for a while for
 * `GET …/deliveries` and resending, not forever.
 */
export async function pruneDeliveries(db: Db, before: number, limit = 1000): Promise<number> {
  const old = await db.selectFrom('webhookOutbox').select('seq').where('status', 'in', ['delivered', 'failed']).where('createdAt', '<', before).orderBy('seq').limit(limit).execute();
  if (!old.length) return 0;
  const seqs = old.map((row) => Number(row.seq));
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('webhookAttempts').where('deliverySeq', 'in', seqs).execute();
    await trx.deleteFrom('webhookOutbox').where('seq', 'in', seqs).execute();
  });
  return old.length;
}

/** Pending deliveries, of one webhook or all (the benchmark's progress). */
export async function pendingCount(db: Db | Kysely<Database>, webhookId?: string): Promise<number> {
  let query = db.selectFrom('webhookOutbox').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending');
  if (webhookId) query = query.where('webhookId', '=', webhookId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}
