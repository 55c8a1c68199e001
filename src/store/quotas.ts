/**
 * The services' quotas per credential, counted in the database (docs/api.md#quotas; the windows
 * and costs are `lib/quota-windows.ts`). A *subject* is what a quota is counted against: a
 * credential id, or `ENVIRONMENT` for the installation's own credential of the service (one
 * pseudo-credential, shared by every contract that uses it).
 *
 * Every change is atomic across processes sharing one PostgreSQL:
 * - units (YouTube, X) grow by one upsert each (`reserveUnits` adds only while the sum stays
 *   within the limit, in the same statement, so two processes cannot both take the last units);
 * - a hashtag reservation (Instagram) reads the count and adds the hashtag in one transaction that
 *   first takes its subject's lock row (an upsert of `quota_usage` period `lock`: PostgreSQL holds
 *   that row's lock until commit, so a concurrent reservation for the subject waits, then reads
 *   what the first one added; SQLite has one writer at a time anyway).
 */
import { sql, type Transaction } from 'kysely';
import { HASHTAG_LIMIT, HASHTAG_WINDOW_MS, hashtagCounts, type Period } from '../lib/quota-windows.ts';
import { iso } from '../lib/time.ts';
import { defaultCredential } from './credentials.ts';
import type { Db } from './db.ts';
import type { Executor } from './records.ts';
import type { Database, InputRow } from './tables.ts';

/** The subject of the installation's own credential of a service (from the environment). */
export const ENVIRONMENT = 'environment';

/** A credential's quota as its reads show it (docs/api.md#quotas); `resetsAt` ISO 8601, or null when nothing is counted. */
export interface QuotaView {
  name: string;
  used: number;
  limit: number;
  resetsAt: string | null;
}

/**
 * Adds `units` to the subject's `quota` in `period` if the sum stays within `limit`, in one
 * statement; returns the new sum, or undefined (and changes nothing) when it would exceed it.
 */
export async function reserveUnits(db: Executor, key: { subject: string; quota: string; period: string }, units: number, limit: number): Promise<number | undefined> {
  if (units > limit) return undefined;
  // Raw SQL: the CamelCasePlugin does not rename inside it (the columns are one word anyway).
  const { rows } = await sql<{ units: number }>`
    insert into quota_usage as q (subject, quota, period, units) values (${key.subject}, ${key.quota}, ${key.period}, ${units})
    on conflict (subject, quota, period) do update set units = q.units + excluded.units
      where q.units + excluded.units <= ${limit}
    returning units`.execute(db);
  return rows[0] ? Number(rows[0].units) : undefined;
}

/** Adds `units` (negative: gives back) to the subject's `quota` in `period`, in one statement. */
export async function addUnits(db: Executor, key: { subject: string; quota: string; period: string }, units: number): Promise<void> {
  if (units === 0) return;
  await sql`
    insert into quota_usage as q (subject, quota, period, units) values (${key.subject}, ${key.quota}, ${key.period}, ${units})
    on conflict (subject, quota, period) do update set units = q.units + excluded.units`.execute(db);
}

/** Units the subject used of `quota` in `period` (0 when none). */
export async function unitsUsed(db: Executor, key: { subject: string; quota: string; period: string }): Promise<number> {
  const row = await db
    .selectFrom('quotaUsage')
    .select('units')
    .where('subject', '=', key.subject)
    .where('quota', '=', key.quota)
    .where('period', '=', key.period)
    .executeTakeFirst();
  return row ? Number(row.units) : 0;
}

/** The hashtags counted against an Instagram subject at `now`: how many, and the oldest (it frees up first). */
export async function hashtagUsage(db: Executor, subject: string, now: number): Promise<{ used: number; oldest?: { hashtag: string; freesAt: number } }> {
  const rows = await db
    .selectFrom('quotaHashtags')
    .select(['hashtag', 'countedAt'])
    .where('subject', '=', subject)
    .where('countedAt', '>', now - HASHTAG_WINDOW_MS)
    .orderBy('countedAt')
    .orderBy('hashtag')
    .execute();
  const first = rows[0];
  return { used: rows.length, ...(first && { oldest: { hashtag: first.hashtag, freesAt: Number(first.countedAt) + HASHTAG_WINDOW_MS } }) };
}

/** Why a hashtag could not be counted: the subject's count (the limit reached) and its oldest hashtag. */
export interface HashtagRefusal {
  used: number;
  limit: number;
  oldest: { hashtag: string; freesAt: number };
}

/**
 * Counts `hashtag` (as `hashtagOf` gives it) against a subject's hashtag quota named `quota` (Instagram's) at `now`, inside `trx`:
 * nothing to do when it already counts (a lookup within its 7 days is free); else it starts a new
 * 7-day window for it, unless `HASHTAG_LIMIT` hashtags already count: then nothing changes and the
 * refusal says when the oldest frees up. See the module comment for atomicity.
 */
export async function reserveHashtag(trx: Transaction<Database>, quota: string, subject: string, hashtag: string, now: number): Promise<HashtagRefusal | undefined> {
  await sql`
    insert into quota_usage as q (subject, quota, period, units) values (${subject}, ${quota}, 'lock', 0)
    on conflict (subject, quota, period) do update set units = q.units`.execute(trx);
  const current = await trx.selectFrom('quotaHashtags').select('countedAt').where('subject', '=', subject).where('hashtag', '=', hashtag).executeTakeFirst();
  if (current && hashtagCounts(Number(current.countedAt), now)) return undefined;
  const usage = await hashtagUsage(trx, subject, now);
  if (usage.used >= HASHTAG_LIMIT) return { used: usage.used, limit: HASHTAG_LIMIT, oldest: usage.oldest! };
  await trx.deleteFrom('quotaHashtags').where('subject', '=', subject).where('countedAt', '<=', now - HASHTAG_WINDOW_MS).execute();
  await trx.insertInto('quotaHashtags').values({ subject, hashtag, countedAt: now }).execute();
  return undefined;
}

/**
 * The subject an input of `contractId` is counted against, as the collector will resolve its
 * credential (docs/api.md#credentials): the credential it names, else the contract's default of
 * its service, else the environment's when `shared` (SHARED_CREDENTIALS and the service's own
 * credential set); else none (the input will say what to connect).
 */
export async function quotaSubject(db: Executor, input: { contractId: string; service: string; credentialId?: string | null }, shared: boolean): Promise<string | undefined> {
  if (input.credentialId) return input.credentialId;
  const credential = await defaultCredential(db, input.contractId, input.service);
  if (credential) return credential.id;
  return shared ? ENVIRONMENT : undefined;
}

/**
 * A quota as a read counts it, given by the caller from the service's rule (services/module.ts
 * `quotaAt`): a hashtag quota by its name (counted over `HASHTAG_WINDOW_MS`), or a unit quota's
 * name, limit and window at the time of the read.
 */
export type CountedQuota = { kind: 'hashtags'; name: string } | { kind: 'units'; quota: string; limit: number; period: Period };

/** The use of `quota` by `subject` at `now` (ms), or undefined without a quota (the service has none, or it is off). */
export async function quotaOf(db: Executor, quota: CountedQuota | undefined, subject: string, now: number): Promise<QuotaView | undefined> {
  if (!quota) return undefined;
  if (quota.kind === 'hashtags') {
    const { used, oldest } = await hashtagUsage(db, subject, now);
    return { name: quota.name, used, limit: HASHTAG_LIMIT, resetsAt: oldest ? iso(oldest.freesAt) : null };
  }
  const used = await unitsUsed(db, { subject, quota: quota.quota, period: quota.period.key });
  return { name: quota.quota, used, limit: quota.limit, resetsAt: iso(quota.period.resetsAt) };
}

/**
 * Records that a poll of `input` did not run for want of quota: `lastError` says which quota and
 * until when, the next poll is at `nextRunAt` (ms, when it resets); `lastRun` and `failures` stay
 * as they were (nothing failed). Unless the input was changed since it was read.
 */
export async function recordQuotaWait(db: Db, input: Pick<InputRow, 'id' | 'contractId' | 'lastModified'>, wait: { lastError: string; nextRunAt: number }): Promise<void> {
  await db.updateTable('inputs').set(wait).where('contractId', '=', input.contractId).where('id', '=', input.id).where('lastModified', '=', input.lastModified).execute();
}
