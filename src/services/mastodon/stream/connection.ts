/**
 * The connection to one Mastodon stream (docs/services.md#mastodon-streaming): Server-Sent Events
 * (docs.joinmastodon.org/methods/streaming) read from a guarded GET (`OpenStream`, the
 * collector's `fetch.ts` `open`), parsed by `eventsource-parser`, and opened again after a lost
 * connection with a bounded exponential delay with jitter. Nothing here knows what the events
 * mean: {@link keepConnected} hands each one to its caller.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { OpenedStream } from '../../connector.ts';

/** The largest event read, bytes (UTF-16 units of the parser's buffer); a larger one ends the connection. */
export const MAX_EVENT_BYTES = 1024 * 1024;

/**
 * The wait before reconnect number `failures + 1` (ms): `minMs × 2^failures`, at most `maxMs`,
 * of which a random half (`random()` in [0, 1)) is jitter, so that listeners that lost their
 * streams together do not come back together.
 */
export function reconnectDelay(failures: number, random: () => number = Math.random, { minMs = 1000, maxMs = 60_000 } = {}): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Reads SSE events from `body`, each handed to `onEvent`, until the body ends (resolves), stays
 * silent for `idleMs` ms (resolves: the reader is cancelled), `signal` aborts (resolves), or an
 * event exceeds {@link MAX_EVENT_BYTES} (rejects with the parser's `ParseError`). A field the
 * parser does not know is skipped.
 */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (message: EventSourceMessage) => void, { idleMs, signal }: { idleMs: number; signal: AbortSignal }): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  let failure: unknown;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent,
    onError: (error) => {
      if (error.type !== 'max-buffer-size-exceeded') return;
      failure = error;
      cancel();
    },
  });
  let idle = setTimeout(cancel, idleMs);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      clearTimeout(idle);
      idle = setTimeout(cancel, idleMs);
      parser.feed(value);
    }
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', cancel);
  }
  if (failure) throw failure;
}

/** What {@link keepConnected} does with a connection: how to open it and what to do on each turn. */
export interface ConnectionHandlers {
  /** Opens the stream (the guarded `open`, with the stream's URL and headers). */
  open(signal: AbortSignal): Promise<OpenedStream>;
  /** Whether an answer with this status (not 200) ends the listening for good instead of a retry; its body is cancelled first. */
  refused(status: number): boolean;
  /** The stream answered 200: called before its events are read (its failure counts as a lost connection). */
  connected(): Promise<void>;
  /** An event of the stream. */
  event(message: EventSourceMessage): void;
  /** The connection ended (after `connected` or not); `error` is set when it failed rather than ended or was aborted. */
  lost(error: unknown): void;
}

/**
 * Connects, reads (`readEvents`) and reconnects until `signal` aborts or `refused` says so
 * (`host` names the instance in the error of an unexpected answer). A
 * connection that lasted 30 s resets the back-off; one lost sooner (or never made) counts as a
 * failure, and the wait before the next is `reconnectDelay(failures - 1)` within `reconnect` (ms).
 * Resolves when it stops; never rejects but with what a handler throws from `lost`.
 */
export async function keepConnected(handlers: ConnectionHandlers, { host, signal, idleMs, reconnect }: { host: string; signal: AbortSignal; idleMs: number; reconnect: { minMs: number; maxMs: number } }): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    let connectedAt: number | null = null;
    let failure: unknown;
    try {
      const res = await handlers.open(signal);
      if (res.status !== 200 || !res.body) {
        await res.body?.cancel().catch(() => {});
        if (res.status !== 200 && handlers.refused(res.status)) {
          handlers.lost(undefined);
          return;
        }
        throw new Error(`${host} answered HTTP ${res.status} to the stream`);
      }
      connectedAt = Date.now();
      await handlers.connected();
      await readEvents(res.body, (message) => handlers.event(message), { idleMs, signal });
    } catch (error) {
      failure = signal.aborted ? undefined : error;
    }
    handlers.lost(failure);
    if (signal.aborted) break;
    failures = connectedAt !== null && Date.now() - connectedAt > 30_000 ? 0 : failures + 1;
    await sleep(reconnectDelay(failures - 1, Math.random, reconnect), signal);
  }
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
