/**
 * The stream listeners of the services that push over a connection of their own (docs/services.md#push-and-streams):
 * Mastodon's streaming API, Bluesky's Jetstream, Twitch's chat. Each lives in its service's folder
 * (`<name>/stream/`), on the collector's layer (it takes leases, ingests, reads credentials:
 * docs/architecture.md#services), so the shared layer's registry (`index.ts`) cannot list it; this
 * list does, and the collector starts every one in the processes that collect (`collect/streams.ts`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { StreamDeps } from './kit/stream/collector.ts';
import { startJetstream } from './bluesky/stream/jetstream.ts';
import { startMastodonStreams } from './mastodon/stream/streaming.ts';
import { startTwitchChat } from './twitch/stream/chat.ts';

/** A running listener: `stop` closes its connections, hands its inputs back to polling and gives its leases up. */
export interface StreamListener {
  stop(): Promise<void>;
}

/** Starts a service's listener in a collecting process, with the collector's tools (`collect/streams.ts`). */
export type StreamStarter = (deps: StreamDeps & { log: FastifyBaseLogger }) => StreamListener;

/** The listeners, in the order they start (and stop). */
export const STREAMS: readonly StreamStarter[] = [(deps) => startMastodonStreams(deps), (deps) => startJetstream(deps), (deps) => startTwitchChat(deps)];
