/**
 * Two collector processes on one PostgreSQL, for the tests of a stream connection held by one
 * collector of the installation that survives its holder's death (docs/services.md#push-and-streams;
 * test/e2e/jetstream-kill, twitch-chat-kill): both started as `npm start -- --role collector`
 * (test/processes.ts `startRole`) on a fresh database, a contract with one input made through the
 * API in this process on the same database, and the lease holder found and killed.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { buildTenant, freshDatabaseEnv, tempDir } from './helper.ts';
import { processGroupOf, type Started, startRole, stopProcess, until } from './processes.ts';

export interface CollectorPair {
  /** The two processes, `collector-1` and `collector-2`. */
  processes: Started[];
  /** This process's connection to their database. */
  db: Db;
  /** An app in this process on that database (log level silent), for reading the input back. */
  app: FastifyInstance;
  tenant: Awaited<ReturnType<typeof buildTenant>>;
  /** The input made through `POST /collection/inputs` in the tenant's collection. */
  inputId: string;
  /**
   * The process holding the live lease of stream `name` (the `streams` row, whose holder id ends
   * `…:<pid>:<n>`; docs/services.md#push-and-streams), or undefined while nobody holds it.
   */
  holder(name: string): Promise<Started | undefined>;
  /**
   * Waits up to 10 s for a holder of stream `name`, kills it with SIGKILL (its whole process
   * group) and resolves once it has exited: the other process and the time of the kill (ms since
   * the epoch).
   */
  killHolder(name: string): Promise<{ survivor: Started; killedAt: number }>;
  /** Stops the processes (SIGTERM), then closes the app and the connection. */
  close(): Promise<void>;
}

/**
 * Starts the pair with `env` added to this process's environment (a fresh PostgreSQL schema and
 * data folder, private addresses allowed, no bootstrap, log level warn), then makes `input`
 * (`{service, type, input}` of docs/api.md#inputs) for a new tenant. Call it in the PostgreSQL
 * run only (`testPostgresUrl`): on SQLite each process would have its own database. Rejects when a
 * process does not listen within 60 s (the ones started are stopped) or the input is refused.
 */
export async function startCollectorPair(env: Record<string, string>, input: { service: string; type: string; input: string }): Promise<CollectorPair> {
  const all: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: tempDir(),
    ...(await freshDatabaseEnv()),
    ALLOW_PRIVATE_FETCH: 'true',
    SLUICE_BOOTSTRAP: 'false',
    LOG_LEVEL: 'warn',
    ...env,
  };
  const started = await Promise.allSettled([startRole('collector-1', 'collector', all), startRole('collector-2', 'collector', all)]);
  const processes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(processes.map((p) => stopProcess(p.child, 'SIGTERM')));
    throw failed.reason;
  }
  const config = loadConfig(all);
  const db = openDb(config.databaseUrl);
  const tenant = await buildTenant(db);
  const app = await buildApp({ ...config, logLevel: 'silent' }, { db });
  const close = async () => {
    await Promise.all(processes.map((p) => stopProcess(p.child, 'SIGTERM')));
    await app.close();
    await db.destroy();
  };
  const created = await app.inject({
    method: 'POST',
    url: `/collection/inputs?access_token=${tenant.token}`,
    payload: { ...input, contractId: tenant.contract.id, collectionId: tenant.collection.id },
  });
  if (created.statusCode !== 201) {
    await close();
    throw new Error(`the input was refused: ${created.statusCode} ${created.body}`);
  }
  const holder = async (name: string) => {
    const row = await db.selectFrom('streams').select(['holder', 'expiresAt']).where('name', '=', name).executeTakeFirst();
    const group = row && Number(row.expiresAt) > Date.now() ? processGroupOf(Number(row.holder.split(':').at(-2))) : undefined;
    return processes.find((p) => p.child.pid === group);
  };
  const killHolder = async (name: string) => {
    const victim = await until(`the holder of ${name}`, () => holder(name), 10_000);
    await stopProcess(victim.child, 'SIGKILL');
    return { survivor: processes.find((p) => p !== victim)!, killedAt: Date.now() };
  };
  return { processes, db, app, tenant, inputId: (created.json() as { _id: string })._id, holder, killHolder, close };
}
