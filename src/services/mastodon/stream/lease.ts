/**
 * The lease holding of a Mastodon stream (docs/services.md#mastodon-streaming): each stream is
 * held by one process at a time (store/streams.ts `holdStream`), renewed every tick. These are
 * the decisions of the holder, as pure functions of what it knows: what a renewal changes, when
 * listening must stop without one, and what giving a stream up leaves behind.
 */

/** What the holder knows of a stream it holds. */
export interface HeldState {
  /** Ids of the inputs listening to it. */
  members: readonly string[];
  connected: boolean;
  /** Whether its inputs were set to `stream` and not yet back to `poll`. */
  streaming: boolean;
  /** When the stream was last lost (or first tried), ms; null while connected. */
  lostAt: number | null;
}

/** Why a stream is given up: `lost` (its lease was not renewed or taken over: not ours any more), `unwanted` (no input wants it, or the instance wants a token), `stopping` (the listener stops). */
export type DropReason = 'lost' | 'unwanted' | 'stopping';

/**
 * What one tick does to a held stream: drop it (`unwanted` when no input wants it any more,
 * `lost` when its lease was not renewed), or keep it with `left` inputs back to `poll`, `joined`
 * inputs to `stream` (only while connected), and all of them back to `poll` (`backToPoll`) when
 * the stream has been lost for longer than `graceMs` (ms).
 */
export function renewal(state: HeldState, wanted: readonly string[] | undefined, renewed: boolean, now: number, graceMs: number): { drop: DropReason } | { left: string[]; joined: string[]; backToPoll: boolean } {
  if (!wanted) return { drop: 'unwanted' };
  if (!renewed) return { drop: 'lost' };
  const before = new Set(state.members);
  const after = new Set(wanted);
  return {
    left: state.members.filter((id) => !after.has(id)),
    joined: state.connected ? wanted.filter((id) => !before.has(id)) : [],
    backToPoll: !state.connected && state.streaming && state.lostAt !== null && now - state.lostAt > graceMs,
  };
}

/**
 * The wait (ms) before listening stops when the lease taken at `takenAt` (ms) is not renewed: 90 %
 * of `leaseMs`, so that this process stops before another may take the stream over (the
 * database out of reach, a slow tick). 0 when that time has passed.
 */
export function expiryDelay(takenAt: number, leaseMs: number, now: number): number {
  return Math.max(0, takenAt + Math.floor(leaseMs * 0.9) - now);
}

/** What giving a stream up leaves: the lease released when it is still ours, its inputs back to `poll` when they were streamed and nobody else now says how they are fed. */
export function afterDrop(why: DropReason, streaming: boolean): { release: boolean; toPoll: boolean } {
  return { release: why !== 'lost', toPoll: why !== 'lost' && streaming };
}
