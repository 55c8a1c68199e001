/**
 * The services' stream listeners in a collecting process (docs/services.md#push-and-streams;
 * the list is `services/streams.ts`): each started with the collector's tools
 * (`services/kit/stream/collector.ts`), which the services cannot import themselves.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { CollectorTools, StreamDeps } from '../services/kit/stream/collector.ts';
import { STREAMS, type StreamListener } from '../services/streams.ts';
import type { Db } from '../store/db.ts';
import { credentialResolver } from './credentials.ts';
import { createFetcher, createGuardedAgent } from './fetch.ts';
import { ingestPushed } from './ingest.ts';
import { startTicker } from './ticker.ts';

/** The collector's tools for a listener on `db`: its guarded fetch and agent, the process's credential resolver of `db`, ingestion and ticker. */
export function collectorTools(db: Db, config: Config): CollectorTools {
  return { createFetcher, createGuardedAgent, credentials: credentialResolver(db, config), ingestPushed, startTicker };
}

/** What a listener is started with: `deps` (database, configuration, log, a listener's own options) and the collector's tools on its database. */
export function streamDeps<D extends { db: Db; config: Config; log?: FastifyBaseLogger }>(deps: D): D & Pick<StreamDeps, 'tools'> {
  return { ...deps, tools: collectorTools(deps.db, deps.config) };
}

/** Starts every service's listener, in the order of `STREAMS` (stop them in any order: each gives its own leases up). */
export function startStreams(deps: { db: Db; config: Config; log: FastifyBaseLogger }): StreamListener[] {
  const started = streamDeps(deps);
  return STREAMS.map((start) => start(started));
}
