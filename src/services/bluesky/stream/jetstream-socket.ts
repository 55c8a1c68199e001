/**
 * The Jetstream listener's connection (docs/services.md#bluesky-jetstream): one WebSocket through
 * the collector's guarded agent (`createGuardedAgent`, docs/services.md#outbound-requests), whose
 * JSON text frames are handed over as events, and the back-off between two connections.
 */
import { type Agent, WebSocket } from 'undici';
import { obj, type Json } from '../../kit/normalize.ts';

/** Waits before the 1st, 2nd, … reconnection after a drop, ms; the last repeats (1 s up to 30 s). */
export const BACKOFF_MS: readonly number[] = [1000, 2000, 5000, 10_000, 30_000];

/** How long to wait before reconnecting after `failures` drops in a row (0: the first), ms. */
export function backoffMs(failures: number): number {
  return BACKOFF_MS[Math.max(0, Math.min(failures, BACKOFF_MS.length - 1))]!;
}

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
 * Opens a WebSocket to `href` (`resumeUrl`) through `agent`. Throws what undici's `WebSocket`
 * throws synchronously (a URL that is not ws: or wss:).
 */
export function openJetstreamSocket(href: string, agent: Agent, handlers: JetstreamSocketHandlers): JetstreamSocket {
  let done = false;
  const ws = new WebSocket(href, { dispatcher: agent });
  const drop = (failure: { error: unknown } | null) => {
    if (done) return;
    done = true;
    handlers.onDrop(failure);
  };
  ws.addEventListener('open', () => {
    if (!done) handlers.onOpen();
  });
  ws.addEventListener('message', (message) => {
    if (done || typeof message.data !== 'string') return;
    let event: Json;
    try {
      event = obj(JSON.parse(message.data));
    } catch {
      return;
    }
    handlers.onEvent(event);
  });
  ws.addEventListener('error', (event) => drop({ error: (event as unknown as { error?: unknown }).error }));
  ws.addEventListener('close', () => drop(null));
  return {
    close() {
      done = true;
      try {
        ws.close();
      } catch {
        // Already closed.
      }
    },
  };
}
