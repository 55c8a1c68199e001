import { describe, expect, it } from 'vitest';
import { sourceTitle } from './source-title.ts';

const by = (name: string | null) => ({ author: { name, username: null, userid: null, url: null } });

describe('sourceTitle (docs/api.md#inputs, title)', () => {
  it.each([
    ['a feed keeps the title its connector read', 'feed', 'Harbour Gazette', [by('Ann')], 'Harbour Gazette'],
    ['a feed without one has none', 'feed', undefined, [by('Ann')], undefined],
    ["an account's title is its posts' author", 'user', undefined, [by('Ann Lee'), by('Ann Lee')], 'Ann Lee'],
    ['reposts of others do not name it: the most frequent name does', 'user', undefined, [by('Bob'), by('Ann Lee'), by('Ann Lee')], 'Ann Lee'],
    ['a page and a channel likewise', 'page', undefined, [by('City Hall')], 'City Hall'],
    ['a channel', 'channel', undefined, [by('Harbour TV')], 'Harbour TV'],
    ['a connector title wins over authors', 'user', 'Ann (official)', [by('Ann Lee')], 'Ann (official)'],
    ['a tag has no own title', 'tag', undefined, [by('Ann Lee')], undefined],
    ['nor a keyword', 'keyword', undefined, [by('Ann Lee')], undefined],
    ['an account with no named items has none yet', 'user', undefined, [by(null), by('  ')], undefined],
    ['no items, none', 'user', undefined, [], undefined],
  ] as const)('%s', (_name, type, connectorTitle, items, expected) => {
    expect(sourceTitle(type, connectorTitle, items)).toBe(expected);
  });

  it('cuts a long name to 200 characters', () => {
    expect(sourceTitle('user', undefined, [by('x'.repeat(300))])).toHaveLength(200);
  });
});
