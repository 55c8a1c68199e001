/**
 * What a service's stream listener (`services/<name>/stream/`, docs/services.md#push-and-streams)
 * takes from the collector that starts it (`collect/streams.ts`): the few settings it reads, and
 * the collector's tools — its guarded fetch and agent (docs/services.md#outbound-requests), its
 * credential resolver, its ingestion of pushed items and its ticker. They are passed in, so that
 * services/ imports nothing of collect/ or config.ts: the collector and the configuration stand
 * above the services, never below (docs/architecture.md#services). Each tool is typed by what the
 * listeners use of it; `collect/streams.ts` hands over the collector's own, and the compiler
 * checks there that they fit.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { ContentItem } from '../../../item.ts';
import type { Db } from '../../../store/db.ts';
import type { CredentialRow, InputRow } from '../../../store/tables.ts';
import type { FetchError, OpenStream, SourceFetch } from '../../connector.ts';
import type { ServiceSettings } from '../../table.ts';

/** The configuration a listener reads (docs/configuration.md): ALLOW_PRIVATE_FETCH, the services' settings, JETSTREAM_URL (null: off) and JETSTREAM_LEASE (s). */
export interface StreamSettings {
  allowPrivateFetch: boolean;
  services: ServiceSettings;
  jetstreamUrl: string | null;
  jetstreamLease: number;
}

/** The settings of an input's service with its contract's credential, as the collector resolves them (`collect/credentials.ts`). */
export interface StreamCredentials {
  /** `poll`: the fetch with which a token about to expire is refreshed first, and the time (ms). */
  resolve(input: { contractId: string; service: string; credentialId?: string | null }, poll?: { fetch: SourceFetch; now: number }): Promise<{ services: ServiceSettings; credential?: CredentialRow; missing: boolean }>;
}

/** The collector's tools a listener uses (each the collector's own, named as there). */
export interface CollectorTools {
  /** `collect/fetch.ts` createFetcher: guarded requests, and `open`, a long-lived guarded GET (Server-Sent Events). */
  createFetcher(options: { allowPrivate: boolean; timeoutMs?: number }): SourceFetch & { open: OpenStream; close(): Promise<void> };
  /** `collect/fetch.ts` createGuardedAgent: the guarded dispatcher of a WebSocket; `onBlocked` hears of each refused address; `webSocket` bounds a message's size (`kit/stream/websocket.ts` webSocketAgentOptions). */
  createGuardedAgent(options: { allowPrivate: boolean; onBlocked?: (error: FetchError) => void; webSocket?: { maxPayloadSize: number } }): Agent;
  /** The process's credential resolver of the database (`collect/credentials.ts` credentialResolver). */
  credentials: StreamCredentials;
  /** `collect/ingest.ts` ingestPushed: pushed items of an input through its filters, de-duplication, rejections and events; resolves to how many were stored. */
  ingestPushed(db: Db, input: InputRow, items: ContentItem[], ctx: { log?: FastifyBaseLogger }): Promise<number>;
  /** `collect/ticker.ts` startTicker: `work` now and every `everyMs` ms, never two runs at once; a failed run is logged on `log`. */
  startTicker(work: () => Promise<void>, everyMs: number, log?: FastifyBaseLogger): { tick(): Promise<void>; stop(): Promise<void> };
}

/** What a listener is started with. */
export interface StreamDeps {
  db: Db;
  config: StreamSettings;
  log?: FastifyBaseLogger;
  tools: CollectorTools;
}
