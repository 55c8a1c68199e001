/**
 * The gap-fill reads of a Mastodon stream, table-driven (docs/services.md#mastodon-streaming):
 * the stream's cursor first, else each input's own poll cursor; a tag stream's inputs read one
 * timeline from their oldest cursor, user inputs each their own; no cursor, no read.
 */
import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../../store/tables.ts';
import { gapQueries } from './gap.ts';
import type { Member } from './routing.ts';

const member = (id: string, type: string, minId?: string): Member => ({
  input: { id, type, sourceState: JSON.stringify(minId ? { minId } : {}) } as InputRow,
  accountId: type === 'user' ? `acct-${id}` : null,
});

describe('gapQueries', () => {
  it.each([
    ['no inputs', [], null, []],
    ['tag inputs, no cursor anywhere: left to their polls', [member('a', 'tag'), member('b', 'tag')], null, []],
    ['tag inputs: one read from the oldest poll cursor', [member('a', 'tag', '50'), member('b', 'tag', '9'), member('c', 'tag')], null, [[['a', 'b', 'c'], '9']]],
    ['tag inputs: the stream cursor wins over the poll cursors', [member('a', 'tag', '50'), member('b', 'tag', '9')], '70', [[['a', 'b'], '70']]],
    ['a longer id is newer, so the shorter is the oldest', [member('a', 'tag', '100'), member('b', 'tag', '99')], null, [[['a', 'b'], '99']]],
    ['user inputs: one read each, from its own cursor', [member('a', 'user', '50'), member('b', 'user', '9')], null, [[['a'], '50'], [['b'], '9']]],
    ['user inputs: one without cursor is skipped', [member('a', 'user'), member('b', 'user', '9')], null, [[['b'], '9']]],
    ['user inputs: the stream cursor for each', [member('a', 'user'), member('b', 'user', '9')], '70', [[['a'], '70'], [['b'], '70']]],
  ] as [string, Member[], string | null, [string[], string][]][])('%s', (_what, members, cursor, expected) => {
    expect(gapQueries(members, cursor).map((query) => [query.members.map((m) => m.input.id), query.minId])).toEqual(expected);
  });

  it('reads a poll state that is not JSON as no cursor', () => {
    expect(gapQueries([{ input: { id: 'a', type: 'tag', sourceState: '{' } as InputRow, accountId: null }], null)).toEqual([]);
  });
});
