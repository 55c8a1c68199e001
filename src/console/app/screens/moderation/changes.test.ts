/**
 * What the Undo notice says after a moderation, pin, move, spotlight or edit on the Moderation
 * screen (./changes.ts). Table-driven.
 */
import { describe, expect, it } from 'vitest';
import type { Item } from '../../resources.ts';
import { changeMessage, moderationNotice } from './changes.ts';

const item = (over: Record<string, unknown> = {}): Item => ({ id: 'i1', title: 'Harbour news', text: '', state: 'published', ...over }) as unknown as Item;

describe('changeMessage', () => {
  it.each([
    ['pinned', {}, { pinned: true }, { pinned: true, position: 2 }, 'Pinned “Harbour news” at 2.'],
    ['pinned at a position, not pinned before', {}, { pinned: true, position: 1 }, { pinned: true, position: 1 }, 'Pinned “Harbour news” at 1.'],
    ['moved up', { pinned: true, position: 3 }, { pinned: true, position: 2 }, { pinned: true, position: 2 }, 'Moved “Harbour news” to 2.'],
    ['unpinned', { pinned: true }, { pinned: false }, {}, 'Unpinned “Harbour news”.'],
    ['into the spotlight', {}, { spotlight: true }, { spotlight: true }, 'Put “Harbour news” in the spotlight.'],
    ['out of the spotlight', { spotlight: true }, { spotlight: false }, { spotlight: false }, 'Took “Harbour news” out of the spotlight.'],
    ['edited', {}, { edit: { title: 'Harbour news' } }, { edited: true }, 'Edited “Harbour news”.'],
    ['original restored', { edited: true }, { edit: null }, {}, 'Restored the original of “Harbour news”.'],
  ] as const)('%s', (_name, before, body, after, expected) => expect(changeMessage(item(before), body, item(after))).toBe(expected));
});

describe('moderationNotice', () => {
  it.each([
    ['one published, named', 'published', [item()], 'Published “Harbour news”.', 'Undone: “Harbour news” is as before.'],
    ['one unpublished, named by its text without a title', 'unpublished', [item({ title: undefined, text: '<p>Tide</p>' })], 'Unpublished “Tide”.', 'Undone: “Tide” is as before.'],
    ['several, counted', 'unpublished', [item(), item({ id: 'i2' })], 'Unpublished 2 items.', 'Undone: the 2 items are as before.'],
  ] as const)('%s', (_name, state, changed, message, undone) => expect(moderationNotice(state, [...changed])).toEqual({ message, undone }));
});
