import { describe, expect, it } from 'vitest';
import { recentOf, spamScore, spamSignals, type SpamItem, WINDOW_MS } from './spam.ts';

const NOW = Date.parse('2026-12-22T12:00:00.000Z');
const TEXT = 'Win a free cruise today, click the link in our profile now';
const item = (id: string, author: string, extra: Partial<SpamItem> = {}): SpamItem => ({ id, text: TEXT, tags: [], author: { userid: author }, ...extra });
const burst = (n: number, at = NOW) => Array.from({ length: n }, (_, i) => recentOf(item(`x_${i}`, `a${i}`), at));

describe('spam signals (docs/filters.md#spam-score)', () => {
  it.each([
    ['the same text from 30 authors within minutes', item('x_0', 'a0'), burst(30), { sameText: 1 }, 0.8],
    ['the same text from 5 other authors', item('x_0', 'a0'), burst(6), { sameText: 0.5 }, 0.4],
    ['the same text from 30 authors an hour ago', item('x_new', 'b'), burst(30, NOW - WINDOW_MS - 1), { sameText: 0 }, 0],
    ['a different text', item('x_new', 'b', { text: 'The council met today to discuss the new harbour budget' }), burst(30), { sameText: 0 }, 0],
    ['one author posting 10 times', item('x_9', 'me'), Array.from({ length: 10 }, (_, i) => recentOf(item(`x_${i}`, 'me', { text: `post number ${i} about nothing in particular at all` }), NOW)), { burst: 1, sameText: 0 }, 0.2],
    ['a link-only post', item('x_l', 'b', { text: '<a href="https://spam.example/x">https://spam.example/x</a> #deal' }), [], { linkOnly: 1 }, 0.2],
    ['a link with words', item('x_l', 'b', { text: 'Read our report https://news.example/r' }), [], { linkOnly: 0 }, 0],
    ['hashtag stuffing', item('x_h', 'b', { text: 'great #a #b #c #d #e' }), [], { hashtags: 1 }, 0.2],
    ['8 tags', item('x_h', 'b', { text: 'a normal sentence with enough words in it', tags: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] }), [], { hashtags: 1 }, 0.2],
    ['no followers, where reported', item('x_f', 'b', { text: 'hello there', author: { userid: 'b', followers: 0 } }), [], { newAccount: 1 }, 0.2],
    ['followers not reported', item('x_f', 'b', { text: 'hello there' }), [], { newAccount: 0 }, 0],
  ])('%s', (_name, subject, recent, signals, score) => {
    expect(spamSignals(subject, recent, NOW)).toMatchObject(signals);
    expect(spamScore(subject, recent, NOW)).toBe(score);
  });

  it('caps the score at 1', () => {
    const all = item('x_0', 'a0', { text: 'https://spam.example #a #b #c #d #e #f #g #h', author: { userid: 'a0', followers: 0 } });
    const recent = Array.from({ length: 30 }, (_, i) => recentOf({ ...all, id: `x_${i}`, author: { userid: i < 10 ? 'a0' : `a${i}` } }, NOW));
    expect(spamScore(all, recent, NOW)).toBeLessThanOrEqual(1);
  });
});
