/**
 * Runs the management API's background jobs (docs/api.md#jobs; store/jobs.ts holds their rows):
 *
 * - SQLite (one process owns the database): in-process, one job at a time, in the order queued.
 *   When the app is ready, jobs left unfinished by a previous process (queued, or running when it
 *   died) are run again.
 * - PostgreSQL (any number of processes): through pg-boss (queue `sluice-jobs`, as the
 *   collector's polls, collect/postgres-collector.ts), so whichever process takes a job runs it, and no job
 *   runs in two processes at once; a job whose process died expires after `JOB_EXPIRE_SECONDS`
 *   and is retried by another. A process starts its pg-boss worker when it queues a job, or when
 *   it is ready and finds unfinished jobs (queued ones are queued again: the process that made one
 *   may have died before queuing it).
 *
 * A job kind's handler does its work and finishes the job (`finishJob`) in the transaction of
 * its change: a job run again after a crash redoes only what was not committed. A handler that
 * throws an ApiError fails the job with its error entries; any other error fails it with an
 * InternalError entry (the cause is logged).
 */
import type { FastifyBaseLogger } from 'fastify';
import { PgBoss } from 'pg-boss';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import type { App } from '../../http/typed.ts';
import { bossSchema, currentSchema, type Db, isPostgres } from '../../store/db.ts';
import { claimJob, failJob, unfinishedJobs } from '../../store/jobs.ts';
import type { JobRow } from '../../store/tables.ts';

/** The pg-boss queue of jobs. */
export const JOB_QUEUE = 'sluice-jobs';
/** How long one job may run before pg-boss hands it to another process (s). */
const JOB_EXPIRE_SECONDS = 3600;

/** Does a job's work; `progress(done, total)` reports how far it got. */
export type JobHandler = (job: JobRow, progress: (done: number, total: number) => Promise<void>) => Promise<void>;

export interface JobRunner {
  /** The handler of jobs of `kind`. */
  handle(kind: string, handler: JobHandler): void;
  /** Runs the queued job `id` (in this process or, on PostgreSQL, any). */
  enqueue(id: string): Promise<void>;
  /** Resolves when no job runs in this process (tests). */
  idle(): Promise<void>;
}

const runners = new WeakMap<App, JobRunner>();

/** The app's job runner, made on first use; stopped when the app closes. */
export function jobRunner(app: App, deps: { db: Db; config: Config }): JobRunner {
  let runner = runners.get(app);
  if (!runner) {
    runner = createRunner(app, deps);
    runners.set(app, runner);
  }
  return runner;
}

function createRunner(app: App, { db, config }: { db: Db; config: Config }): JobRunner {
  const handlers = new Map<string, JobHandler>();
  const log: FastifyBaseLogger = app.log;
  let chain: Promise<void> = Promise.resolve();
  let boss: Promise<PgBoss> | undefined;
  let closed = false;
  const running = new Set<Promise<void>>();

  async function run(id: string): Promise<void> {
    if (closed) return;
    const job = await claimJob(db, id);
    if (!job) return;
    const handler = handlers.get(job.kind);
    try {
      if (!handler) throw new Error(`no handler for jobs of kind ${job.kind}`);
      await handler(job, async (done, total) => {
        // The app is closing: stop here; the job stays `running` and is run again at the next start.
        if (closed) throw new Error('closing');
        await db.updateTable('jobs').set({ done, total }).where('id', '=', id).where('state', '=', 'running').execute();
      });
    } catch (error) {
      if (closed) return;
      if (error instanceof ApiError) return failJob(db, id, error.entries);
      log.error({ err: error, job: id }, 'job failed');
      await failJob(db, id, [{ name: 'InternalError', message: 'The job failed; the cause is logged.', code: 5001 }]);
    }
  }

  const track = (work: Promise<void>) => {
    running.add(work);
    void work.finally(() => running.delete(work));
    return work;
  };

  /** SQLite: runs `id` after the jobs before it. */
  const runLocally = (id: string) => {
    chain = track(chain.then(() => run(id)).catch((err: unknown) => log.error({ err, job: id }, 'job failed')));
  };

  async function startBoss(): Promise<PgBoss> {
    const instance = new PgBoss({ connectionString: config.databaseUrl, schema: bossSchema(await currentSchema(db)), max: 2, application_name: 'sluice-jobs', schedule: false });
    instance.on('error', (err: unknown) => log.error({ err }, 'pg-boss error'));
    await instance.start();
    if (!(await instance.getQueue(JOB_QUEUE))) {
      try {
        await instance.createQueue(JOB_QUEUE, { policy: 'standard', expireInSeconds: JOB_EXPIRE_SECONDS, retryLimit: 3, deleteAfterSeconds: 24 * 3600 });
      } catch (err) {
        // Another process created it at the same moment.
        if (!(await instance.getQueue(JOB_QUEUE))) throw err;
      }
    }
    await instance.work<{ jobId: string }>(JOB_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
      if (job) await track(run(job.data.jobId));
    });
    return instance;
  }
  const bossStarted = () => (boss ??= startBoss());

  app.addHook('onReady', async () => {
    const pending = await unfinishedJobs(db);
    if (!pending.length) return;
    if (!isPostgres(db)) return pending.forEach((job) => runLocally(job.id));
    // pg-boss holds the running ones (and hands them over once expired); a queued one may never
    // have reached it (its process died in between): queued again, at most once per key.
    const instance = await bossStarted();
    for (const job of pending.filter((job) => job.state === 'queued')) await instance.send(JOB_QUEUE, { jobId: job.id }, { singletonKey: job.id });
  });
  app.addHook('onClose', async () => {
    closed = true;
    if (boss) await (await boss).stop({ graceful: true, timeout: 10_000 });
    await Promise.allSettled(running);
  });

  return {
    handle(kind, handler) {
      handlers.set(kind, handler);
    },
    async enqueue(id) {
      if (!isPostgres(db)) return runLocally(id);
      await (await bossStarted()).send(JOB_QUEUE, { jobId: id }, { singletonKey: id });
    },
    async idle() {
      while (running.size) await Promise.allSettled([...running]);
    },
  };
}
