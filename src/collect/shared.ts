/**
 * The collector when several processes share one PostgreSQL (docs/operations.md#several-processes):
 * the same shape as the in-process scheduler (`scheduler.ts`: tick → due inputs → refresh one
 * input), with the due inputs handed out through pg-boss so that each is polled by exactly one
 * process at a time.
 *
 * - Tick (every `tickMs`, each collector process): claim due inputs in the database
 *   (`claimDueInputs` pushes their `nextRunAt` by the lease, so one claimer wins each input) and
 *   send one pg-boss job per claimed input, keyed by the input id (`singletonKey`) on a `stately`
 *   queue: at most one job per input waiting and one active, across all processes.
 * - Work (`COLLECT_CONCURRENCY` at once per process): any collector process takes a job, re-reads
 *   the input and refreshes it (`refreshInput`), unless the job is stale (the input was polled,
 *   changed or claimed again since): then it does nothing.
 * - A process that dies mid-poll: its job expires after `COLLECT_LEASE` seconds (pg-boss
 *   `expireInSeconds`, no retry), and the input, whose claim ran out at the same time, is claimed
 *   again by a live process on its next tick.
 * - Items are stored once whatever the interleaving: `storeItems` inserts with ON CONFLICT DO
 *   NOTHING on (collection_id, id) and counts only the rows it inserted; `collected` grows in SQL.
 * - `stop()` (SIGTERM): no more ticks or fetches of jobs; the polls under way finish (pg-boss
 *   graceful stop, bounded by the lease); jobs still waiting stay in the queue for the others.
 *
 * pg-boss's cron is minute-level (its `schedule` takes cron expressions of minutes), so the tick is our own timer, not `schedule`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Job, PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import { bossSchema, currentSchema, type Db } from '../store/db.ts';
import { claimDueInputs, findInput } from '../store/inputs.ts';
import { createFetcher } from './fetch.ts';
import { credentialResolver } from './credentials.ts';
import { pollIntervalOf, refreshInput } from './refresh.ts';
import type { Collector } from './scheduler.ts';
import { startTicker } from './ticker.ts';

/** The pg-boss queue of polls. */
export const POLL_QUEUE = 'sluice-poll';

/** Inputs claimed per tick and process, per unit of `COLLECT_CONCURRENCY`. */
const CLAIMS_PER_SLOT = 10;

interface PollJob {
  inputId: string;
  /** The `nextRunAt` the claim set; a different value at work time means the job is stale. */
  claim: number;
  /** When the input was due (ms), for the collection lag (lib/metrics.ts). */
  due?: number;
}

/** Starts a collector process's share of the work; resolves once pg-boss is installed and working. */
export async function startSharedCollector(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): Promise<Collector> {
  const { db, config, log } = deps;
  const lease = config.collectLease;
  const boss = new PgBoss({
    connectionString: config.databaseUrl,
    schema: bossSchema(await currentSchema(db)),
    max: 4,
    application_name: 'sluice-collector',
    schedule: false,
    // Expired jobs are found by the supervisor: look often enough to hand a dead process's
    // inputs over within about one lease.
    superviseIntervalSeconds: Math.max(1, Math.min(60, Math.floor(lease / 4))),
    monitorIntervalSeconds: Math.max(1, Math.min(60, Math.floor(lease / 4))),
  });
  boss.on('error', (err: unknown) => log?.error({ err }, 'pg-boss error'));
  await boss.start();
  if (!(await boss.getQueue(POLL_QUEUE))) {
    try {
      await boss.createQueue(POLL_QUEUE, { policy: 'stately', expireInSeconds: lease, retryLimit: 0, deleteAfterSeconds: 3600 });
    } catch (err) {
      // Another process created it at the same moment.
      if (!(await boss.getQueue(POLL_QUEUE))) throw err;
    }
  }

  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch });
  const running = new Set<Promise<unknown>>();
  let stopping = false;

  async function poll(job: Job<PollJob>): Promise<void> {
    const input = await findInput(db, job.data.inputId);
    if (!input || input.nextRunAt !== job.data.claim) return;
    const pollInterval = pollIntervalOf(input, config);
    await refreshInput(db, input, { fetch: fetcher, services: config.services, credentials: credentialResolver(db, config), quotas: config.quotas, pollInterval, ...(job.data.due ? { dueAt: job.data.due } : {}), ...(log ? { log } : {}) });
  }

  await boss.work<PollJob>(POLL_QUEUE, { batchSize: 1, localConcurrency: config.collectConcurrency, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (!job) return;
    const work = poll(job).catch((err: unknown) => log?.error({ err, input: job.data.inputId }, 'poll failed'));
    running.add(work);
    try {
      await work;
    } finally {
      running.delete(work);
    }
  });

  async function claim(): Promise<void> {
    if (stopping) return;
    const claimed = await claimDueInputs(db, Date.now(), config.collectConcurrency * CLAIMS_PER_SLOT, lease * 1000);
    if (!claimed.length) return;
    await boss.insert(
      POLL_QUEUE,
      claimed.map((input) => ({ data: { inputId: input.id, claim: input.nextRunAt, due: input.dueAt } satisfies PollJob, singletonKey: input.id })),
    );
  }

  const ticker = startTicker(claim, tickMs, log);

  return {
    tick: ticker.tick,
    async idle() {
      await ticker.idle();
      await Promise.all(running);
    },
    async stop() {
      stopping = true;
      await ticker.stop();
      await boss.stop({ graceful: true, timeout: lease * 1000 });
      await Promise.all(running);
      await fetcher.close();
    },
  };
}
