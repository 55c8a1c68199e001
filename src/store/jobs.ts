/**
 * Background jobs (docs/api.md#jobs; migration 2026-11-28-audit-jobs): work too large for one
 * request, run by the job runner (management/jobs/runner.ts) and read by `GET /collection/jobs/{id}`.
 * A job moves `queued` → `running` → `done` (with its result) or `failed` (with its error
 * entries); `done` of `total` is its progress. Finishing is conditional on the job still
 * running, in the transaction of the job's change, so a job whose work was done is never done
 * twice (a second runner's transaction finds it finished and rolls back).
 */
import type { Transaction } from 'kysely';
import { newId } from '../lib/ids.ts';
import type { Actor } from './audit.ts';
import type { Db } from './db.ts';
import type { Database, JobRow } from './tables.ts';

export type JobState = 'queued' | 'running' | 'done' | 'failed';

/** Creates a queued job of `kind` for the contract; returns its id. */
export async function createJob(db: Db, job: { contractId: string; kind: string; params: unknown; total: number; actor: Actor }, now = Date.now()): Promise<string> {
  const id = newId(now);
  await db
    .insertInto('jobs')
    .values({
      id,
      contractId: job.contractId,
      kind: job.kind,
      state: 'queued',
      total: job.total,
      params: JSON.stringify(job.params),
      result: null,
      error: null,
      consumerId: job.actor.id,
      consumerName: job.actor.name,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
    })
    .execute();
  return id;
}

/** The contract's job with this id, or undefined (none, or another contract's). */
export async function findJob(db: Db, contractId: string, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/**
 * Marks the job running (from `queued`, or `running` again when the process that ran it died);
 * returns the job, or undefined when it is finished or unknown (nothing to do).
 */
export async function claimJob(db: Db, id: string, now = Date.now()): Promise<JobRow | undefined> {
  const result = await db.updateTable('jobs').set({ state: 'running', startedAt: now, done: 0 }).where('id', '=', id).where('state', 'in', ['queued', 'running']).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
}

/** Records progress: `done` of `total` units. */
export async function jobProgress(db: Db, id: string, done: number, total: number): Promise<void> {
  await db.updateTable('jobs').set({ done, total }).where('id', '=', id).where('state', '=', 'running').execute();
}

/** Inside the job's change: marks it done with `result`; returns false (roll back) when it no longer runs. */
export async function finishJob(trx: Transaction<Database>, id: string, result: unknown, now = Date.now()): Promise<boolean> {
  const done = await trx
    .updateTable('jobs')
    .set((eb) => ({ state: 'done', done: eb.ref('total'), result: JSON.stringify(result), finishedAt: now }))
    .where('id', '=', id)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}

/** Marks the job failed with `error` (the error object's entries). */
export async function failJob(db: Db, id: string, error: unknown, now = Date.now()): Promise<void> {
  await db.updateTable('jobs').set({ state: 'failed', error: JSON.stringify(error), finishedAt: now }).where('id', '=', id).where('state', 'in', ['queued', 'running']).execute();
}

/** Jobs not finished (queued, or running when their process died), oldest first: id and state. */
export async function unfinishedJobs(db: Db, limit = 100): Promise<{ id: string; state: string }[]> {
  return db.selectFrom('jobs').select(['id', 'state']).where('state', 'in', ['queued', 'running']).orderBy('id').limit(limit).execute();
}
