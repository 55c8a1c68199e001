import { describe, expect, it } from 'vitest';
import { youtubePollUnits, youtubeUnits } from './quota.ts';

describe('YouTube: units a call costs, and a poll takes', () => {
  it.each([
    ['/search', 100],
    ['/search?part=snippet&q=news', 100],
    ['/videos?id=a,b', 1],
    ['/playlistItems?playlistId=x', 1],
    ['/channels?forHandle=@x', 1],
    ['/liveChat/messages?liveChatId=x&part=snippet,authorDetails', 5],
  ])('YouTube %s costs %i units', (path, units) => expect(youtubeUnits(path)).toBe(units));

  it.each([
    ['keyword', 101],
    ['location', 101],
    ['channel', 3],
    ['user', 3],
    ['playlist', 2],
  ])('a YouTube %s poll takes at most %i units', (type, units) => expect(youtubePollUnits(type)).toBe(units));

  it.each([
    ['a video, its chat not known yet: videos.list and liveChatMessages.list', { input: '9ywjjWAkeL0', sourceState: '{}' }, 6],
    ['a channel, its broadcast not known yet: channels.list, search.list, videos.list, liveChatMessages.list', { input: '@LofiGirl', sourceState: '{}' }, 107],
    ['a video, its chat known: liveChatMessages.list only', { input: '9ywjjWAkeL0', sourceState: '{"liveChatId":"c","videoId":"v"}' }, 5],
    ['a channel, its chat known: liveChatMessages.list, and if that chat ended the next broadcast resolved and read', { input: 'UCSJ4gkVC6NrvII8umztf0Ow', sourceState: '{"liveChatId":"c","videoId":"v"}' }, 112],
    ['unreadable state: as unknown', { input: '9ywjjWAkeL0', sourceState: 'not json' }, 6],
  ])('a YouTube live poll, %s, takes at most %#', (_name, input, units) => expect(youtubePollUnits('live', input)).toBe(units));
});
