/**
 * Mastodon streaming (docs/services.md#mastodon-streaming): the active Mastodon `tag` and `user`
 * inputs of the whole installation are fed by the instances' streaming API
 * (docs.joinmastodon.org/methods/streaming) instead of waiting for their next poll.
 *
 * - **Transport**: Server-Sent Events (`GET /api/v1/streaming/…`, `event: update`, `data:
 *   <status JSON>`), read from a guarded GET (`fetch.ts`, `open`): the connection dials through
 *   the collector's private-address guard like every poll, the HTTP status is seen (a 401 says the
 *   instance wants a token), the token goes in `Authorization`, and one connection is one stream,
 *   which is what a lease holds. The events are parsed by `eventsource-parser`.
 * - **Streams**: a tag input listens to `/api/v1/streaming/hashtag?tag=<tag>` (one connection
 *   per instance and tag, whatever the number of inputs of any contract on it: a tag stream costs
 *   the instance's statuses with that tag, where the public stream would cost all of them). A user
 *   input listens to the instance's local public stream (`/api/v1/streaming/public/local`, one
 *   per instance) filtered by its account id (Mastodon has no per-account stream; the account of
 *   `user@host` is local to `host`), replies to others left out as its poll leaves them out. Its
 *   account id comes from its first poll (the connector's state); until then it is polled only.
 * - **Authentication**: a stream is opened without a token; when the instance answers 401 or
 *   403, its inputs listen with their contract's Mastodon credential of that instance
 *   (`credentials.ts`, `authorizationFor`), one stream per credential (a contract's token is
 *   never used for another contract's inputs); an input without one stays `poll`.
 * - **One listener per stream**: each stream (`mastodon:<host>:hashtag:<tag>`,
 *   `mastodon:<host>:public:local`, `…:<credential id>` when authenticated) is held by one
 *   process at a time (`store/streams.ts`), renewed every tick; a process that fails to renew
 *   stops listening at once. The last status id seen is saved as the stream's cursor.
 * - **Events**: `update` becomes items through the connector's `mastodonItem`, stored per
 *   matching input through `ingestPushed` (filters, de-duplication, rejections, events).
 *   `status.update` (an edit; payload: the Status) updates every stored copy of the status
 *   (store/removals.ts `updateFromSource`: it brings in no status not stored, and leaves removed
 *   ones and a moderator's edit alone). `delete` (payload: the status id as a string) removes the
 *   status `mastodon_<host>:<id>` wherever it is stored (`removeItems`, reason `deleted`;
 *   docs/api.md#removed-at-the-source): only that instance's ids, so an instance removes only its
 *   own statuses. Events are applied in the order received, one batch at a time.
 * - **Reconnects and gaps**: a lost connection (closed, failed, silent for `idleMs`) is opened
 *   again after a bounded exponential delay with jitter (`reconnectDelay`). On every connect each
 *   input's gap is filled from the REST timeline through the connector (`min_id` = the stream's
 *   cursor, else the input's own poll cursor); de-duplication keeps anything from being stored twice.
 * - **Feed mode**: an input is `stream` while its stream is connected, and back to `poll` when
 *   the stream has been lost for longer than `graceMs`, when the input leaves it (deactivated,
 *   changed, deleted) or when the listener stops. Safety-net polls go on at PUSH_POLL_INTERVAL.
 *
 * This module holds the leases and ties the units together: `routing.ts` (which stream an input
 * wants, which statuses match it), `connection.ts` (SSE connection and reconnects), `events.ts`
 * (`update`, `status.update`, `delete`), `gap.ts` (cursor and gap-fill), `lease.ts` (the
 * holder's decisions).
 */
import { randomBytes } from 'node:crypto';
import type { EventSourceMessage } from 'eventsource-parser';
import { activeInputsOf, setFeedMode } from '../../../store/inputs.ts';
import { holdStream, releaseStream, saveStreamCursor } from '../../../store/streams.ts';
import type { CollectorTools, StreamDeps } from '../../kit/stream/collector.ts';
import { keepConnected } from './connection.ts';
import { applyEvents, eventOf, newestStatusId, type StreamEvent } from './events.ts';
import { fillGap } from './gap.ts';
import { afterDrop, expiryDelay, renewal, type DropReason } from './lease.ts';
import { wantedStreams, type MastodonStream, type Member, type WantedStream } from './routing.ts';

/** Options of {@link startMastodonStreams}; the defaults suit production, tests shorten them. */
export interface MastodonStreamOptions {
  /** This process's holder id in stream leases. Default: `mastodon-<pid>-<random>` (the pid tells operators which process listens). */
  holder?: string;
  /** Lease time, ms (default 15 000); renewed every tick. */
  leaseMs?: number;
  /** Time between two looks at the inputs and lease renewals, ms (default leaseMs / 3). */
  tickMs?: number;
  /** How long a lost stream's inputs stay `stream` before they go back to `poll`, ms (default 10 000). */
  graceMs?: number;
  /** A stream silent this long is taken as lost (Mastodon sends a heartbeat every 15 s), ms (default 60 000). */
  idleMs?: number;
  /** Reconnect delays, ms (`reconnectDelay`; default 1 000 to 60 000). */
  reconnect?: { minMs: number; maxMs: number };
}

/** The running listener. */
export interface MastodonStreams {
  /** Looks at the inputs and renews the leases now (or joins the look under way). */
  tick(): Promise<void>;
  /** Stops listening: closes every stream, gives its lease up, and puts its inputs back to `poll` (once; later calls join it). */
  stop(): Promise<void>;
}

/** A stream this process holds. */
interface Held {
  stream: MastodonStream;
  /** Lease name (the stream's, with the credential id when authenticated). */
  name: string;
  headers: Record<string, string>;
  authenticated: boolean;
  members: Map<string, Member>;
  abort: AbortController;
  connected: boolean;
  /** When the stream was last lost (or first tried), ms; null while connected. */
  lostAt: number | null;
  /** Whether its inputs were set to `stream` and not yet back to `poll`. */
  streaming: boolean;
  /** The newest status id the stream delivered (the saved cursor). */
  lastId: string | null;
  /** Events received and not yet applied, in order. */
  pending: StreamEvent[];
  /** Gap fills and event batches, one after the other. */
  chain: Promise<void>;
  draining: boolean;
  done: Promise<void>;
  /** Stops listening shortly before the lease runs out unless a renewal pushes it back. */
  expiry: NodeJS.Timeout | undefined;
  /** Set once the stream is being dropped (`drop`). */
  dropped?: Promise<void>;
}

/** The settings of a listener, defaults applied (see {@link MastodonStreamOptions}). */
type Settings = Required<Omit<MastodonStreamOptions, 'tickMs'>>;

/**
 * Starts the Mastodon stream listener of a collector process (see the module); `config` gives
 * ALLOW_PRIVATE_FETCH (the guard of every connection), `tools` the collector's fetch, credential
 * resolver, ingestion and ticker (`collect/streams.ts`).
 */
export function startMastodonStreams(deps: StreamDeps, options: MastodonStreamOptions = {}): MastodonStreams {
  const leaseMs = options.leaseMs ?? 15_000;
  const settings: Settings = {
    holder: options.holder ?? `mastodon-${process.pid}-${randomBytes(6).toString('hex')}`,
    leaseMs,
    graceMs: options.graceMs ?? 10_000,
    idleMs: options.idleMs ?? 60_000,
    reconnect: options.reconnect ?? { minMs: 1000, maxMs: 60_000 },
  };
  const listener = new Listener(deps, settings);
  const ticker = deps.tools.startTicker(() => listener.tick(), options.tickMs ?? Math.max(100, Math.floor(leaseMs / 3)), deps.log);
  let stopped: Promise<void> | undefined;
  return {
    tick: ticker.tick,
    stop() {
      listener.stopping = true;
      stopped ??= ticker.stop().then(() => listener.stop());
      return stopped;
    },
  };
}

/** The streams of one process: their leases (store/streams.ts), feed modes, connections and events. */
class Listener {
  private readonly deps: StreamDeps;
  private readonly settings: Settings;
  private readonly fetcher: ReturnType<CollectorTools['createFetcher']>;
  private readonly held = new Map<string, Held>();
  /** Instances that answered 401/403 to an anonymous stream. */
  private readonly needsToken = new Set<string>();
  /** Drops under way (`drop`), awaited by `stop`. */
  private readonly dropping = new Set<Promise<void>>();
  stopping = false;

  constructor(deps: StreamDeps, settings: Settings) {
    this.deps = deps;
    this.settings = settings;
    this.fetcher = deps.tools.createFetcher({ allowPrivate: deps.config.allowPrivateFetch });
  }

  /** Renews the leases of the streams still wanted (dropping the others), then takes the newly wanted ones. */
  async tick(): Promise<void> {
    if (this.stopping) return;
    const inputs = await activeInputsOf(this.deps.db, 'mastodon', ['tag', 'user']);
    const want = await wantedStreams(inputs, this.needsToken, this.deps.tools.credentials);
    const now = Date.now();
    for (const [name, current] of this.held) await this.renew(current, want.get(name), now);
    for (const [name, next] of want) {
      if (this.held.has(name) || this.stopping) continue;
      await this.take(name, next, now);
    }
  }

  /** Stops listening: every stream dropped (its lease given up, its inputs to `poll`), the fetcher closed. */
  async stop(): Promise<void> {
    await Promise.all([...this.held.values()].map((stream) => this.drop(stream, 'stopping')));
    await Promise.allSettled([...this.dropping]);
    await this.fetcher.close();
  }

  /**
   * Renews the lease of a held stream still wanted (`next`) and brings its inputs up to date
   * (`lease.ts` `renewal`); a stream no longer wanted is released, one whose lease was taken over
   * is dropped without releasing it.
   */
  private async renew(current: Held, next: WantedStream | undefined, now: number): Promise<void> {
    const { db } = this.deps;
    const renewed = next ? (await holdStream(db, current.name, this.settings.holder, this.settings.leaseMs, now)).held : false;
    const state = { members: [...current.members.keys()], connected: current.connected, streaming: current.streaming, lostAt: current.lostAt };
    const plan = renewal(state, next?.members.map((m) => m.input.id), renewed, now, this.settings.graceMs);
    if ('drop' in plan) return void (await this.drop(current, plan.drop));
    this.watch(current, now);
    current.members = new Map(next!.members.map((m) => [m.input.id, m]));
    if (plan.left.length) await setFeedMode(db, plan.left, 'poll');
    if (plan.joined.length) await setFeedMode(db, plan.joined, 'stream');
    if (plan.backToPoll) {
      current.streaming = false;
      await setFeedMode(db, [...current.members.keys()], 'poll');
    }
  }

  /** Takes the lease of a newly wanted stream, if nobody holds it, and starts listening from its saved cursor. */
  private async take(name: string, next: WantedStream, now: number): Promise<void> {
    const lease = await holdStream(this.deps.db, name, this.settings.holder, this.settings.leaseMs, now);
    if (!lease.held) return;
    const stream: Held = {
      ...next,
      name,
      members: new Map(next.members.map((m) => [m.input.id, m])),
      abort: new AbortController(),
      connected: false,
      lostAt: now,
      streaming: false,
      lastId: lease.cursor,
      pending: [],
      chain: Promise.resolve(),
      draining: false,
      done: Promise.resolve(),
      expiry: undefined,
    };
    this.held.set(name, stream);
    this.watch(stream, now);
    stream.done = this.listen(stream).catch((err: unknown) => this.deps.log?.error({ err, stream: name }, 'mastodon stream failed'));
  }

  /**
   * Arms the stop of `stream` at 90 % of the lease taken at `now`: when renewals fail (the
   * database is out of reach, a tick is slow), this process stops listening before another may
   * take the stream over.
   */
  private watch(stream: Held, now: number): void {
    clearTimeout(stream.expiry);
    stream.expiry = setTimeout(() => {
      if (this.held.get(stream.name) !== stream) return;
      this.deps.log?.warn({ stream: stream.name }, 'mastodon stream lease not renewed: listening stops');
      this.dropLogged(stream, 'lost');
    }, expiryDelay(now, this.settings.leaseMs, Date.now()));
  }

  /** Stops listening to `stream`; `why` says whether its lease is still ours to give up. */
  private drop(stream: Held, why: DropReason): Promise<void> {
    clearTimeout(stream.expiry);
    stream.abort.abort();
    if (this.held.get(stream.name) === stream) this.held.delete(stream.name);
    stream.dropped ??= (async () => {
      await stream.done;
      await stream.chain;
      const { release, toPoll } = afterDrop(why, stream.streaming);
      if (release) await releaseStream(this.deps.db, stream.name, this.settings.holder);
      if (toPoll) await setFeedMode(this.deps.db, [...stream.members.keys()], 'poll');
    })();
    const dropped = stream.dropped;
    this.dropping.add(dropped);
    void dropped.finally(() => this.dropping.delete(dropped)).catch(() => {});
    return dropped;
  }

  /** {@link drop} without waiting, a failure logged. */
  private dropLogged(stream: Held, why: DropReason): void {
    this.drop(stream, why).catch((err: unknown) => this.deps.log?.error({ err, stream: stream.name }, 'mastodon stream: stopping failed'));
  }

  /** Connects, reads and reconnects (`keepConnected`) until the stream is dropped; an instance that wants a token regroups its inputs by credential. */
  private listen(stream: Held): Promise<void> {
    const { db, log } = this.deps;
    return keepConnected(
      {
        open: (signal) => this.fetcher.open(`${stream.stream.origin}${stream.stream.path}`, { accept: 'text/event-stream', ...stream.headers }, signal),
        refused: (status) => {
          if ((status !== 401 && status !== 403) || stream.authenticated) return false;
          // The instance wants a token: the next tick regroups its inputs by credential.
          this.needsToken.add(stream.stream.origin);
          log?.info({ stream: stream.name, status }, 'mastodon stream needs a token');
          this.dropLogged(stream, 'unwanted');
          return true;
        },
        connected: async () => {
          stream.connected = true;
          stream.lostAt = null;
          stream.streaming = true;
          await setFeedMode(db, [...stream.members.keys()], 'stream');
          this.enqueue(stream, () => this.fillGap(stream));
        },
        event: (message) => this.onMessage(stream, message),
        lost: (error) => {
          if (error !== undefined) log?.warn({ err: error, stream: stream.name }, 'mastodon stream lost');
          stream.connected = false;
          stream.lostAt = Date.now();
        },
      },
      { host: stream.stream.host, signal: stream.abort.signal, idleMs: this.settings.idleMs, reconnect: this.settings.reconnect },
    );
  }

  /** Queues an event of the stream, and a drain of the queue unless one is queued already. */
  private onMessage(stream: Held, message: EventSourceMessage): void {
    const read = eventOf(message);
    if (!read) return;
    if ('warning' in read) return void this.deps.log?.warn({ stream: stream.name }, read.warning);
    stream.pending.push(read.event);
    if (!stream.draining) {
      stream.draining = true;
      this.enqueue(stream, () => this.drain(stream));
    }
  }

  /** Runs `task` after the stream's earlier gap fills and batches; a failure is logged. */
  private enqueue(stream: Held, task: () => Promise<void>): void {
    stream.chain = stream.chain.then(task).catch((err: unknown) => this.deps.log?.error({ err, stream: stream.name }, 'mastodon stream: storing failed'));
  }

  /** Applies the events received so far (`applyEvents`), then saves the cursor; a lease taken over stops the stream. */
  private async drain(stream: Held): Promise<void> {
    stream.draining = false;
    const batch = stream.pending.splice(0);
    if (!batch.length) return;
    const newest = newestStatusId(batch, stream.lastId);
    const { db, log, tools } = this.deps;
    await applyEvents({ db, ingestPushed: tools.ingestPushed, ...(log && { log }), host: stream.stream.host, name: stream.name, members: stream.members.values() }, batch);
    if (newest && newest !== stream.lastId) {
      stream.lastId = newest;
      if (!(await saveStreamCursor(db, stream.name, this.settings.holder, newest))) stream.abort.abort(); // taken over
    }
  }

  /** Fills the gap since the stream's cursor (`gap.ts`). */
  private fillGap(stream: Held): Promise<void> {
    const { db, log, tools } = this.deps;
    return fillGap(
      { db, fetch: this.fetcher, credentials: tools.credentials, ingestPushed: tools.ingestPushed, ...(log && { log }) },
      { name: stream.name, members: [...stream.members.values()], cursor: stream.lastId, signal: stream.abort.signal },
    );
  }
}
