/**
 * The Jetstream listener's connection (docs/services.md#bluesky-jetstream): one WebSocket through
 * the collector's guarded agent (`createGuardedAgent`, docs/services.md#outbound-requests), bounded
 * in message size and handshake time (`JETSTREAM_BOUNDS`), whose JSON text frames are handed over
 * as events, and the back-off between two connections.
 */
import type { Agent } from 'undici';
import { obj, type Json } from '../../kit/normalize.ts';
import { openBoundedWebSocket, type WebSocketBounds } from '../../kit/stream/websocket.ts';

/**
 * What a Jetstream server may make the listener hold or wait for: a message of at most 1 MiB (an
 * event is one small JSON object: a post record is limited to 3 000 bytes of text, its commit and
 * embed references to a few KiB more; lexicon app.bsky.feed.post), a handshake of at most 10 s.
 */
export const JETSTREAM_BOUNDS: WebSocketBounds = { maxMessageBytes: 1024 * 1024, handshakeTimeoutMs: 10_000 };

/** What a connection tells its owner; nothing after `close()` or after `onDrop`. */
export interface JetstreamSocketHandlers {
  /** The connection is open. */
  onOpen(): void;
  /** A text frame holding JSON, as an object (an array or scalar is `{}`); other frames are skipped. */
  onEvent(event: Json): void;
  /** The connection failed (`failure`: the WebSocket's error event's `error`) or closed (null); said once. */
  onDrop(failure: { error: unknown } | null): void;
}

/** An open (or opening) connection. */
export interface JetstreamSocket {
  /** Closes it; its handlers hear nothing more. Never throws. */
  close(): void;
}

/**
 * Opens a WebSocket to `href` (`resumeUrl`) through `agent` (made with
 * `webSocketAgentOptions(JETSTREAM_BOUNDS)`), bounded by `bounds` (`kit/stream/websocket.ts`):
 * a message over its size or a handshake past its time fails the connection (`onDrop` with an
 * error). Throws what undici's `WebSocket` throws synchronously (a URL that is not ws: or wss:).
 */
export function openJetstreamSocket(href: string, agent: Agent, handlers: JetstreamSocketHandlers, bounds: WebSocketBounds = JETSTREAM_BOUNDS): JetstreamSocket {
  return openBoundedWebSocket(href, agent, bounds, {
    onOpen: () => handlers.onOpen(),
    onText(data) {
      let event: Json;
      try {
        event = obj(JSON.parse(data));
      } catch {
        return;
      }
      handlers.onEvent(event);
    },
    onDrop: (failure) => handlers.onDrop(failure),
  });
}
