/**
 * The stream listeners' outbound WebSocket (docs/services.md#outbound-requests):
 * undici's `WebSocket` (the WHATWG one, from the `undici` package) through the collector's guarded
 * agent, with the two bounds a server could otherwise push to undici's defaults:
 *
 * - **Message size**: undici refuses a message (a frame's announced payload, the fragments of a
 *   message together, or a `permessage-deflate` message once inflated) over the agent's
 *   `webSocket.maxPayloadSize` (undici's docs/api/Client.md, `webSocket`; default 128 MiB) as
 *   soon as the frame header announces it, before buffering its payload, and fails the
 *   connection with close code 1009 "Message Too Big" (RFC 6455 §7.4.1). The agent is made by
 *   the collector (`createGuardedAgent`), so a listener passes
 *   {@link webSocketAgentOptions}`(bounds)` when it makes it.
 * - **Opening handshake**: undici gives a WebSocket no handshake time limit of its own (only the
 *   agent's 300 s `headersTimeout`), so {@link openBoundedWebSocket} fails a connection whose
 *   handshake (DNS, connect, TLS, the `101 Switching Protocols` answer; RFC 6455 §4.1) has not
 *   finished within `handshakeTimeoutMs`.
 *
 * Either ends the connection as a failure (`onDrop` with an error), so the listener's back-off
 * and lease rules apply as to any failed connection.
 */
import { type Agent, WebSocket } from 'undici';

/** Waits before the 1st, 2nd, … reconnection after a drop, ms; the last repeats (1 s up to 30 s). */
export const BACKOFF_MS: readonly number[] = [1000, 2000, 5000, 10_000, 30_000];

/** How long a connection must have been open to count as lasting (`dropsInARow`), ms. */
const LASTING_MS = 30_000;

/** How long to wait before reconnecting after `failures` drops in a row (0: the first), ms. */
export function backoffMs(failures: number): number {
  return BACKOFF_MS[Math.max(0, Math.min(failures, BACKOFF_MS.length - 1))]!;
}

/**
 * The drops in a row once a connection dropped at `now` (ms), `failures` before it: 0 when that
 * connection had lasted (open since `openedAt` for more than 30 s), else one more; the listener
 * then waits `backoffMs(count - 1)`. So a server that accepts each connection and then fails it
 * (an oversized frame, a close at once) is retried ever more slowly, not every second.
 */
export function dropsInARow(failures: number, openedAt: number | null, now: number): number {
  return openedAt !== null && now - openedAt > LASTING_MS ? 0 : failures + 1;
}

/** What one service's server may make a listener hold or wait for. */
export interface WebSocketBounds {
  /** Largest message accepted, bytes (after `permessage-deflate`); a larger one fails the connection (close 1009). */
  maxMessageBytes: number;
  /** Longest wait for the opening handshake to finish, ms; past it the connection fails. */
  handshakeTimeoutMs: number;
}

/** The `createGuardedAgent` option that makes the agent refuse a message over `bounds.maxMessageBytes` (undici's `webSocket.maxPayloadSize`). */
export function webSocketAgentOptions(bounds: Pick<WebSocketBounds, 'maxMessageBytes'>): { webSocket: { maxPayloadSize: number } } {
  return { webSocket: { maxPayloadSize: bounds.maxMessageBytes } };
}

/** What a bounded connection tells its owner; nothing after `close()` or after `onDrop`. */
export interface BoundedWebSocketHandlers {
  /** The opening handshake finished: the connection is open. */
  onOpen(): void;
  /** A text message (binary ones are skipped). */
  onText(data: string): void;
  /** The connection failed (`failure.error`: why, when known) or closed cleanly (null); said once. */
  onDrop(failure: { error: unknown } | null): void;
}

/** An open (or opening) bounded connection. */
export interface BoundedWebSocket {
  /** Sends a text message if the connection is open (nothing otherwise). */
  send(text: string): void;
  /** Closes it; its handlers hear nothing more. Never throws. */
  close(): void;
}

/**
 * Opens undici's WebSocket to `href` through `agent` (whose message size bound the caller set
 * with {@link webSocketAgentOptions}) and fails it if the opening handshake takes longer than
 * `bounds.handshakeTimeoutMs`. undici reports a failure without its cause (an `ErrorEvent` whose
 * error has an empty message, RFC 6455's "_Fail the WebSocket Connection_" keeps none), so an empty
 * one is replaced by an error that says what it can: before the handshake finished, that the
 * handshake failed; after, that the connection was lost or a message over the bound was refused.
 * Throws what undici's `WebSocket` throws synchronously (a URL that is not ws: or wss:).
 */
export function openBoundedWebSocket(href: string, agent: Agent, bounds: WebSocketBounds, handlers: BoundedWebSocketHandlers): BoundedWebSocket {
  let done = false;
  let opened = false;
  const ws = new WebSocket(href, { dispatcher: agent });
  const finish = () => {
    done = true;
    clearTimeout(handshake);
    try {
      ws.close();
    } catch {
      // Already closed.
    }
  };
  const drop = (failure: { error: unknown } | null) => {
    if (done) return;
    finish();
    handlers.onDrop(failure);
  };
  const handshake = setTimeout(() => drop({ error: new Error(`the WebSocket opening handshake did not finish within ${bounds.handshakeTimeoutMs} ms`) }), bounds.handshakeTimeoutMs);
  ws.addEventListener('open', () => {
    clearTimeout(handshake);
    if (done) return;
    opened = true;
    handlers.onOpen();
  });
  ws.addEventListener('message', (message) => {
    if (!done && typeof message.data === 'string') handlers.onText(message.data);
  });
  ws.addEventListener('error', (event) => {
    const error = (event as unknown as { error?: unknown }).error;
    const said = error instanceof Error ? error.message : error === undefined ? '' : String(error);
    if (said) return drop({ error });
    drop({
      error: new Error(
        opened
          ? `the WebSocket connection failed: lost without a closing handshake, or a message over ${bounds.maxMessageBytes} bytes refused (close 1009)`
          : 'the WebSocket opening handshake failed',
      ),
    });
  });
  ws.addEventListener('close', () => drop(null));
  return {
    send(text) {
      if (!done && ws.readyState === WebSocket.OPEN) ws.send(text);
    },
    close: finish,
  };
}
