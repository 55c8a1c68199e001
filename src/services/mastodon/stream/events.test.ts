/**
 * The events of a Mastodon stream as pure logic, table-driven (docs/services.md#mastodon-streaming):
 * what an SSE message carries, the runs a batch is applied in (order kept), and the cursor a
 * batch leaves (new statuses only; ids compared as Mastodon's snowflakes, longer is newer).
 */
import { describe, expect, it } from 'vitest';
import { eventOf, newestStatusId, runsOf, type StreamEvent } from './events.ts';

describe('eventOf (an SSE message)', () => {
  it.each([
    ['update', '{"id":"7"}', { event: { status: { id: '7' }, edit: false } }],
    ['status.update', '{"id":"7"}', { event: { status: { id: '7' }, edit: true } }],
    ['delete', '7', { event: { deleted: '7' } }],
    ['delete', '"7"', { event: { deleted: '7' } }],
    ['delete', '{"id":"7"}', { warning: 'mastodon stream sent a delete without a status id' }],
    ['update', '{"id":', { warning: 'mastodon stream sent an event that is not JSON' }],
    ['status.update', 'nonsense', { warning: 'mastodon stream sent an event that is not JSON' }],
    ['update', '[1,2]', { event: { status: {}, edit: false } }], // not an object: a status without id, stored as nothing
    ['notification', '{"id":"7"}', null],
    ['filters_changed', '', null],
    [undefined, 'hello', null], // a `message` event without a type
  ])('%s %j → %j', (event, data, expected) => {
    expect(eventOf({ event, data })).toEqual(expected);
  });
});

const u = (id: string): StreamEvent => ({ status: { id }, edit: false });
const e = (id: string): StreamEvent => ({ status: { id }, edit: true });
const d = (id: string): StreamEvent => ({ deleted: id });

describe('runsOf (a batch applied as runs of one kind, in order)', () => {
  it.each([
    ['nothing', [], []],
    ['one update', [u('1')], [['update', 1]]],
    ['updates together', [u('1'), u('2'), u('3')], [['update', 3]]],
    ['a status deleted after it came: update, then delete', [u('1'), d('1')], [['update', 1], ['delete', 1]]],
    ['deleted, then posted again by id (not merged across)', [d('1'), u('2'), d('3')], [['delete', 1], ['update', 1], ['delete', 1]]],
    ['edits between updates', [u('1'), e('1'), e('1'), u('2')], [['update', 1], ['edit', 2], ['update', 1]]],
  ] as [string, StreamEvent[], [string, number][]][])('%s', (_what, batch, expected) => {
    const runs = runsOf(batch);
    expect(runs.map((run) => [run.kind, run.events.length])).toEqual(expected);
    expect(runs.flatMap((run) => run.events)).toEqual(batch); // nothing lost, nothing reordered
  });
});

describe('newestStatusId (the cursor a batch leaves)', () => {
  it.each([
    ['no cursor, no status', [], null, null],
    ['no cursor: the newest update', [u('5'), u('9'), u('7')], null, '9'],
    ['a longer id is newer (snowflakes)', [u('99'), u('100')], null, '100'],
    ['an older update keeps the cursor', [u('3')], '8', '8'],
    ['edits and deletions do not move it', [e('20'), d('30')], '8', '8'],
    ['ids beyond a safe integer kept as text', [u('123456789012345678901')], '123456789012345678900', '123456789012345678901'],
    ['an update without id is skipped', [{ status: {}, edit: false }], '8', '8'],
  ] as [string, StreamEvent[], string | null, string | null][])('%s', (_what, batch, cursor, expected) => {
    expect(newestStatusId(batch, cursor)).toBe(expected);
  });
});
