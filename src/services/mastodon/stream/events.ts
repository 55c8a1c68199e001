/**
 * The events of a Mastodon stream and their handling (docs/services.md#mastodon-streaming,
 * docs.joinmastodon.org/methods/streaming): `update` (a new status) is stored for every input of
 * the stream it matches through the collector's `ingestPushed`; `status.update` (an edit; payload:
 * the Status) updates every stored copy (store/removals.ts `updateFromSource`: it brings in no
 * status not stored, and leaves removed ones and a moderator's edit alone); `delete` (payload: the
 * status id as a string) removes `mastodon_<host>:<id>` wherever it is stored (`removeItems`,
 * reason `deleted`, docs/api.md#removed-at-the-source): only that instance's ids, so an instance
 * removes only its own statuses. Other events are ignored.
 */
import { ownsEntries } from '../../table.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { EventSourceMessage } from 'eventsource-parser';
import type { Db } from '../../../store/db.ts';
import { removeItems, updateFromSource } from '../../../store/removals.ts';
import { mastodonItem, newerId } from '../connector.ts';
import { idOf, obj, type Json } from '../../kit/normalize.ts';
import type { CollectorTools } from '../../kit/stream/collector.ts';
import { statusMatches, type Member } from './routing.ts';

/** An event received and not yet applied: a status (`update`, or `status.update` with `edit`), or a deleted status's id. */
export type StreamEvent = { status: Json; edit: boolean } | { deleted: string };

/** What an event is: a new status, an edit or a deletion. */
export type EventKind = 'update' | 'edit' | 'delete';

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

/**
 * The event an SSE message carries: `{ event }`, `{ warning }` (to log) for a `delete` without an
 * id or a status that is not JSON, or null for an event of another type (ignored).
 */
export function eventOf(message: Pick<EventSourceMessage, 'event' | 'data'>): { event: StreamEvent } | { warning: string } | null {
  if (message.event === 'delete') {
    const id = deletedId(message.data);
    return id ? { event: { deleted: id } } : { warning: 'mastodon stream sent a delete without a status id' };
  }
  if (message.event !== 'update' && message.event !== 'status.update') return null;
  try {
    return { event: { status: obj(JSON.parse(message.data)), edit: message.event === 'status.update' } };
  } catch {
    return { warning: 'mastodon stream sent an event that is not JSON' };
  }
}

/** What a pending event is. */
export function eventKind(event: StreamEvent): EventKind {
  return 'deleted' in event ? 'delete' : event.edit ? 'edit' : 'update';
}

/** `batch` cut, in order, into runs of consecutive events of one kind (applied one run at a time, so order holds). */
export function runsOf(batch: readonly StreamEvent[]): { kind: EventKind; events: StreamEvent[] }[] {
  const runs: { kind: EventKind; events: StreamEvent[] }[] = [];
  for (const event of batch) {
    const kind = eventKind(event);
    const last = runs.at(-1);
    if (last?.kind === kind) last.events.push(event);
    else runs.push({ kind, events: [event] });
  }
  return runs;
}

/** The stream's cursor after `batch`: the newest id of its new statuses (`update`; edits and deletions are of older ones) or `cursor` (null: none yet). */
export function newestStatusId(batch: readonly StreamEvent[], cursor: string | null): string | null {
  let newest = cursor;
  for (const event of batch) {
    const id = 'status' in event && !event.edit ? idOf(event.status.id) : null;
    if (id && (!newest || newerId(id, newest))) newest = id;
  }
  return newest;
}

/** What applying events needs: the database, the collector's ingestion, a log, and the stream (its instance, name and inputs). */
export interface EventTarget {
  db: Db;
  ingestPushed: CollectorTools['ingestPushed'];
  log?: FastifyBaseLogger;
  host: string;
  /** Lease name, for the log. */
  name: string;
  members: Iterable<Member>;
}

/**
 * Applies `batch` in order, as runs of one kind (see the module). A run that fails is logged and
 * the next applied; an input whose items cannot be stored is logged and the others served. Never rejects.
 */
export async function applyEvents(target: EventTarget, batch: readonly StreamEvent[]): Promise<void> {
  const { db, host, log } = target;
  for (const { kind, events } of runsOf(batch)) {
    try {
      if (kind === 'delete') {
        const ids = events.map((event) => `mastodon_${host}:${(event as { deleted: string }).deleted}`);
        await removeItems(db, { service: 'mastodon', ids }, { reason: 'deleted' }, ownsEntries);
      } else if (kind === 'edit') {
        // An edit updates what is stored; it does not bring in an old status.
        for (const event of events) {
          const item = mastodonItem((event as { status: Json }).status, host);
          if (item) await updateFromSource(db, item);
        }
      } else await storeUpdates(target, events as { status: Json }[]);
    } catch (error) {
      log?.warn({ err: error, stream: target.name, kind }, 'mastodon stream: events not applied');
    }
  }
}

/** Stores new statuses (`update` events) for every input of the stream they match. */
async function storeUpdates({ db, ingestPushed, log, host, members }: EventTarget, updates: { status: Json }[]): Promise<void> {
  for (const member of members) {
    const who = { type: member.input.type, accountId: member.accountId };
    const items = updates.filter((event) => statusMatches(event.status, who)).map((event) => mastodonItem(event.status, host)).filter((item) => item !== null);
    if (!items.length) continue;
    try {
      await ingestPushed(db, member.input, items, { ...(log && { log }) });
    } catch (error) {
      log?.warn({ err: error, input: member.input.id }, 'mastodon stream: items not stored');
    }
  }
}
