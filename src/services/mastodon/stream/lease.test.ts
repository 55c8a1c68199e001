/**
 * The lease holder's decisions of a Mastodon stream, table-driven (docs/services.md#mastodon-streaming):
 * what a renewal changes, when listening stops without one, what giving a stream up leaves.
 */
import { describe, expect, it } from 'vitest';
import { afterDrop, expiryDelay, renewal, type HeldState } from './lease.ts';

const held = (members: string[], over: Partial<HeldState> = {}): HeldState => ({ members, connected: true, streaming: true, lostAt: null, ...over });

describe('renewal (one tick of a held stream)', () => {
  const now = 100_000;
  it.each([
    ['no input wants it: released', held(['a']), undefined, false, { drop: 'unwanted' }],
    ['wanted, lease not renewed (taken over): dropped, not released', held(['a']), ['a'], false, { drop: 'lost' }],
    ['unchanged', held(['a', 'b']), ['a', 'b'], true, { left: [], joined: [], backToPoll: false }],
    ['one left, one joined while connected', held(['a', 'b']), ['b', 'c'], true, { left: ['a'], joined: ['c'], backToPoll: false }],
    ['joined while disconnected: not streamed yet', held(['a'], { connected: false, lostAt: now - 10 }), ['a', 'c'], true, { left: [], joined: [], backToPoll: false }],
    ['lost within the grace: still stream', held(['a'], { connected: false, lostAt: now - 1000 }), ['a'], true, { left: [], joined: [], backToPoll: false }],
    ['lost past the grace: back to poll', held(['a'], { connected: false, lostAt: now - 1001 }), ['a'], true, { left: [], joined: [], backToPoll: true }],
    ['lost past the grace, already polled: nothing to do', held(['a'], { connected: false, streaming: false, lostAt: now - 5000 }), ['a'], true, { left: [], joined: [], backToPoll: false }],
  ] as const)('%s', (_what, state, wanted, renewed, expected) => {
    expect(renewal(state, wanted, renewed, now, 1000)).toEqual(expected);
  });
});

describe('expiryDelay (listening stops at 90 % of an unrenewed lease)', () => {
  it.each([
    [0, 15_000, 0, 13_500],
    [0, 15_000, 5_000, 8_500],
    [0, 15_000, 20_000, 0], // already past: at once
    [0, 1_500, 0, 1_350],
    [0, 1_001, 0, 900], // whole milliseconds, rounded down
  ])('taken at %i, lease %i ms, now %i → %i ms', (takenAt, leaseMs, now, expected) => {
    expect(expiryDelay(takenAt, leaseMs, now)).toBe(expected);
  });
});

describe('afterDrop', () => {
  it.each([
    ['lost', true, { release: false, toPoll: false }], // taken over: the new holder says how they are fed
    ['unwanted', true, { release: true, toPoll: true }],
    ['unwanted', false, { release: true, toPoll: false }],
    ['stopping', true, { release: true, toPoll: true }],
    ['stopping', false, { release: true, toPoll: false }],
  ] as const)('%s, streaming %s → %j', (why, streaming, expected) => {
    expect(afterDrop(why, streaming)).toEqual(expected);
  });
});
