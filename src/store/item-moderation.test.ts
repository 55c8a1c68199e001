import { describe, expect, it } from 'vitest';
import { buildItem } from '../../test/helper.ts';
import { MAX_PINNED, moderationText, parseModeration, reorderPins, withEdit } from './item-moderation.ts';

describe('reorderPins', () => {
  const full = Array.from({ length: MAX_PINNED }, (_, i) => `p${i}`);
  it.each([
    ['a new pin goes last', ['a', 'b'], 'c', true, undefined, ['a', 'b', 'c']],
    ['a new pin at 1 goes first', ['a', 'b'], 'c', true, 1, ['c', 'a', 'b']],
    ['a move down', ['a', 'b', 'c'], 'a', true, 3, ['b', 'c', 'a']],
    ['a move up', ['a', 'b', 'c'], 'c', true, 2, ['a', 'c', 'b']],
    ['a pin without position keeps its place', ['a', 'b', 'c'], 'b', true, undefined, ['a', 'b', 'c']],
    ['a position past the end goes last', ['a'], 'b', true, 20, ['a', 'b']],
    ['an unpin closes the gap', ['a', 'b', 'c'], 'b', false, undefined, ['a', 'c']],
    ['unpinning an item not pinned changes nothing', ['a'], 'x', false, undefined, ['a']],
    ['a 21st pin is refused', full, 'x', true, undefined, undefined],
    ['moving one of 20 is not a new pin', full, 'p19', true, 1, ['p19', ...full.slice(0, 19)]],
  ] as [string, string[], string, boolean, number | undefined, string[] | undefined][])('%s', (_name, order, id, pinned, position, expected) => {
    expect(reorderPins(order, id, pinned, position)).toEqual(expected);
  });
});

describe('withEdit and the stored moderation', () => {
  it('lays title, text and the alt texts it names over the item, leaving the rest', () => {
    const item = buildItem({ id: 'rss_x', title: 'Old', text: 'old', media: [{ type: 'image', url: 'https://i.example/1' }, { type: 'image', url: 'https://i.example/2', alt: 'two' }] });
    const edited = withEdit(item, { text: 'new', media: [{ alt: 'one' }, null] });
    expect(edited).toMatchObject({ title: 'Old', text: 'new', media: [{ alt: 'one' }, { alt: 'two' }] });
    expect(withEdit(item, { title: '' }).title).toBe('');
  });

  it.each([
    [null, {}],
    ['', {}],
    ['not json', {}],
    ['[1]', {}],
    ['{"spotlight":true}', { spotlight: true }],
  ])('reads %j as %j', (text, expected) => {
    expect(parseModeration(text)).toEqual(expected);
  });

  it('stores nothing when nothing is set', () => {
    expect(moderationText({})).toBeNull();
    expect(moderationText({ spotlight: true, edit: { title: 'x' } })).toBe('{"spotlight":true,"edit":{"title":"x"}}');
  });
});
