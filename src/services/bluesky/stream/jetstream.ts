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
 *   (`createGuardedAgent`, ALLOW_PRIVATE_FETCH); reconnects back off from 1 s to 30 s; more than
 *   20 000 events waiting → the connection is dropped and resumed from the cursor.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import { WebSocket } from 'undici';
import { FilterError } from '../../../filter/engine.ts';
import { FilterBudgetError } from '../../../filter/pool.ts';
import type { ContentItem } from '../../../item.ts';
import { activeInputsOf, setFeedMode } from '../../../store/inputs.ts';
import { removeItems, updateFromSource } from '../../../store/removals.ts';
import { holdStream, releaseStream, saveStreamCursor } from '../../../store/streams.ts';
import type { InputRow } from '../../../store/tables.ts';
import type { CollectContext, FetchError } from '../../connector.ts';
import { type BlueskyAuthor, blueskyDid, blueskyProfiles, jetstreamDeletedId, jetstreamItem } from '../connector.ts';
import { obj, str, type Json } from '../../kit/normalize.ts';
import type { StreamDeps } from '../../kit/stream/collector.ts';
import { compileMatcher, type Matcher, type MatchInput, matchPostOf } from './jetstream-match.ts';
import { ownsEntries } from '../../table.ts';

/** The stream's name in the `streams` table. */
export const JETSTREAM = 'jetstream';
/** How far before the saved cursor a new connection resumes, µs (Jetstream's advice: a few seconds). */
export const REWIND_US = 5_000_000;
const GRACE_MS = 15_000;
const MAX_QUEUE = 20_000;
const BATCH = 500;
const BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];
/** A handle that failed to resolve is tried again after this long, ms. */
const RETRY_RESOLVE_MS = 60_000;
/** Handles resolved per reading of the inputs, at most (the others wait for the next). */
const RESOLVE_PER_REFRESH = 20;
/** After a failed profiles lookup, items are stored with DIDs for this long, ms. */
const PROFILES_PAUSE_MS = 30_000;

/** `tools`: the collector's (`collect/streams.ts`). */
export interface JetstreamOptions extends StreamDeps {
  log: FastifyBaseLogger;
  /** ms between two reads of the inputs (default 3000). */
  refreshMs?: number;
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

interface Queued {
  generation: number;
  event: Json;
}

/** Starts the listener (see the module); a no-op listener when JETSTREAM_URL is `off`. */
export function startJetstream(options: JetstreamOptions): JetstreamListener {
  const { db, config, log, tools: { createFetcher, createGuardedAgent, ingestPushed } } = options;
  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const state: JetstreamStatus = { holder, connected: false, connections: 0, lastError: null };
  if (!config.jetstreamUrl) return { status: () => ({ ...state }), stop: async () => {} };
  const url = config.jetstreamUrl;
  const leaseMs = config.jetstreamLease * 1000;
  const refreshMs = options.refreshMs ?? 3000;
  let refused: FetchError | undefined;
  const agent = createGuardedAgent({ allowPrivate: config.allowPrivateFetch, onBlocked: (error) => (refused = error) });
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch, timeoutMs: 5000 });
  const context = (): CollectContext => ({ fetch: fetcher, services: config.services, now: Date.now() });
  const profiles = new LRUCache<string, BlueskyAuthor>({ max: 10_000, ttl: 3_600_000 });
  const dids = new LRUCache<string, string>({ max: 100_000 });
  const unresolved = new LRUCache<string, number>({ max: 100_000 });
  let profilesDownUntil = 0;

  let rows = new Map<string, InputRow>();
  let matcher: Matcher = compileMatcher([]);
  let signature = '';
  let lastRefresh = 0;
  /** Inputs this process has set to `stream`. */
  let streamed = new Set<string>();
  let socket: WebSocket | undefined;
  let generation = 0;
  let holding = false;
  let savedCursor: string | null = null;
  let failures = 0;
  let retryAt = 0;
  let disconnectedAt = Date.now();
  const queue: Queued[] = [];
  let pumping: Promise<void> | undefined;
  let stopped = false;
  let ticking: Promise<void> = Promise.resolve();

  const fail = (message: string) => {
    state.lastError = message;
    log.warn({ stream: JETSTREAM }, `jetstream: ${message}`);
  };

  async function setMode(ids: string[], mode: 'stream' | 'poll') {
    if (!ids.length) return;
    await setFeedMode(db, ids, mode).catch((error: unknown) => fail(`could not set the feed mode: ${String(error)}`));
    for (const id of ids) (mode === 'stream' ? streamed.add(id) : streamed.delete(id));
  }

  /** Reads the inputs; recompiles the matcher when they changed. */
  async function refresh(now: number) {
    const inputs = await activeInputsOf(db, 'bluesky');
    const pending = inputs.some((i) => i.type === 'user' && !dids.has(i.input) && (unresolved.get(i.input) ?? 0) <= now);
    const next = inputs.map((i) => `${i.id}\t${i.type}\t${i.input}\t${i.lastModified}\t${i.filterId}\t${i.display}`).join('\n');
    rows = new Map(inputs.map((i) => [i.id, i]));
    if (next === signature && !pending) return;
    signature = next;
    const compiled: MatchInput[] = [];
    let resolving = 0;
    for (const input of inputs) {
      if (input.type === 'keyword') compiled.push({ id: input.id, type: 'keyword', query: input.input });
      else if (input.type === 'user') {
        let did = dids.get(input.input);
        if (!did && (unresolved.get(input.input) ?? 0) <= now && resolving++ < RESOLVE_PER_REFRESH) {
          try {
            did = await blueskyDid(context(), input.input);
            dids.set(input.input, did);
          } catch (error) {
            unresolved.set(input.input, now + RETRY_RESOLVE_MS);
            fail(`could not resolve the user ${input.input}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        if (did) compiled.push({ id: input.id, type: 'user', query: did });
      }
    }
    matcher = compileMatcher(compiled);
    // Inputs no longer served go back to polling; new ones stream if connected.
    await setMode([...streamed].filter((id) => !matcher.ids.has(id)), 'poll');
    if (state.connected) await setMode([...matcher.ids].filter((id) => !streamed.has(id)), 'stream');
  }

  function disconnect() {
    generation += 1;
    queue.length = 0;
    if (socket) {
      const closing = socket;
      socket = undefined;
      try {
        closing.close();
      } catch {
        // Already closed.
      }
    }
    if (state.connected) disconnectedAt = Date.now();
    state.connected = false;
  }

  function connect() {
    const mine = ++generation;
    refused = undefined;
    const target = new URL(url);
    target.searchParams.set('wantedCollections', 'app.bsky.feed.post');
    if (savedCursor && /^\d+$/.test(savedCursor)) target.searchParams.set('cursor', String(Math.max(0, Number(savedCursor) - REWIND_US)));
    const ws = new WebSocket(target.href, { dispatcher: agent });
    socket = ws;
    ws.addEventListener('open', () => {
      if (mine !== generation) return;
      state.connected = true;
      state.connections += 1;
      failures = 0;
      void setMode([...matcher.ids].filter((id) => !streamed.has(id)), 'stream');
    });
    ws.addEventListener('message', (message) => {
      if (mine !== generation || typeof message.data !== 'string') return;
      let event: Json;
      try {
        event = obj(JSON.parse(message.data));
      } catch {
        return;
      }
      queue.push({ generation: mine, event });
      if (queue.length > MAX_QUEUE) {
        fail(`more than ${MAX_QUEUE} events waiting: reconnecting from the cursor`);
        return dropped();
      }
      pumping ??= pump().finally(() => (pumping = undefined));
    });
    const dropped = () => {
      if (mine !== generation) return;
      disconnect();
      retryAt = Date.now() + BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)]!;
      failures += 1;
    };
    ws.addEventListener('error', (event) => {
      if (mine !== generation) return;
      fail(`connection failed: ${describe(refused ?? (event as unknown as { error?: unknown }).error)}`);
      dropped();
    });
    ws.addEventListener('close', () => dropped());
  }

  /** Matches, stores and checkpoints the queued events, in order (see the module). */
  async function pump() {
    while (queue.length && !stopped) {
      const batch = queue.splice(0, BATCH);
      const current = batch.filter((q) => q.generation === generation);
      if (!current.length) continue;
      try {
        const cursor = await ingestBatch(current.map((q) => q.event));
        // A replay after a reconnect may end before the cursor saved: it never moves back.
        if (cursor === null || !holding || (savedCursor !== null && Number(cursor) <= Number(savedCursor))) continue;
        if (await saveStreamCursor(db, JETSTREAM, holder, cursor)) savedCursor = cursor;
        else {
          holding = false;
          fail('lost the lease while storing: disconnecting');
          disconnect();
        }
      } catch (error) {
        // Not stored: resume from the saved cursor on a new connection.
        fail(`storing failed, resuming from the cursor: ${describe(error)}`);
        disconnect();
      }
    }
  }

  /**
   * Stores the batch's matched posts per input, then applies its post updates to every stored
   * copy (`updateFromSource`) and removes its deleted posts wherever stored (`removeItems`, reason
   * `deleted`); answers the batch's last `time_us`, or null.
   */
  async function ingestBatch(events: Json[]): Promise<string | null> {
    let last: number | null = null;
    const matched: { event: Json; ids: string[] }[] = [];
    const updated: Json[] = [];
    const deleted = new Set<string>();
    for (const event of events) {
      if (typeof event.time_us === 'number') last = Math.max(last ?? 0, event.time_us);
      // A changed handle: the next post of that author looks its profile up again.
      if (event.kind === 'identity' && typeof event.did === 'string') profiles.delete(event.did);
      const gone = jetstreamDeletedId(event);
      if (gone) {
        deleted.add(gone);
        continue;
      }
      const post = matchPostOf(event);
      if (!post) continue;
      if (obj(event.commit).operation === 'update') updated.push(event);
      const ids = matcher.match(post);
      if (ids.length) matched.push({ event, ids });
    }
    if (matched.length) {
      const missing = [...new Set(matched.map((m) => String(m.event.did)))].filter((did) => !profiles.has(did));
      if (missing.length && Date.now() >= profilesDownUntil) {
        try {
          const found = await blueskyProfiles(context(), missing);
          for (const did of missing) profiles.set(did, found.get(did) ?? {});
        } catch (error) {
          // The AppView is not answering: items go with DIDs for a while rather than wait.
          profilesDownUntil = Date.now() + PROFILES_PAUSE_MS;
          fail(`profiles lookup failed, storing with DIDs: ${describe(error)}`);
        }
      }
      const perInput = new Map<string, ContentItem[]>();
      for (const { event, ids } of matched) {
        const item = jetstreamItem(event, profiles.get(String(event.did)));
        if (!item) continue;
        for (const id of ids) perInput.set(id, [...(perInput.get(id) ?? []), item]);
      }
      for (const [id, items] of perInput) {
        const row = rows.get(id);
        if (!row) continue;
        try {
          await ingestPushed(db, row, items, { log });
        } catch (error) {
          // A filter that cannot judge them: what a poll would do too (nothing stored, said).
          if (error instanceof FilterError || error instanceof FilterBudgetError) fail(`input ${id}: ${error.message}`);
          else throw error;
        }
      }
    }
    // An edit reaches every stored copy, matched now or not (a moderator's edit stays what shows).
    for (const event of updated) {
      const item = jetstreamItem(event, profiles.get(String(event.did)));
      if (item) await updateFromSource(db, item);
    }
    // After the batch's posts are stored: a post created and deleted in one batch ends removed.
    if (deleted.size) await removeItems(db, { service: 'bluesky', ids: [...deleted] }, { reason: 'deleted' }, ownsEntries);
    return last === null ? null : String(last);
  }

  let refreshing: Promise<void> | undefined;

  async function tick() {
    const now = Date.now();
    // The inputs are read beside, never in the way of the lease's renewal (a handle to resolve
    // may take seconds).
    if (now - lastRefresh >= refreshMs && !refreshing) {
      lastRefresh = now;
      refreshing = refresh(now)
        .catch((error: unknown) => fail(`could not read the inputs: ${describe(error)}`))
        .finally(() => (refreshing = undefined));
    }
    if (matcher.ids.size === 0) {
      if (holding) await giveUp();
      return;
    }
    let lease;
    try {
      lease = await holdStream(db, JETSTREAM, holder, leaseMs);
    } catch (error) {
      lease = { held: false, cursor: null };
      fail(`could not renew the lease: ${describe(error)}`);
    }
    if (!lease.held) {
      if (holding) {
        holding = false;
        disconnect();
        // The feed modes are the new holder's to set now.
        streamed = new Set();
      }
      return;
    }
    if (!holding) {
      holding = true;
      savedCursor = lease.cursor;
    }
    if (!socket && now >= retryAt) connect();
    if (!state.connected && streamed.size && now - disconnectedAt > GRACE_MS) await setMode([...streamed], 'poll');
  }

  async function giveUp() {
    disconnect();
    await refreshing;
    await pumping;
    await setMode([...streamed], 'poll');
    if (holding) await releaseStream(db, JETSTREAM, holder).catch(() => {});
    holding = false;
  }

  const every = Math.max(200, Math.min(refreshMs, Math.floor(leaseMs / 3)));
  const timer = setInterval(() => {
    ticking = ticking.then(() => (stopped ? undefined : tick())).catch((error: unknown) => fail(describe(error)));
  }, every);
  ticking = ticking.then(tick).catch((error: unknown) => fail(describe(error)));

  return {
    status: () => ({ ...state }),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await ticking;
      await giveUp();
      await agent.close().catch(() => {});
      await fetcher.close().catch(() => {});
      streamed = new Set();
    },
  };
}

/** An error's message and, for a wrapped one, its causes' (the guard's "not a public address"). */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join(': ') || 'unknown error';
}
