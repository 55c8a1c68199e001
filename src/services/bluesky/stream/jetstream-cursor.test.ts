import { describe, expect, it } from 'vitest';
import { advancedCursor, resumeUrl, REWIND_US } from './jetstream-cursor.ts';

describe('resumeUrl', () => {
  it.each([
    ['a fresh start: no cursor', null, null],
    ['resumes 5 s before the saved cursor', '1700000000000000', String(1700000000000000 - REWIND_US)],
    ['never before 0', '1000', '0'],
    ['a cursor that is not a time_us is ignored', '12a', null],
    ['an empty cursor is ignored', '', null],
  ])('%s', (_name, saved, cursor) => {
    const url = new URL(resumeUrl('ws://127.0.0.1:1/subscribe?wantedCollections=other', saved));
    expect(url.searchParams.getAll('wantedCollections')).toEqual(['app.bsky.feed.post']);
    expect(url.searchParams.get('cursor')).toBe(cursor);
    expect(url.pathname).toBe('/subscribe');
  });

  it('throws on a base that is not a URL', () => {
    expect(() => resumeUrl('not a url', null)).toThrow(TypeError);
  });
});

describe('advancedCursor', () => {
  it.each([
    ['no time_us in the batch', null, null, null],
    ['the first checkpoint', null, 5, '5'],
    ['moves forward', '5', 6, '6'],
    ['a replay behind the cursor does not move it back', '10', 6, null],
    ['nor onto itself', '10', 10, null],
  ])('%s', (_name, saved, last, expected) => {
    expect(advancedCursor(saved, last)).toBe(expected);
  });
});
