/**
 * Server-Sent Events for publications (issue 6): `GET /v1/content/{contract}/stream?q=…`
 * announces items of one collection as they are published, so a publication updates without
 * polling the content endpoint.
 *
 * One poller per collection, shared by all its subscribers, reads the collection's `version`
 * (one indexed row) every `pollMs`; when it moved, it reads the items stamped with the newer
 * versions and sends them. This works when another process stored or moderated the items,
 * because it reads only the shared database. Events (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 *
 *   event: item          data: the content item (docs/api.md#content-item), newly published
 *   event: unpublished   data: {"id": "<item id>"}, moderated to unpublished
 *   event: remove        data: {"id": "<item id>"}, a published item removed at the source
 *                        (docs/api.md#removed-at-the-source), erased (docs/api.md#erasure) or
 *                        deleted by retention (docs/api.md#retention) — the last two read from
 *                        `erased_items`: the row is gone: drop it
 *   event: reload        more changes at once than one read sends: re-read the content
 *   event: display       data: {"state": "live" | "paused" | "blank"}, only to subscribers that
 *                        asked (`display`, the display page): on subscribing, then whenever the
 *                        collection's display state changes (docs/api.md#display-controls); no `id`
 *
 * Each event's `id` is the collection version, so a client reconnecting with `Last-Event-ID`
 * receives what it missed. The display state is read with the version (one read, `streamMarks`),
 * every `pollMs` (500 ms: a screen follows a display control within a second). A comment line
 * every `heartbeatMs` keeps proxies from closing the connection.
 *
 * The moderators' hub (`audience: 'moderator'`, `GET /v1/queue/{contract}/stream`, token-bearing)
 * sends one kind of event instead, for every item that arrived (in any state: unpublished
 * arrivals are news to a moderator) or was moderated since the stream opened:
 *
 *   event: item          data: the content item with its state
 *   event: remove        data: {"id", "removedAt", "removedReason"}, removed at the source (any state
 *                        before), erased (`removedReason: "erased"`, docs/api.md#erasure) or
 *                        deleted by retention (`"expired"`, docs/api.md#retention)
 *
 * Arrivals are read by `createdAt` (index items_arrivals), moderations by `seq`. It does not
 * resume from `Last-Event-ID` (a client re-reads the queue after reconnecting) and may send an
 * item twice (arrived and then moderated in between two reads): clients key items on `id`.
 *
 * Each moderator's stream holds access (a token let in to a contract, `ContractAccess`) that may
 * end while it is open: the token revoked (RFC 7009) or expired, the grant revoked, the consumer
 * or its client disabled, the contract deactivated, by this process or another. The hub checks
 * every open stream's access every `accessMs` (one batched read, `liveAccess`), and again for a
 * collection's streams after reading its changes and before sending them, so nothing read after
 * access ended is sent; a stream whose access ended is closed, without a final event
 * (docs/api.md#queue-stream).
 */
import { countStream } from '../lib/metrics.ts';
import type { Db } from '../store/db.ts';
import type { DisplayState } from '../lib/publication-settings.ts';
import { streamMarks } from '../store/collections.ts';
import { arrivedItems, changedItems, collectionVersion, latestArrival } from '../store/items/changes.ts';
import { removalOf, rowToItem, rowToModeratorItem } from '../store/items/rows.ts';
import { erasedItems } from '../store/erasures.ts';
import type { ErasedItemRow, ItemRow } from '../store/tables.ts';
import { iso } from '../lib/time.ts';
import { accessKey, type ContractAccess, liveAccess } from '../store/tokens.ts';

export interface Subscriber {
  write(chunk: string): void;
  end(): void;
}

export interface StreamHub {
  /**
   * Adds a subscriber to the stream of contract `contractId`'s collection, first sending changes after `lastEventId`;
   * returns the unsubscribe function. With `access` (the moderators' hub), the subscriber is ended
   * (`end()`) and dropped as soon as the hub finds that access gone. With `display`, the
   * subscriber also gets `display` events: the current state at once, then each change.
   */
  subscribe(contractId: string, collectionId: string, subscriber: Subscriber, lastEventId?: number, access?: ContractAccess, options?: { display?: boolean }): Promise<() => void>;
  /** Ends every stream and stops the pollers. */
  close(): void;
  /** Collections being polled (for tests). */
  readonly pollers: number;
}

/** Most items sent for one read of changes; more → `reload`. */
const CHANGES_PER_READ = 500;

/** The `remove` event of item `id` (`version`: the event's id), with more for moderators (`extra`). */
const removeEvent = (version: number, id: string, extra: object = {}) => `id: ${version}\nevent: remove\ndata: ${JSON.stringify({ id, ...extra })}\n\n`;

/** A moderator's `remove` event: the id, when and why (docs/api.md#queue-stream). */
function moderatorRemoveEvent(version: number, row: ItemRow): string {
  const removal = removalOf(row.removed);
  return removeEvent(version, row.id, removal ? { removedAt: removal.at, removedReason: removal.reason } : {});
}

/** The public event of a changed row: `item`, `unpublished`, or `remove` (only for what the public saw: an unpublished item's id stays private). */
function publicEvent(row: ItemRow): string {
  if (row.state === 'removed') return removalOf(row.removed)?.state === 'published' ? removeEvent(row.seq, row.id) : '';
  return row.state === 'published'
    ? `id: ${row.seq}\nevent: item\ndata: ${JSON.stringify(rowToItem(row))}\n\n`
    : `id: ${row.seq}\nevent: unpublished\ndata: ${JSON.stringify({ id: row.id })}\n\n`;
}

/** The public events of `rows` and `erased` (docs/api.md#erasure, #retention: `remove` for an erased or expired item that was published), in version order. */
function events(rows: ItemRow[], erased: ErasedItemRow[] = []): string {
  let out = '';
  let e = 0;
  for (const row of rows) {
    for (; e < erased.length && Number(erased[e]!.seq) <= Number(row.seq); e++) out += publicErasedEvent(erased[e]!);
    out += publicEvent(row);
  }
  for (; e < erased.length; e++) out += publicErasedEvent(erased[e]!);
  if (rows.length >= CHANGES_PER_READ || erased.length >= CHANGES_PER_READ) out += `event: reload\ndata: {}\n\n`;
  return out;
}

const publicErasedEvent = (erased: ErasedItemRow) => (erased.state === 'published' ? removeEvent(Number(erased.seq), erased.itemId) : '');

/** The `display` event of a display state (no `id`: it does not move a client's Last-Event-ID). */
const displayEvent = (state: DisplayState) => `event: display\ndata: ${JSON.stringify({ state })}\n\n`;

/**
 * The moderators' events: each erased or expired item as `remove` (`removedReason` `erased` or
 * `expired`, the row's `reason`; first: a row of the same id in this read arrived after the
 * deletion), then every row as an `item` with its state, or `remove` when removed at the source.
 */
function moderatorEvents(rows: ItemRow[], version: number, erased: ErasedItemRow[] = []): string {
  let out = '';
  for (const row of erased) out += removeEvent(version, row.itemId, { removedAt: iso(Number(row.erasedAt)), removedReason: row.reason });
  for (const row of rows) out += row.state === 'removed' ? moderatorRemoveEvent(version, row) : `id: ${version}\nevent: item\ndata: ${JSON.stringify(rowToModeratorItem(row))}\n\n`;
  if (rows.length >= CHANGES_PER_READ || erased.length >= CHANGES_PER_READ) out += `event: reload\ndata: {}\n\n`;
  return out;
}

interface Poller {
  subscribers: Set<Subscriber>;
  /** The access each subscriber holds, for those that hold one (moderators). */
  access: Map<Subscriber, ContractAccess>;
  /** Each subscriber's unsubscribe function. */
  leave: Map<Subscriber, () => void>;
  cursor: number;
  /** The display state last read, and the subscribers that follow it. */
  display: DisplayState;
  displays: Set<Subscriber>;
  /** Moderator hub: arrivals at or after this moment (ms) are still to be read… */
  arrivedFrom: number;
  /** …except these ids, already sent, that arrived exactly at `arrivedFrom`. */
  sentAtFrom: Set<string>;
  timer: NodeJS.Timeout;
  busy: boolean;
  /** The contract that holds the collection: every read of its items names it (store/items/). */
  contractId: string;
}

/**
 * The hub of the module: public (default) or for moderators (`audience`), reading the database
 * every `pollMs` ms while a collection has subscribers, sending a heartbeat every `heartbeatMs`
 * and checking the subscribers' access every `accessMs` (default 500 ms: a stream ends within a
 * second of its access ending even when timers run late on a busy process).
 */
export function createStreamHub(db: Db, options: { pollMs?: number; heartbeatMs?: number; accessMs?: number; audience?: 'public' | 'moderator' } = {}): StreamHub {
  const moderator = options.audience === 'moderator';
  const pollers = new Map<string, Poller>();
  const heartbeat = setInterval(() => {
    for (const poller of pollers.values()) for (const s of poller.subscribers) s.write(': heartbeat\n\n');
  }, options.heartbeatMs ?? 15_000);
  heartbeat.unref();
  let checking = false;
  // Only moderators' streams hold access; public ones have nothing to check.
  const accessTimer = moderator
    ? setInterval(() => {
        if (checking || !pollers.size) return;
        checking = true;
        void keepAccess([...pollers.values()])
          .catch(() => {}) // a failed read is retried on the next check
          .finally(() => (checking = false));
      }, options.accessMs ?? 500)
    : undefined;
  accessTimer?.unref();

  /** Ends and drops the subscribers of `of` whose access is gone (one batched read). */
  async function keepAccess(of: Poller[]): Promise<void> {
    const holders = of.flatMap((poller) => [...poller.access].map(([subscriber, access]) => ({ poller, subscriber, access })));
    if (!holders.length) return;
    const live = await liveAccess(db, holders.map((h) => h.access));
    for (const { poller, subscriber, access } of holders) {
      if (live.has(accessKey(access)) || !poller.subscribers.has(subscriber)) continue;
      poller.leave.get(subscriber)?.();
      subscriber.end();
    }
  }

  async function tick(collectionId: string, poller: Poller): Promise<void> {
    if (poller.busy) return;
    poller.busy = true;
    try {
      const marks = await streamMarks(db, poller.contractId, collectionId);
      if (marks === undefined) return;
      if (marks.displayState !== poller.display) {
        poller.display = marks.displayState;
        for (const s of poller.displays) s.write(displayEvent(marks.displayState));
      }
      const version = marks.version;
      if (version <= poller.cursor) return;
      const changed = await changedItems(db, poller.contractId, collectionId, poller.cursor, version, CHANGES_PER_READ);
      const erased = await erasedItems(db, poller.contractId, collectionId, poller.cursor, version, CHANGES_PER_READ);
      const text = moderator ? moderatorEvents(await withArrivals(collectionId, poller, changed), version, erased) : events(changed, erased);
      // Access checked after the read: what changed after a stream's access ended never reaches it.
      if (text && poller.access.size) await keepAccess([poller]);
      poller.cursor = version;
      if (text) for (const s of poller.subscribers) s.write(text);
    } catch {
      // A failed read is retried on the next tick; the cursor did not move.
    } finally {
      poller.busy = false;
    }
  }

  /** The moderated rows plus the arrivals not sent yet, oldest arrival first; moves the arrival mark. */
  async function withArrivals(collectionId: string, poller: Poller, changed: ItemRow[]): Promise<ItemRow[]> {
    const arrived = (await arrivedItems(db, poller.contractId, collectionId, poller.arrivedFrom, CHANGES_PER_READ)).filter(
      (row) => !(row.createdAt === poller.arrivedFrom && poller.sentAtFrom.has(row.id)),
    );
    for (const row of arrived) {
      if (row.createdAt > poller.arrivedFrom) {
        poller.arrivedFrom = row.createdAt;
        poller.sentAtFrom = new Set();
      }
      poller.sentAtFrom.add(row.id);
    }
    const arrivedIds = new Set(arrived.map((row) => row.id));
    return [...arrived, ...changed.filter((row) => !arrivedIds.has(row.id))];
  }

  async function pollerFor(contractId: string, collectionId: string): Promise<Poller> {
    const existing = pollers.get(collectionId);
    if (existing) return existing;
    const marks = await streamMarks(db, contractId, collectionId);
    const cursor = marks?.version ?? 0;
    // Arrivals before the stream opened are not news; one past the latest is the first to send.
    const arrivedFrom = moderator ? (await latestArrival(db, contractId, collectionId)) + 1 : 0;
    const raced = pollers.get(collectionId);
    if (raced) return raced;
    const display = marks?.displayState ?? 'live';
    const poller: Poller = { subscribers: new Set(), access: new Map(), leave: new Map(), cursor, display, displays: new Set(), arrivedFrom, sentAtFrom: new Set(), busy: false, contractId, timer: setInterval(() => void tick(collectionId, poller), options.pollMs ?? 500) };
    poller.timer.unref();
    pollers.set(collectionId, poller);
    return poller;
  }

  return {
    get pollers() {
      return pollers.size;
    },
    async subscribe(contractId, collectionId, subscriber, lastEventId, access, { display = false } = {}) {
      const poller = await pollerFor(contractId, collectionId);
      // From here the poller sends every change after its cursor; catch up to the cursor first.
      const upTo = poller.cursor;
      let open = true;
      const unsubscribe = () => {
        if (!open) return;
        open = false;
        countStream(moderator ? 'moderator' : 'public', -1);
        poller.subscribers.delete(subscriber);
        poller.access.delete(subscriber);
        poller.leave.delete(subscriber);
        poller.displays.delete(subscriber);
        if (poller.subscribers.size === 0 && pollers.get(collectionId) === poller) {
          clearInterval(poller.timer);
          pollers.delete(collectionId);
        }
      };
      poller.subscribers.add(subscriber);
      poller.leave.set(subscriber, unsubscribe);
      if (access) poller.access.set(subscriber, access);
      countStream(moderator ? 'moderator' : 'public', 1);
      if (!moderator && lastEventId !== undefined && lastEventId < upTo) {
        subscriber.write(events(await changedItems(db, contractId, collectionId, lastEventId, upTo, CHANGES_PER_READ), await erasedItems(db, contractId, collectionId, lastEventId, upTo, CHANGES_PER_READ)));
      }
      if (display) {
        // The state now (a screen opened or reconnecting must not wait for a change), then each change.
        poller.displays.add(subscriber);
        subscriber.write(displayEvent((await streamMarks(db, contractId, collectionId))?.displayState ?? poller.display));
      }
      return unsubscribe;
    },
    close() {
      clearInterval(heartbeat);
      clearInterval(accessTimer);
      for (const poller of pollers.values()) {
        clearInterval(poller.timer);
        for (const s of poller.subscribers) s.end();
      }
      pollers.clear();
    },
  };
}
