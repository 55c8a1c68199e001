/**
 * The Moderation screen's filters as a queue query, and the same selection applied to an item
 * from the live stream (./query.ts; docs/api.md, "Queue and content API"). Table-driven.
 */
import { describe, expect, it } from 'vitest';
import type { Item } from '../../resources.ts';
import { type Filters, filterQuery, matches, NO_FILTERS } from './query.ts';

const item = (over: Record<string, unknown> = {}): Item =>
  ({ id: 'i1', service: 'rss', type: 'link', title: 'Harbour news', text: '<p>The <b>ferry</b> &amp; the tide</p>', tags: [], url: 'https://example.com/1', date: '2026-11-27T10:00:00Z', author: {}, media: [], state: 'published', language: 'en', ...over }) as unknown as Item;
const held = { held: { set: { id: 's1', name: 'Words' }, reason: 'word "tide"' } };
const only = (over: Partial<Filters>): Filters => ({ ...NO_FILTERS, ...over });

describe('filterQuery', () => {
  it.each([
    ['no filters: an empty query', NO_FILTERS, {}],
    ['blank values are left out', only({ text: '   ', service: '' }), {}],
    ['values are trimmed', only({ service: ' rss,twitter ', text: ' ferry ' }), { service: 'rss,twitter', text: 'ferry' }],
    ['the sort and the Held view are sent as set', only({ sort: 'trending', held: 'true', pinned: 'false' }), { sort: 'trending', held: 'true', pinned: 'false' }],
  ] as const)('%s', (_name, filters, query) => expect(filterQuery(filters)).toEqual(query));
});

describe('matches', () => {
  it.each([
    ['no filters: every item', {}, only({}), true],
    ['state equal', {}, only({ state: 'published' }), true],
    ['state different', {}, only({ state: 'unpublished' }), false],
    ['service in a comma list, spaces and case ignored', {}, only({ service: 'twitter, RSS' }), true],
    ['service not in the list', {}, only({ service: 'twitter,youtube' }), false],
    ['type in the list', {}, only({ type: 'video,link' }), true],
    ['type not in the list', {}, only({ type: 'video' }), false],
    ['language in the list', {}, only({ language: 'de,en' }), true],
    ['an item without a language does not match a language filter', { language: undefined }, only({ language: 'en' }), false],
    ['text in the title, any case', {}, only({ text: 'HARBOUR' }), true],
    ['text in the plain text, markup dropped', {}, only({ text: 'ferry & the' }), true],
    ['text only inside markup does not match', {}, only({ text: '<b>' }), false],
    ['text absent', {}, only({ text: 'storm' }), false],
    ['pinned only: a pinned item', { pinned: true, position: 1 }, only({ pinned: 'true' }), true],
    ['pinned only: an item without pinned', {}, only({ pinned: 'true' }), false],
    ['not pinned: an item without pinned', {}, only({ pinned: 'false' }), true],
    ['not pinned: a pinned item', { pinned: true }, only({ pinned: 'false' }), false],
    ['Held view: a held item', held, only({ held: 'true' }), true],
    ['Held view: an item not held', {}, only({ held: 'true' }), false],
    ['the sort selects nothing', {}, only({ sort: 'kudos' }), true],
    ['every filter must hold', {}, only({ service: 'rss', state: 'unpublished' }), false],
  ] as const)('%s', (_name, over, filters, expected) => expect(matches(item(over), filters)).toBe(expected));
});
