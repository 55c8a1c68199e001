/** `sortBatch` (jetstream-batch.ts), table-driven: what a batch of Jetstream events holds. Storing is tested through test/http/jetstream.test.ts. */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../kit/normalize.ts';
import { sortBatch } from './jetstream-batch.ts';
import { compileMatcher } from './jetstream-match.ts';

const matcher = compileMatcher([
  { id: 'k', type: 'keyword', query: 'sluice' },
  { id: 'u', type: 'user', query: 'did:plc:alice' },
]);

let clock = 100;
const commit = (did: string, operation: string, text?: string, extra: Json = {}): Json => ({
  did,
  time_us: clock++,
  kind: 'commit',
  commit: { operation, collection: 'app.bsky.feed.post', rkey: `r${clock}`, ...(text === undefined ? {} : { record: { text } }), ...extra },
});

describe('sortBatch', () => {
  const create = commit('did:plc:bob', 'create', 'the sluice opens');
  const both = commit('did:plc:alice', 'create', 'a sluice');
  const other = commit('did:plc:bob', 'create', 'nothing here');
  const edited = commit('did:plc:bob', 'update', 'no longer about it');
  const editedMatching = commit('did:plc:carol', 'update', 'now about the sluice');
  const gone = commit('did:plc:bob', 'delete');
  const goneAgain = { ...gone, time_us: clock++ };
  const like = commit('did:plc:bob', 'create', undefined, { collection: 'app.bsky.feed.like' });
  const identity = { did: 'did:plc:dave', time_us: clock++, kind: 'identity' };
  const noTime = { kind: 'commit', did: 'did:plc:bob', commit: { operation: 'delete', collection: 'app.bsky.feed.post', rkey: 'x' } };
  const hostile: Json[] = [{}, { kind: 'commit' }, { kind: 'commit', did: 'did:plc:bob', time_us: 'soon', commit: { operation: 'delete', collection: 'app.bsky.feed.post', rkey: 'a/b' } }];

  it.each<[string, Json[], Partial<ReturnType<typeof sortBatch>>]>([
    ['an empty batch', [], { last: null, matched: [], updated: [], deleted: [], identities: [] }],
    ['creates matched per input, in order; the others left out', [create, other, both], { matched: [{ event: create, ids: ['k'] }, { event: both, ids: ['u', 'k'] }], last: other.time_us as number }],
    ['every update is an edit, matched or not; a matching one is also stored', [edited, editedMatching], { updated: [edited, editedMatching], matched: [{ event: editedMatching, ids: ['k'] }] }],
    ['a deletion, each once, never matched', [gone, goneAgain], { deleted: [`bluesky_did:plc:bob_${String((gone.commit as Json).rkey)}`], matched: [], last: goneAgain.time_us as number }],
    ['other collections and identities count for the cursor only', [like, identity], { matched: [], updated: [], deleted: [], identities: ['did:plc:dave'], last: identity.time_us as number }],
    ['an event without time_us does not move the cursor', [noTime], { last: null, deleted: ['bluesky_did:plc:bob_x'] }],
    ['hostile events: no time, no post, a rkey with a slash', hostile, { last: null, matched: [], updated: [], deleted: [], identities: [] }],
  ])('%s', (_name, events, expected) => {
    expect(sortBatch(events, matcher)).toMatchObject(expected);
  });

  it('takes the largest time_us, whatever the order', () => {
    expect(sortBatch([{ time_us: 9 }, { time_us: 3 }], matcher).last).toBe(9);
  });
});
