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
 */
import { randomBytes } from 'node:crypto';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { activeInputsOf, setFeedMode } from '../../../store/inputs.ts';
import { removeItems, updateFromSource } from '../../../store/removals.ts';
import { holdStream, releaseStream, saveStreamCursor } from '../../../store/streams.ts';
import type { InputRow } from '../../../store/tables.ts';
import { SourceError } from '../../connector.ts';
import { authorizationFor, mastodon, mastodonItem, newerId, parseMastodonInput } from '../connector.ts';
import { idOf, obj, type Json } from '../../kit/normalize.ts';
import type { StreamDeps } from '../../kit/stream/collector.ts';
import { ownsEntries } from '../../table.ts';

/** The stream an input listens to (before authentication): lease name, instance, request path. */
export interface MastodonStream {
  /** Lease name: `mastodon:<host>:hashtag:<tag>` or `mastodon:<host>:public:local`. */
  name: string;
  origin: string;
  host: string;
  /** Path and query of the SSE endpoint on the instance. */
  path: string;
}

/**
 * The stream of a Mastodon input (see the module), or null for an input that cannot stream: an
 * input the connector cannot read, or a user input whose account id is not known yet
 * (`accountId`, from its poll state). Tags are matched case-insensitively, as Mastodon does.
 */
export function streamOf(input: Pick<InputRow, 'type' | 'input'>, accountId: string | null): MastodonStream | null {
  let parsed;
  try {
    parsed = parseMastodonInput(input.type, input.input);
  } catch (error) {
    if (error instanceof SourceError) return null;
    throw error;
  }
  const { origin, host, name } = parsed;
  if (input.type === 'tag') {
    const tag = name.toLowerCase();
    return { name: `mastodon:${host}:hashtag:${tag}`, origin, host, path: `/api/v1/streaming/hashtag?${new URLSearchParams({ tag })}` };
  }
  if (input.type === 'user' && accountId) return { name: `mastodon:${host}:public:local`, origin, host, path: '/api/v1/streaming/public/local' };
  return null;
}

/** The account id a user input's polls looked up (the connector's state), or null. */
export function accountIdOf(input: Pick<InputRow, 'type' | 'input' | 'sourceState'>): string | null {
  if (input.type !== 'user') return null;
  const state = parseState(input.sourceState);
  return state.accountOf === input.input && typeof state.accountId === 'string' ? state.accountId : null;
}

/**
 * Whether a status from the stream belongs to an input: every status of a tag stream does (the
 * instance matched the tag); on the local public stream, the user input's account's statuses,
 * leaving out replies to other accounts (as the poll's `exclude_replies`).
 */
export function statusMatches(status: Json, input: { type: string; accountId: string | null }): boolean {
  if (input.type === 'tag') return true;
  const account = idOf(obj(status.account).id);
  if (!input.accountId || account !== input.accountId) return false;
  const replyTo = idOf(status.in_reply_to_account_id);
  return !idOf(status.in_reply_to_id) || replyTo === input.accountId;
}

/**
 * The wait before reconnect number `failures + 1` (ms): `minMs × 2^failures`, at most `maxMs`,
 * of which a random half (`random()` in [0, 1)) is jitter, so that listeners that lost their
 * streams together do not come back together.
 */
export function reconnectDelay(failures: number, random: () => number = Math.random, { minMs = 1000, maxMs = 60_000 } = {}): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

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

/** An input listening to a stream. */
interface Member {
  input: InputRow;
  accountId: string | null;
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
  /** Events received and not yet applied, in order: a status (`update`, or `status.update` with `edit`), or a deleted status's id. */
  pending: ({ status: Json; edit: boolean } | { deleted: string })[];
  /** Gap fills and event batches, one after the other. */
  chain: Promise<void>;
  draining: boolean;
  done: Promise<void>;
  /** Stops listening shortly before the lease runs out unless a renewal pushes it back. */
  expiry: NodeJS.Timeout | undefined;
  /** Set once the stream is being dropped (`drop`). */
  dropped?: Promise<void>;
}

const MAX_EVENT_BYTES = 1024 * 1024;

/**
 * Starts the Mastodon stream listener of a collector process (see the module); `config` gives
 * ALLOW_PRIVATE_FETCH (the guard of every connection), `tools` the collector's fetch, credential
 * resolver, ingestion and ticker (`collect/streams.ts`).
 */
export function startMastodonStreams(deps: StreamDeps, options: MastodonStreamOptions = {}): MastodonStreams {
  const { db, config, log, tools: { createFetcher, credentials, ingestPushed, startTicker } } = deps;
  const holder = options.holder ?? `mastodon-${process.pid}-${randomBytes(6).toString('hex')}`;
  const leaseMs = options.leaseMs ?? 15_000;
  const tickMs = options.tickMs ?? Math.max(100, Math.floor(leaseMs / 3));
  const graceMs = options.graceMs ?? 10_000;
  const idleMs = options.idleMs ?? 60_000;
  const reconnect = options.reconnect ?? { minMs: 1000, maxMs: 60_000 };
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch });
  const held = new Map<string, Held>();
  /** Instances that answered 401/403 to an anonymous stream. */
  const needsToken = new Set<string>();
  /** Drops under way (`drop`), awaited by `stop`. */
  const dropping = new Set<Promise<void>>();
  let stopping = false;

  /** The streams the active inputs want now, by lease name. */
  async function wanted(): Promise<Map<string, { stream: MastodonStream; headers: Record<string, string>; authenticated: boolean; members: Member[] }>> {
    const want = new Map<string, { stream: MastodonStream; headers: Record<string, string>; authenticated: boolean; members: Member[] }>();
    for (const input of await activeInputsOf(db, 'mastodon', ['tag', 'user'])) {
      const accountId = accountIdOf(input);
      const stream = streamOf(input, accountId);
      if (!stream) continue;
      let name = stream.name;
      let headers: Record<string, string> = {};
      if (needsToken.has(stream.origin)) {
        const resolved = await credentials.resolve(input).catch(() => undefined);
        headers = resolved ? authorizationFor(resolved.services.mastodon, stream.origin) : {};
        if (!headers.authorization) continue; // no token for this instance: the input is polled
        name = `${name}:${resolved!.credential?.id ?? 'shared'}`;
      }
      const entry = want.get(name) ?? { stream, headers, authenticated: Boolean(headers.authorization), members: [] };
      entry.members.push({ input, accountId });
      want.set(name, entry);
    }
    return want;
  }

  async function tick(): Promise<void> {
    if (stopping) return;
    const want = await wanted();
    const now = Date.now();
    for (const [name, current] of held) {
      const next = want.get(name);
      const renewed = next ? (await holdStream(db, name, holder, leaseMs, now)).held : false;
      if (renewed) watch(current, now);
      if (!renewed) {
        // Not wanted any more (release it), or taken over (it is not ours to release).
        await drop(current, next !== undefined ? 'lost' : 'unwanted');
        continue;
      }
      // Inputs that left the stream go back to polling; new ones join it.
      const left = [...current.members.keys()].filter((id) => !next!.members.some((m) => m.input.id === id));
      const joined = next!.members.filter((m) => !current.members.has(m.input.id)).map((m) => m.input.id);
      current.members = new Map(next!.members.map((m) => [m.input.id, m]));
      if (left.length) await setFeedMode(db, left, 'poll');
      if (current.connected && joined.length) await setFeedMode(db, joined, 'stream');
      if (!current.connected && current.streaming && current.lostAt !== null && now - current.lostAt > graceMs) {
        current.streaming = false;
        await setFeedMode(db, [...current.members.keys()], 'poll');
      }
    }
    for (const [name, next] of want) {
      if (held.has(name) || stopping) continue;
      const lease = await holdStream(db, name, holder, leaseMs, now);
      if (!lease.held) continue;
      const stream: Held = {
        stream: next.stream,
        name,
        headers: next.headers,
        authenticated: next.authenticated,
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
      held.set(name, stream);
      watch(stream, now);
      stream.done = listen(stream).catch((err: unknown) => log?.error({ err, stream: name }, 'mastodon stream failed'));
    }
  }

  /**
   * Arms the stop of `stream` at 90 % of the lease taken at `now`: when renewals fail (the
   * database is out of reach, a tick is slow), this process stops listening before another may
   * take the stream over.
   */
  function watch(stream: Held, now: number): void {
    clearTimeout(stream.expiry);
    stream.expiry = setTimeout(() => {
      if (held.get(stream.name) !== stream) return;
      log?.warn({ stream: stream.name }, 'mastodon stream lease not renewed: listening stops');
      drop(stream, 'lost').catch((err: unknown) => log?.error({ err, stream: stream.name }, 'mastodon stream: stopping failed'));
    }, Math.max(0, now + Math.floor(leaseMs * 0.9) - Date.now()));
  }

  /** Stops listening to `stream`; `why` says whether its lease is still ours to give up. */
  function drop(stream: Held, why: 'lost' | 'unwanted' | 'stopping'): Promise<void> {
    clearTimeout(stream.expiry);
    stream.abort.abort();
    if (held.get(stream.name) === stream) held.delete(stream.name);
    stream.dropped ??= (async () => {
      await stream.done;
      await stream.chain;
      if (why !== 'lost') await releaseStream(db, stream.name, holder);
      // Taken over: the new holder says how they are fed. Otherwise nobody streams them now.
      if (why !== 'lost' && stream.streaming) await setFeedMode(db, [...stream.members.keys()], 'poll');
    })();
    const dropped = stream.dropped;
    dropping.add(dropped);
    void dropped.finally(() => dropping.delete(dropped)).catch(() => {});
    return dropped;
  }

  /** Connects, reads and reconnects until the stream is dropped. */
  async function listen(stream: Held): Promise<void> {
    const { signal } = stream.abort;
    let failures = 0;
    while (!signal.aborted) {
      let connectedAt: number | null = null;
      try {
        const res = await fetcher.open(`${stream.stream.origin}${stream.stream.path}`, { accept: 'text/event-stream', ...stream.headers }, signal);
        if ((res.status === 401 || res.status === 403) && !stream.authenticated) {
          await res.body?.cancel().catch(() => {});
          // The instance wants a token: the next tick regroups its inputs by credential.
          needsToken.add(stream.stream.origin);
          log?.info({ stream: stream.name, status: res.status }, 'mastodon stream needs a token');
          drop(stream, 'unwanted').catch((err: unknown) => log?.error({ err, stream: stream.name }, 'mastodon stream: stopping failed'));
          return;
        }
        if (res.status !== 200 || !res.body) {
          await res.body?.cancel().catch(() => {});
          throw new Error(`${stream.stream.host} answered HTTP ${res.status} to the stream`);
        }
        connectedAt = Date.now();
        stream.connected = true;
        stream.lostAt = null;
        stream.streaming = true;
        await setFeedMode(db, [...stream.members.keys()], 'stream');
        enqueue(stream, () => fillGap(stream));
        await read(stream, res.body, signal);
      } catch (error) {
        if (signal.aborted) break;
        log?.warn({ err: error, stream: stream.name }, 'mastodon stream lost');
      } finally {
        stream.connected = false;
        stream.lostAt = Date.now();
      }
      if (signal.aborted) break;
      // A connection that lasted resets the backoff; one dropped at once counts as a failure.
      failures = connectedAt !== null && Date.now() - connectedAt > 30_000 ? 0 : failures + 1;
      await sleep(reconnectDelay(failures - 1, Math.random, reconnect), signal);
    }
  }

  /** Reads SSE events from `body` until it ends, fails, stays silent for idleMs, or `signal` aborts. */
  async function read(stream: Held, body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let failure: unknown;
    const parser = createParser({
      maxBufferSize: MAX_EVENT_BYTES,
      onEvent: (message) => onMessage(stream, message),
      // An event over MAX_EVENT_BYTES ends the connection; a field the parser does not know is skipped.
      onError: (error) => {
        if (error.type !== 'max-buffer-size-exceeded') return;
        failure = error;
        void reader.cancel().catch(() => {});
      },
    });
    let idle = setTimeout(() => void reader.cancel().catch(() => {}), idleMs);
    const onAbort = () => void reader.cancel().catch(() => {});
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        clearTimeout(idle);
        idle = setTimeout(() => void reader.cancel().catch(() => {}), idleMs);
        parser.feed(value);
      }
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', onAbort);
    }
    if (failure) throw failure;
  }

  function onMessage(stream: Held, message: EventSourceMessage): void {
    if (message.event === 'delete') {
      const id = deletedId(message.data);
      if (!id) return log?.warn({ stream: stream.name }, 'mastodon stream sent a delete without a status id');
      stream.pending.push({ deleted: id });
    } else if (message.event === 'update' || message.event === 'status.update') {
      let status: Json;
      try {
        status = obj(JSON.parse(message.data));
      } catch {
        log?.warn({ stream: stream.name }, 'mastodon stream sent an event that is not JSON');
        return;
      }
      stream.pending.push({ status, edit: message.event === 'status.update' });
    } else return;
    if (!stream.draining) {
      stream.draining = true;
      enqueue(stream, () => drain(stream));
    }
  }

  function enqueue(stream: Held, task: () => Promise<void>): void {
    stream.chain = stream.chain.then(task).catch((err: unknown) => log?.error({ err, stream: stream.name }, 'mastodon stream: storing failed'));
  }

  /**
   * Applies the events received so far, in order, as runs of one kind: new statuses stored for
   * every input they match, edits and deletions applied to every stored copy; then saves the cursor.
   */
  async function drain(stream: Held): Promise<void> {
    stream.draining = false;
    const batch = stream.pending.splice(0);
    if (!batch.length) return;
    let newest = stream.lastId;
    for (const event of batch) {
      const id = 'status' in event && !event.edit ? idOf(event.status.id) : null;
      if (id && (!newest || newerId(id, newest))) newest = id;
    }
    const host = stream.stream.host;
    for (let start = 0; start < batch.length; ) {
      const kind = eventKind(batch[start]!);
      let end = start + 1;
      while (end < batch.length && eventKind(batch[end]!) === kind) end++;
      const run = batch.slice(start, end);
      start = end;
      try {
        if (kind === 'delete') {
          const ids = run.map((event) => `mastodon_${host}:${(event as { deleted: string }).deleted}`);
          await removeItems(db, { service: 'mastodon', ids }, { reason: 'deleted' }, ownsEntries);
        } else if (kind === 'edit') {
          // An edit updates what is stored; it does not bring in an old status.
          for (const event of run) {
            const item = mastodonItem((event as { status: Json }).status, host);
            if (item) await updateFromSource(db, item);
          }
        } else await storeUpdates(stream, run as { status: Json; edit: boolean }[]);
      } catch (error) {
        log?.warn({ err: error, stream: stream.name, kind }, 'mastodon stream: events not applied');
      }
    }
    if (newest && newest !== stream.lastId) {
      stream.lastId = newest;
      if (!(await saveStreamCursor(db, stream.name, holder, newest))) stream.abort.abort(); // taken over
    }
  }

  /** Stores new statuses (`update` events) for every input of the stream they match. */
  async function storeUpdates(stream: Held, updates: { status: Json }[]): Promise<void> {
    for (const member of stream.members.values()) {
      const who = { type: member.input.type, accountId: member.accountId };
      const items = updates.filter((event) => statusMatches(event.status, who)).map((event) => mastodonItem(event.status, stream.stream.host)).filter((item) => item !== null);
      if (!items.length) continue;
      try {
        await ingestPushed(db, member.input, items, { ...(log && { log }) });
      } catch (error) {
        log?.warn({ err: error, input: member.input.id }, 'mastodon stream: items not stored');
      }
    }
  }

  /**
   * Fills the gap since the stream's cursor (else the inputs' poll cursors) from the REST
   * timeline: a tag stream's inputs all read the same timeline, asked once (from the oldest
   * cursor) and stored for each; a user input reads its account's statuses.
   */
  async function fillGap(stream: Held): Promise<void> {
    const members = [...stream.members.values()];
    const cursorOf = (member: Member) => {
      const minId = parseState(member.input.sourceState).minId;
      return stream.lastId ?? (typeof minId === 'string' ? minId : null);
    };
    const groups = members[0]?.input.type === 'tag' ? [members] : members.map((member) => [member]);
    for (const group of groups) {
      const cursors = group.map(cursorOf).filter((id) => id !== null);
      if (!cursors.length || stream.abort.signal.aborted) continue;
      const minId = cursors.reduce((a, b) => (newerId(a, b) ? b : a));
      const { input } = group[0]!;
      try {
        const now = Date.now();
        const resolved = await credentials.resolve(input, { fetch: fetcher, now });
        const result = await mastodon.collect(input, { ...parseState(input.sourceState), minId }, { fetch: fetcher, services: resolved.services, now });
        if (!result.items.length) continue;
        for (const member of group) {
          await ingestPushed(db, member.input, result.items, { ...(log && { log }) }).catch((error: unknown) =>
            log?.warn({ err: error, input: member.input.id }, 'mastodon stream: gap items not stored'));
        }
      } catch (error) {
        log?.warn({ err: error, input: input.id, stream: stream.name }, 'mastodon stream: gap not filled (the next poll will)');
      }
    }
  }

  const ticker = startTicker(tick, tickMs, log);
  let stopped: Promise<void> | undefined;

  return {
    tick: ticker.tick,
    stop() {
      stopping = true;
      stopped ??= (async () => {
        await ticker.stop();
        await Promise.all([...held.values()].map((stream) => drop(stream, 'stopping')));
        await Promise.allSettled([...dropping]);
        await fetcher.close();
      })();
      return stopped;
    },
  };
}

/** What a pending event is: a new status, an edit or a deletion. */
function eventKind(event: { status: Json; edit: boolean } | { deleted: string }): 'update' | 'edit' | 'delete' {
  return 'deleted' in event ? 'delete' : event.edit ? 'edit' : 'update';
}

/**
 * The status id of a `delete` event's payload (docs.joinmastodon.org/methods/streaming: the id
 * as a string, digits kept as text whatever their length; a JSON string is read too), or null
 * when it is not an id (digits and letters, at most 64).
 */
export function deletedId(data: string): string | null {
  let id = data.trim();
  if (id.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(id);
      id = typeof value === 'string' ? value.trim() : '';
    } catch {
      return null;
    }
  }
  return /^[0-9A-Za-z]{1,64}$/.test(id) ? id : null;
}

function parseState(sourceState: string): Record<string, unknown> {
  try {
    return obj(JSON.parse(sourceState));
  } catch {
    return {};
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
