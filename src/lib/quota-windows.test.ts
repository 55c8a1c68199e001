import { describe, expect, it } from 'vitest';
import { hashtagCounts, HASHTAG_WINDOW_MS, hashtagOf, pacificDay, utcMonth } from './quota-windows.ts';

const at = (text: string) => Date.parse(text);

describe('pacificDay: the YouTube quota day, reset at midnight Pacific time', () => {
  it.each([
    ['winter, after midnight PST', '2026-11-23T09:00:00.000Z', '2026-11-23', '2026-11-24T08:00:00.000Z'],
    ['winter, the last second of a day', '2026-11-23T07:59:59.999Z', '2026-11-22', '2026-11-23T08:00:00.000Z'],
    ['winter, midnight itself starts the day', '2026-11-23T08:00:00.000Z', '2026-11-23', '2026-11-24T08:00:00.000Z'],
    ['summer (PDT, UTC−7)', '2026-07-01T06:59:00.000Z', '2026-06-30', '2026-07-01T07:00:00.000Z'],
    ['summer, after midnight PDT', '2026-07-01T07:00:00.000Z', '2026-07-01', '2026-07-02T07:00:00.000Z'],
    ['the day DST starts (8 Mar 2026): the next midnight is PDT', '2026-03-08T09:00:00.000Z', '2026-03-08', '2026-03-09T07:00:00.000Z'],
    ['the day before DST ends: the next midnight is still PDT', '2026-10-31T12:00:00.000Z', '2026-10-31', '2026-11-01T07:00:00.000Z'],
    ['the day DST ends (1 Nov 2026): the next midnight is PST', '2026-11-01T12:00:00.000Z', '2026-11-01', '2026-11-02T08:00:00.000Z'],
    ['the last day of the year', '2026-12-31T20:00:00.000Z', '2026-12-31', '2027-01-01T08:00:00.000Z'],
    ['UTC already in the next year, Pacific not', '2027-01-01T03:00:00.000Z', '2026-12-31', '2027-01-01T08:00:00.000Z'],
  ])('%s', (_case, now, key, resetsAt) => {
    const period = pacificDay(at(now));
    expect(period.key).toBe(key);
    expect(new Date(period.resetsAt).toISOString()).toBe(resetsAt);
  });
});

describe('utcMonth: the X read-cap month', () => {
  it.each([
    ['2026-11-23T09:00:00.000Z', '2026-11', '2026-12-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T00:00:00.000Z', '2027-01', '2027-02-01T00:00:00.000Z'],
    ['2028-02-29T12:00:00.000Z', '2028-02', '2028-03-01T00:00:00.000Z'],
  ])('%s → %s until %s', (now, key, resetsAt) => {
    const period = utcMonth(at(now));
    expect(period.key).toBe(key);
    expect(new Date(period.resetsAt).toISOString()).toBe(resetsAt);
  });
});

describe('Instagram hashtags', () => {
  it.each([
    ['sunset', 'sunset'],
    ['#Sunset', 'sunset'],
    ['  #SUNSET ', 'sunset'],
    ['café', 'café'],
  ])('%j counts as %j', (input, hashtag) => expect(hashtagOf(input)).toBe(hashtag));

  const now = at('2026-11-23T09:00:00.000Z');
  it.each([
    ['counted just now', now, true],
    ['counted 7 days less 1 ms ago', now - HASHTAG_WINDOW_MS + 1, true],
    ['counted exactly 7 days ago: freed', now - HASHTAG_WINDOW_MS, false],
    ['counted 8 days ago', now - 8 * 24 * 3600_000, false],
  ])('%s → counts %s', (_case, countedAt, counts) => expect(hashtagCounts(countedAt, now)).toBe(counts));
});
