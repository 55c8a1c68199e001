/**
 * How the Moderation screen shows source HTML and names items (./text.ts): words only, never
 * markup. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import type { Duplicate } from '../../resources.ts';
import { duplicateLabel, labelOf, plainText } from './text.ts';

describe('plainText', () => {
  it.each([
    ['text without markup is unchanged', 'A plain line', 'A plain line'],
    ['tags dropped', '<p>The <b>ferry</b></p>', 'The ferry'],
    ['script and style dropped with their content', '<script>alert(1)</script>Hi<style>p{}</style>', 'Hi'],
    ['handlers dropped with their tag', '<img src=x onerror="alert(1)">caption', 'caption'],
    ['line breaks at br and block ends', 'one<br>two</p>three', 'one\ntwo\nthree'],
    ['named references decoded', '&lt;b&gt; &amp; &quot;', '<b> & "'],
    ['numeric references decoded', '&#65;&#x42;&#X43;', 'ABC'],
    ['unknown and out-of-range references kept', '&bogus; &#x110000;', '&bogus; &#x110000;'],
    ['a decoded tag stays text', '&lt;script&gt;', '<script>'],
  ] as const)('%s', (_name, source, expected) => expect(plainText(source)).toBe(expected));
});

describe('labelOf', () => {
  it.each([
    ['the title', { id: 'i1', title: 'Harbour news', text: 'body' }, 'Harbour news'],
    ['else the text as words', { id: 'i1', text: '<p>The   <b>ferry</b>\n sails</p>' }, 'The ferry sails'],
    ['long text cut at 57 characters with an ellipsis', { id: 'i1', text: 'x'.repeat(80) }, `${'x'.repeat(57)}…`],
    ['60 characters kept whole', { id: 'i1', text: 'y'.repeat(60) }, 'y'.repeat(60)],
    ['else the id', { id: 'i1', text: '<br>' }, 'i1'],
  ] as const)('%s', (_name, item, expected) => expect(labelOf(item)).toBe(expected));
});

describe('duplicateLabel', () => {
  const duplicate = (over: Record<string, unknown>) => ({ id: 'd1', service: 'twitter', url: 'https://x.test/1', author: {}, ...over }) as unknown as Duplicate;
  it.each([
    ['service and author name', duplicate({ author: { name: 'Ann', username: 'ann' } }), 'twitter by Ann'],
    ['else the username', duplicate({ author: { username: 'ann' } }), 'twitter by ann'],
    ['else the address', duplicate({}), 'twitter https://x.test/1'],
    ['else the id', duplicate({ url: '' }), 'd1'],
  ] as const)('%s', (_name, one, expected) => expect(duplicateLabel(one)).toBe(expected));
});
