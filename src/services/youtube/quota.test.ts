import { describe, expect, it } from 'vitest';
import { youtubePollUnits, youtubeUnits } from './quota.ts';

describe('YouTube: units a call costs, and a poll takes', () => {
  it.each([
    ['/search', 100],
    ['/search?part=snippet&q=news', 100],
    ['/videos?id=a,b', 1],
    ['/playlistItems?playlistId=x', 1],
    ['/channels?forHandle=@x', 1],
  ])('YouTube %s costs %i units', (path, units) => expect(youtubeUnits(path)).toBe(units));

  it.each([
    ['keyword', 101],
    ['location', 101],
    ['channel', 3],
    ['user', 3],
    ['playlist', 2],
  ])('a YouTube %s poll takes at most %i units', (type, units) => expect(youtubePollUnits(type)).toBe(units));
});
