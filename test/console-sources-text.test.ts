/**
 * The Sources screen's words (src/console/app/screens/sources-text.ts): last errors in plain
 * words, relative times, pasted feed lines, how an input is fed. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { ago, feedLines, feedModeText, plainError, pollResultText } from '../src/console/app/screens/sources-text.ts';

describe('plainError', () => {
  it.each([
    ['HTTP 404', 'Nothing was found at this address (HTTP 404).'],
    ['HTTP 410', 'The source is gone for good (HTTP 410).'],
    ['HTTP 429', 'The source asked to slow down (HTTP 429).'],
    ['HTTP 418', 'The source answered with an error (HTTP 418).'],
    ['HTTP 503 Service Unavailable', 'The source is unavailable for now (HTTP 503 Service Unavailable).'],
    ['twitter is not configured: set TWITTER_BEARER_TOKEN', 'twitter is not configured: set TWITTER_BEARER_TOKEN'],
    ['HTTP 4040', 'HTTP 4040'],
    ['malformed JSON from api.example.com', 'malformed JSON from api.example.com'],
    ['not a feed: unexpected token', 'This address is not a feed: it is neither RSS, Atom nor JSON Feed (not a feed: unexpected token).'],
    ['Request to example.org timed out after 10000 ms', 'The source did not answer in time (Request to example.org timed out after 10000 ms).'],
    ['Request to 127.0.0.1 failed (ECONNREFUSED)', 'The source could not be reached (Request to 127.0.0.1 failed (ECONNREFUSED)).'],
  ])('%s → %s', (lastError, words) => {
    expect(plainError(lastError)).toBe(words);
  });
});

describe('ago', () => {
  const now = Date.parse('2026-11-23T12:00:00.000Z');
  it.each([
    ['2026-11-23T12:00:00.000Z', 'now'],
    ['2026-11-23T11:59:30.000Z', '30 seconds ago'],
    ['2026-11-23T12:00:01.000Z', 'in 1 second'],
    ['2026-11-23T11:58:00.000Z', '2 minutes ago'],
    ['2026-11-23T12:05:00.000Z', 'in 5 minutes'],
    ['2026-11-23T10:00:00.000Z', '2 hours ago'],
    ['2026-11-22T12:00:00.000Z', 'yesterday'],
    ['2026-11-20T12:00:00.000Z', '3 days ago'],
  ])('%s → %s', (iso, words) => {
    expect(ago(iso, now)).toBe(words);
  });
});

describe('feedLines', () => {
  it.each([
    ['', []],
    ['https://a.example/feed\n', ['https://a.example/feed']],
    ['  https://a.example/feed  \r\n\r\nhttps://b.example/rss\n', ['https://a.example/feed', 'https://b.example/rss']],
    ['https://a.example/feed\nhttps://a.example/feed\nnot a url', ['https://a.example/feed', 'not a url']],
  ])('%j → %j', (text, lines) => {
    expect(feedLines(text)).toEqual(lines);
  });
});

describe('feedModeText', () => {
  it.each([
    ['poll', 'poll: fetched on its schedule'],
    ['push', 'push: the source notifies Sluice (WebSub)'],
    ['stream', 'stream: a live connection to the source'],
    ['carrier-pigeon', 'carrier-pigeon'],
  ])('%s → %s', (mode, words) => {
    expect(feedModeText(mode)).toBe(words);
  });
});

describe('pollResultText', () => {
  it.each([
    [{ status: 'ok', items: 12, title: 'The Guardian', error: null }, '“The Guardian” answered: 12 new items.'],
    [{ status: 'ok', items: 1, title: null, error: null }, 'The source answered: 1 new item.'],
    [{ status: 'ok', items: 0, title: 'Wire', error: null }, '“Wire” answered: no new items.'],
    [{ status: 'error', items: 0, title: null, error: 'HTTP 404' }, 'The source gave an error: Nothing was found at this address (HTTP 404).'],
  ] as const)('%j → %s', (answer, words) => {
    expect(pollResultText(answer)).toBe(words);
  });
});
