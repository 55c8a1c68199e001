/**
 * `serve`: opens the database, brings its schema up (an empty database is migrated and, unless
 * SLUICE_BOOTSTRAP=false, bootstrapped; an older or newer one is refused), then starts the HTTP
 * server and/or the collector for the role (docs/operations.md#roles), and shuts down gracefully:
 * HTTP first, then the collector, then the database. On PostgreSQL any number of processes of any
 * role may run against one database (docs/operations.md#several-processes).
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type Role } from './app.ts';
import { bootstrapDemo } from './bootstrap.ts';
import { type Collector, startCollector } from './collect/scheduler.ts';
import { type DeliveryWorker, startDelivery } from './collect/deliver.ts';
import { type KudosRefresher, startKudosRefresh } from './collect/kudos.ts';
import { type Reverifier, startReverify } from './collect/reverify.ts';
import type { StreamListener } from './services/streams.ts';
import { startSharedCollector } from './collect/postgres-collector.ts';
import { startWebsub, type WebsubSubscriber } from './collect/websub/subscriber.ts';
import { startRetention } from './collect/retention.ts';
import { startStreams } from './collect/streams.ts';
import type { Ticker } from './collect/ticker.ts';
import type { Config } from './config.ts';
import { startMetricsServer } from './http/metrics.ts';
import { checkSecretKey } from './store/credentials.ts';
import { isPostgres, openDb } from './store/db.ts';
import { ensureSchemaOnce } from './store/migrate.ts';

export interface Server {
  /** What `sluice serve` prints: where it listens, its role, the bootstrap credentials' path. */
  summary: { status: 'listening'; role: Role; url: string; credentials?: string; metricsUrl?: string };
  app: FastifyInstance;
  collector: Collector | undefined;
  close(): Promise<void>;
}

/** `options.prettyLogs`: human-readable logs (a terminal) instead of JSON lines. */
export async function serve(config: Config, role: Role = 'all', options: { prettyLogs?: boolean } = {}): Promise<Server> {
  // The processes that collect write the most: their SQLite checkpoints run in a thread.
  const db = openDb(config.databaseUrl, { checkpoints: role === 'all' || role === 'collector' ? 'thread' : 'inline' });
  // Several processes may start at once against one PostgreSQL: one migrates and bootstraps.
  const credentials = await ensureSchemaOnce(db, async (wasEmpty) => (wasEmpty && config.bootstrap ? bootstrapDemo(db, config) : undefined));
  // The key of stored service credentials: created on first start, refused when it cannot decrypt them.
  try {
    await checkSecretKey(db, config);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const app = await buildApp(config, { db, role, prettyLogs: options.prettyLogs });
  await app.listen({ port: config.port, host: config.host });
  // METRICS_PORT: /metrics on a listener of its own (docs/operations.md#metrics).
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  try {
    metrics = config.metricsPort === undefined ? undefined : await startMetricsServer(config);
  } catch (error) {
    await app.close();
    await db.destroy();
    throw error;
  }
  // SQLite: the in-process scheduler. PostgreSQL: collector processes share the inputs by claiming them.
  const collects = role === 'all' || role === 'collector';
  let collector: Collector | undefined;
  // Webhook deliveries go out from the processes that collect (collect/deliver.ts).
  let delivery: DeliveryWorker | undefined;
  // So do the kudos refreshes of ranked collections (collect/kudos.ts).
  let kudos: KudosRefresher | undefined;
  // And the re-verification of polled services' stored items (collect/reverify.ts).
  let reverify: Reverifier | undefined;
  // WebSub subscriptions are sent, renewed and ended by one collector process at a time (collect/websub).
  let websub: WebsubSubscriber | undefined;
  // The services' stream listeners (Mastodon streaming, Bluesky Jetstream; services/streams.ts, started by collect/streams.ts), each holding leases across the collecting processes.
  const streams: StreamListener[] = [];
  // So do expired items' deletions (docs/api.md#retention).
  let retention: Ticker | undefined;
  try {
    collector = !collects ? undefined : isPostgres(db) ? await startSharedCollector({ db, config, log: app.log }) : startCollector({ db, config, log: app.log });
    delivery = collects ? startDelivery({ db, config, log: app.log }) : undefined;
    kudos = collects ? startKudosRefresh({ db, config, log: app.log }) : undefined;
    reverify = collects ? startReverify({ db, config, log: app.log }) : undefined;
    websub = collects ? startWebsub({ db, config, log: app.log }) : undefined;
    if (collects) streams.push(...startStreams({ db, config, log: app.log }));
    retention = collects ? startRetention({ db, log: app.log }) : undefined;
  } catch (error) {
    metrics?.close();
    await app.close();
    await db.destroy();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const metricsAddress = metrics?.address();
  const metricsUrl = typeof metricsAddress === 'object' && metricsAddress ? `http://${config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost}:${metricsAddress.port}/metrics` : undefined;
  if (credentials) app.log.info(`Demo credentials written to ${credentials}`);

  let closing: Promise<void> | undefined;
  return {
    summary: { status: 'listening', role, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`, ...(credentials ? { credentials } : {}), ...(metricsUrl ? { metricsUrl } : {}) },
    app,
    collector,
    close() {
      closing ??= (async () => {
        const metricsClosed = new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()));
        metrics?.closeAllConnections();
        await metricsClosed;
        await app.close();
        await collector?.stop();
        await delivery?.stop();
        await kudos?.stop();
        await reverify?.stop();
        await websub?.stop();
        for (const stream of streams) await stream.stop();
        await retention?.stop();
        await db.destroy();
      })();
      return closing;
    },
  };
}
