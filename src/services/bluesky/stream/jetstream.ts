/**
 * The Bluesky Jetstream listener (docs/services.md#bluesky-jetstream): ONE WebSocket per
 * installation (`JETSTREAM_URL?wantedCollections=app.bsky.feed.post`) serves every active bluesky
 * input of every contract, `keyword` and `user` alike.
 *
 * - **Inputs**: read every `refreshMs` (default 3 s); when their ids, queries or `lastModified`
 *   change, one matcher is compiled for all of them (`jetstream-match.ts`); a user input's handle
 *   is resolved to its DID once (`blueskyDid`). With no active bluesky input nothing connects.
 * - **Lease**: the connection is held by one collector process at a time (stream `jetstream`,
 *   `store/streams.ts`), renewed every third of `JETSTREAM_LEASE` (default 6 s); a process that
 *   fails to renew closes the connection at once; when the holder dies another process takes
 *   over once its lease has run out. The holder id is `<host>:<pid>:<random>`.
 * - **Events**: commit events creating or updating a post are matched in arrival order, in
 *   batches; the matched posts become items (`jetstreamItem`, the authors' handles and names from
 *   `app.bsky.actor.getProfiles`, batched, kept in an LRU cache for an hour; stored with the DID
 *   when the lookup fails, and without lookups for 30 s after a failure; an `identity` event
 *   forgets that author's) stored per input through `ingestPushed`, then the batch's last
 *   `time_us` is saved as the stream's cursor (`saveStreamCursor`). So the cursor never passes a
 *   post not stored.
 * - **Deletions and edits** (Bluesky's Developer Guidelines: honour deletions): a commit deleting
 *   an `app.bsky.feed.post` removes the item of that post (`jetstreamDeletedId`) wherever it is
 *   stored, whichever input collected it, stream or poll (`removeItems`, reason `deleted`); a
 *   commit updating one applies the new text and media to every stored copy (`updateFromSource`).
 *   Both happen after the batch's posts are stored and before its cursor is saved: a failure
 *   resumes from the cursor, so no deletion is lost.
 * - **Resume**: a new connection asks for `cursor` = the saved one minus 5 s (the rewind Jetstream
 *   recommends); posts seen again are stored once (same item id per collection, `store/items/write.ts`).
 * - **Feed mode**: the inputs served are `stream` while this process holds an open connection,
 *   and `poll` again when it stops, loses the lease, stays disconnected longer than 15 s, or an
 *   input leaves the matcher (deactivated, changed, deleted).
 * - **Bounds**: the connection goes through the collector's private-address guard
 *   (`createGuardedAgent`, ALLOW_PRIVATE_FETCH); a message over 1 MiB or a handshake past 10 s
 *   fails it (`JETSTREAM_BOUNDS`); reconnects back off from 1 s to 30 s; more than
 *   20 000 events waiting → the connection is dropped and resumed from the cursor.
 *
 * Its units, each testable alone: the connection and its back-off (`jetstream-socket.ts`), the
 * cursor (`jetstream-cursor.ts`), the lease (`store/streams.ts`), the inputs and their matcher
 * (`jetstream-inputs.ts`, `jetstream-match.ts`), the authors (`jetstream-authors.ts`) and the
 * batches of creates, updates and deletes (`jetstream-batch.ts`). This module holds them together:
 * the lease's renewal, the feed modes, the queue between the connection and the store.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import { activeInputsOf, setFeedMode } from '../../../store/inputs.ts';
import { holdStream, releaseStream, saveStreamCursor } from '../../../store/streams.ts';
import type { CollectContext, FetchError } from '../../connector.ts';
import { blueskyDid, blueskyProfiles } from '../connector.ts';
import type { Json } from '../../kit/normalize.ts';
import type { CollectorTools, StreamDeps } from '../../kit/stream/collector.ts';
import { type AuthorCache, authorCache } from './jetstream-authors.ts';
import { sortBatch, storeBatch } from './jetstream-batch.ts';
import { advancedCursor, resumeUrl } from './jetstream-cursor.ts';
import { type JetstreamInputs, jetstreamInputs } from './jetstream-inputs.ts';
import { webSocketAgentOptions, type WebSocketBounds } from '../../kit/stream/websocket.ts';
import { backoffMs, dropsInARow } from '../../kit/stream/websocket.ts';
import { JETSTREAM_BOUNDS, type JetstreamSocket, openJetstreamSocket } from './jetstream-socket.ts';

export { REWIND_US } from './jetstream-cursor.ts';

/** The stream's name in the `streams` table. */
export const JETSTREAM = 'jetstream';
/** Disconnected longer than this, ms, the inputs go back to polling. */
const GRACE_MS = 15_000;
/** Events waiting, at most; past it the connection is dropped and resumed from the cursor. */
const MAX_QUEUE = 20_000;
/** Events stored per batch, at most. */
const BATCH = 500;

/** `tools`: the collector's (`collect/streams.ts`). */
export interface JetstreamOptions extends StreamDeps {
  log: FastifyBaseLogger;
  /** ms between two reads of the inputs (default 3000). */
  refreshMs?: number;
  /** Longest wait for the WebSocket's opening handshake, ms (default `JETSTREAM_BOUNDS`'s 10 000). */
  handshakeTimeoutMs?: number;
}

/** What the listener says of itself (tests, logs). */
export interface JetstreamStatus {
  holder: string;
  /** Holds the lease and has an open connection. */
  connected: boolean;
  /** Connections opened so far. */
  connections: number;
  /** The last connection failure or ingest error, or null. */
  lastError: string | null;
}

export interface JetstreamListener {
  status(): JetstreamStatus;
  /** Closes the connection, hands the inputs back to polling and gives the lease up. */
  stop(): Promise<void>;
}

/** Starts the listener (see the module); a no-op listener when JETSTREAM_URL is `off`. */
export function startJetstream(options: JetstreamOptions): JetstreamListener {
  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  if (!options.config.jetstreamUrl) {
    const state: JetstreamStatus = { holder, connected: false, connections: 0, lastError: null };
    return { status: () => ({ ...state }), stop: async () => {} };
  }
  const listener = new Listener(options, options.config.jetstreamUrl, holder);
  listener.start();
  return { status: () => ({ ...listener.state }), stop: () => listener.stop() };
}

/** One listener's state and steps (see the module); driven by `startJetstream`. */
class Listener {
  readonly state: JetstreamStatus;
  private readonly db: JetstreamOptions['db'];
  private readonly log: FastifyBaseLogger;
  private readonly ingestPushed: CollectorTools['ingestPushed'];
  private readonly leaseMs: number;
  private readonly refreshMs: number;
  private readonly agent: Agent;
  private readonly bounds: WebSocketBounds;
  private readonly fetcher: ReturnType<CollectorTools['createFetcher']>;
  private readonly inputs: JetstreamInputs;
  private readonly authors: AuthorCache;
  /** The last address the guard refused, for the connection's error. */
  private refused: FetchError | undefined;
  private lastRefresh = 0;
  private refreshing: Promise<void> | undefined;
  /** Inputs this process has set to `stream`. */
  private streamed = new Set<string>();
  private socket: JetstreamSocket | undefined;
  /** Bumped at each connection and disconnection: events of an older one are dropped. */
  private generation = 0;
  private holding = false;
  private savedCursor: string | null = null;
  /** Drops in a row, since the last connection that lasted (`dropsInARow`). */
  private failures = 0;
  private retryAt = 0;
  /** When the open connection opened (ms), null while none is. */
  private openedAt: number | null = null;
  private disconnectedAt = Date.now();
  private readonly queue: { generation: number; event: Json }[] = [];
  private pumping: Promise<void> | undefined;
  private stopped = false;
  private ticking: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | undefined;

  private readonly url: string;

  constructor(options: JetstreamOptions, url: string, holder: string) {
    const { db, config, log, tools } = options;
    this.url = url;
    this.state = { holder, connected: false, connections: 0, lastError: null };
    this.db = db;
    this.log = log;
    this.ingestPushed = tools.ingestPushed;
    this.leaseMs = config.jetstreamLease * 1000;
    this.refreshMs = options.refreshMs ?? 3000;
    this.bounds = { ...JETSTREAM_BOUNDS, handshakeTimeoutMs: options.handshakeTimeoutMs ?? JETSTREAM_BOUNDS.handshakeTimeoutMs };
    this.agent = tools.createGuardedAgent({ allowPrivate: config.allowPrivateFetch, onBlocked: (error) => (this.refused = error), ...webSocketAgentOptions(this.bounds) });
    this.fetcher = tools.createFetcher({ allowPrivate: config.allowPrivateFetch, timeoutMs: 5000 });
    const context = (): CollectContext => ({ fetch: this.fetcher, services: config.services, now: Date.now() });
    this.inputs = jetstreamInputs(
      (handle) => blueskyDid(context(), handle),
      (handle, error) => this.fail(`could not resolve the user ${handle}: ${error instanceof Error ? error.message : String(error)}`),
    );
    this.authors = authorCache(
      (dids) => blueskyProfiles(context(), dids),
      (error) => this.fail(`profiles lookup failed, storing with DIDs: ${describe(error)}`),
    );
  }

  /** Ticks now and every third of the lease (at most every `refreshMs`, at least every 200 ms). */
  start() {
    const every = Math.max(200, Math.min(this.refreshMs, Math.floor(this.leaseMs / 3)));
    const run = () => (this.stopped ? undefined : this.tick());
    this.timer = setInterval(() => {
      this.ticking = this.ticking.then(run).catch((error: unknown) => this.fail(describe(error)));
    }, every);
    this.ticking = this.ticking.then(run).catch((error: unknown) => this.fail(describe(error)));
  }

  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    await this.giveUp();
    await this.agent.close().catch(() => {});
    await this.fetcher.close().catch(() => {});
    this.streamed = new Set();
  }

  private fail(message: string) {
    this.state.lastError = message;
    this.log.warn({ stream: JETSTREAM }, `jetstream: ${message}`);
  }

  /** Sets the feed mode of `ids` and remembers which this process streams. */
  private async setMode(ids: string[], mode: 'stream' | 'poll') {
    if (!ids.length) return;
    await setFeedMode(this.db, ids, mode).catch((error: unknown) => this.fail(`could not set the feed mode: ${String(error)}`));
    for (const id of ids) (mode === 'stream' ? this.streamed.add(id) : this.streamed.delete(id));
  }

  /** The served inputs not yet set to `stream` by this process. */
  private unstreamed(): string[] {
    return [...this.inputs.matcher.ids].filter((id) => !this.streamed.has(id));
  }

  /** Reads the inputs; when the matcher changed, inputs no longer served go back to polling and new ones stream if connected. */
  private async refresh(now: number) {
    if (!(await this.inputs.update(await activeInputsOf(this.db, 'bluesky'), now))) return;
    await this.setMode([...this.streamed].filter((id) => !this.inputs.matcher.ids.has(id)), 'poll');
    if (this.state.connected) await this.setMode(this.unstreamed(), 'stream');
  }

  /** One step: reads the inputs beside, renews the lease, (re)connects, and hands the inputs back to polling after the grace. */
  private async tick() {
    const now = Date.now();
    // The inputs are read beside, never in the way of the lease's renewal (a handle to resolve may take seconds).
    if (now - this.lastRefresh >= this.refreshMs && !this.refreshing) {
      this.lastRefresh = now;
      this.refreshing = this.refresh(now)
        .catch((error: unknown) => this.fail(`could not read the inputs: ${describe(error)}`))
        .finally(() => (this.refreshing = undefined));
    }
    if (this.inputs.matcher.ids.size === 0) {
      if (this.holding) await this.giveUp();
      return;
    }
    if (!(await this.renewLease())) return;
    if (!this.socket && now >= this.retryAt) this.connect();
    if (!this.state.connected && this.streamed.size && now - this.disconnectedAt > GRACE_MS) await this.setMode([...this.streamed], 'poll');
  }

  /** Takes or renews the lease (`holdStream`); answers whether this process holds it. Losing it disconnects. */
  private async renewLease(): Promise<boolean> {
    let lease;
    try {
      lease = await holdStream(this.db, JETSTREAM, this.state.holder, this.leaseMs);
    } catch (error) {
      lease = { held: false, cursor: null };
      this.fail(`could not renew the lease: ${describe(error)}`);
    }
    if (!lease.held) {
      if (this.holding) {
        this.holding = false;
        this.disconnect();
        // The feed modes are the new holder's to set now.
        this.streamed = new Set();
      }
      return false;
    }
    if (!this.holding) {
      this.holding = true;
      this.savedCursor = lease.cursor;
    }
    return true;
  }

  private connect() {
    const mine = ++this.generation;
    this.refused = undefined;
    const dropped = () => {
      if (mine !== this.generation) return;
      // Counted before `disconnect` forgets when the connection opened.
      this.failures = dropsInARow(this.failures, this.openedAt, Date.now());
      this.disconnect();
      this.retryAt = Date.now() + backoffMs(this.failures - 1);
    };
    this.socket = openJetstreamSocket(resumeUrl(this.url, this.savedCursor), this.agent, {
      onOpen: () => {
        if (mine !== this.generation) return;
        this.state.connected = true;
        this.state.connections += 1;
        this.openedAt = Date.now();
        void this.setMode(this.unstreamed(), 'stream');
      },
      onEvent: (event) => {
        if (mine !== this.generation) return;
        this.queue.push({ generation: mine, event });
        if (this.queue.length > MAX_QUEUE) {
          this.fail(`more than ${MAX_QUEUE} events waiting: reconnecting from the cursor`);
          return dropped();
        }
        this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
      },
      onDrop: (failure) => {
        if (mine !== this.generation) return;
        if (failure) this.fail(`connection failed: ${describe(this.refused ?? failure.error)}`);
        dropped();
      },
    }, this.bounds);
  }

  private disconnect() {
    this.generation += 1;
    this.queue.length = 0;
    this.socket?.close();
    this.socket = undefined;
    if (this.state.connected) this.disconnectedAt = Date.now();
    this.state.connected = false;
    this.openedAt = null;
  }

  /** Sorts, stores and checkpoints the queued events, in order (see the module). */
  private async pump() {
    while (this.queue.length && !this.stopped) {
      const current = this.queue.splice(0, BATCH).filter((q) => q.generation === this.generation);
      if (!current.length) continue;
      try {
        const batch = sortBatch(current.map((q) => q.event), this.inputs.matcher);
        const store = { db: this.db, log: this.log, rows: this.inputs.rows, authors: this.authors, ingestPushed: this.ingestPushed, fail: (m: string) => this.fail(m) };
        await storeBatch(batch, store, Date.now());
        const cursor = advancedCursor(this.savedCursor, batch.last);
        if (cursor === null || !this.holding) continue;
        if (await saveStreamCursor(this.db, JETSTREAM, this.state.holder, cursor)) this.savedCursor = cursor;
        else {
          this.holding = false;
          this.fail('lost the lease while storing: disconnecting');
          this.disconnect();
        }
      } catch (error) {
        // Not stored: resume from the saved cursor on a new connection.
        this.fail(`storing failed, resuming from the cursor: ${describe(error)}`);
        this.disconnect();
      }
    }
  }

  /** Disconnects, waits for the reading and storing under way, hands the inputs back to polling and releases the lease. */
  private async giveUp() {
    this.disconnect();
    await this.refreshing;
    await this.pumping;
    await this.setMode([...this.streamed], 'poll');
    if (this.holding) await releaseStream(this.db, JETSTREAM, this.state.holder).catch(() => {});
    this.holding = false;
  }
}

/** An error's message and, for a wrapped one, its causes' (the guard's "not a public address"). */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join(': ') || 'unknown error';
}
