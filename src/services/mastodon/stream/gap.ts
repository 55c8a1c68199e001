/**
 * The cursor and gap-fill of a Mastodon stream (docs/services.md#mastodon-streaming): on every
 * connect, what was published while no connection was read is asked from the REST timeline
 * through the connector with `min_id` = the stream's cursor (the newest status id it delivered,
 * saved with its lease in store/streams.ts), else the input's own poll cursor. De-duplication
 * keeps anything from being stored twice.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../store/db.ts';
import type { SourceFetch } from '../../connector.ts';
import { mastodon, newerId } from '../connector.ts';
import type { CollectorTools } from '../../kit/stream/collector.ts';
import { parseState, type Member } from './routing.ts';

/**
 * The timeline reads that fill a stream's gap: a tag stream's inputs all read the same timeline,
 * asked once from the oldest of their cursors and stored for each; a user input reads its own
 * account's statuses. A group without any cursor (never polled, nothing streamed) is left to its poll.
 */
export function gapQueries(members: readonly Member[], cursor: string | null): { members: Member[]; minId: string }[] {
  const cursorOf = (member: Member) => {
    const minId = parseState(member.input.sourceState).minId;
    return cursor ?? (typeof minId === 'string' ? minId : null);
  };
  const groups = members[0]?.input.type === 'tag' ? [[...members]] : members.map((member) => [member]);
  return groups.flatMap((group) => {
    const cursors = group.map(cursorOf).filter((id) => id !== null);
    return cursors.length ? [{ members: group, minId: cursors.reduce((a, b) => (newerId(a, b) ? b : a)) }] : [];
  });
}

/** What a gap fill needs: the database, the listener's guarded fetch, the collector's credentials and ingestion, a log. */
export interface GapTools {
  db: Db;
  fetch: SourceFetch;
  credentials: CollectorTools['credentials'];
  ingestPushed: CollectorTools['ingestPushed'];
  log?: FastifyBaseLogger;
}

/**
 * Fills the gap of the stream `name` since `cursor` (see {@link gapQueries}), through the
 * connector (`mastodon.collect` with `minId`) with each input's contract's credentials. A read
 * that fails is logged and left to the next poll; stops between reads once `signal` aborts. Never rejects.
 */
export async function fillGap(tools: GapTools, stream: { name: string; members: readonly Member[]; cursor: string | null; signal: AbortSignal }): Promise<void> {
  const { db, fetch, credentials, ingestPushed, log } = tools;
  for (const { members, minId } of gapQueries(stream.members, stream.cursor)) {
    if (stream.signal.aborted) return;
    const { input } = members[0]!;
    try {
      const now = Date.now();
      const resolved = await credentials.resolve(input, { fetch, now });
      const result = await mastodon.collect(input, { ...parseState(input.sourceState), minId }, { fetch, services: resolved.services, now });
      if (!result.items.length) continue;
      for (const member of members) {
        await ingestPushed(db, member.input, result.items, { ...(log && { log }) }).catch((error: unknown) =>
          log?.warn({ err: error, input: member.input.id }, 'mastodon stream: gap items not stored'));
      }
    } catch (error) {
      log?.warn({ err: error, input: input.id, stream: stream.name }, 'mastodon stream: gap not filled (the next poll will)');
    }
  }
}
