import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import type { ContentItem } from '../../item.ts';
import { chatItem, chatRemoval, twitch } from './connector.ts';
import { parseIrcLine } from './irc.ts';
import { row } from './row.ts';

/** The message of a recorded line (test/fixtures/twitch/). */
const fixture = (file: string) => parseIrcLine(readFileSync(new URL(`../../../test/fixtures/twitch/${file}`, import.meta.url), 'utf8').replace(/\r?\n$/, ''))!;

describe('twitch chatItem (recorded PRIVMSG lines)', () => {
  it('the tags documentation example, every field', () => {
    expect(chatItem(fixture('privmsg_tags_doc.irc'))).toEqual({
      id: 'twitch_eb24e920-8065-492a-8aea-266a00fc5126',
      service: 'twitch',
      type: 'status',
      text: 'HeyGuys',
      tags: [],
      url: 'https://www.twitch.tv/xyz',
      date: '2022-01-21T17:30:03.573Z',
      author: { name: 'abc', username: 'abc', userid: '713936733', url: 'https://www.twitch.tv/abc' },
      media: null,
      kudos: { score: 0 },
    } satisfies ContentItem);
  });

  it('emotes stay their names: the emotes tag only marks ranges', () => {
    const item = chatItem(fixture('privmsg_emotes.irc'))!;
    expect(item.text).toBe('Kappa Keepo Kappa');
    expect(item.author).toEqual({ name: 'ronni', username: 'ronni', userid: '1337', url: 'https://www.twitch.tv/ronni' });
    expect(item.date).toBe('2017-10-05T23:36:12.675Z');
  });

  it('a /me message: the ACTION wrapper dropped, markup escaped, the display name unescaped', () => {
    const item = chatItem(fixture('privmsg_action_escaped.irc'))!;
    expect(item.text).toBe('waves &lt;b&gt;&amp;amp; &quot;hi&quot;&lt;/b&gt;');
    expect(item.author.name).toBe('Sl Uice;\\x');
  });

  it.each([
    ['another command', 'PING :tmi.twitch.tv'],
    ['no id tag', '@tmi-sent-ts=1 :a!a@a PRIVMSG #xyzw :hi'],
    ['no time', '@id=abc :a!a@a PRIVMSG #xyzw :hi'],
    ['an id that is not a message id', '@id=../../x;tmi-sent-ts=1 :a!a@a PRIVMSG #xyzw :hi'],
    ['a channel that is not a login', '@id=abc;tmi-sent-ts=1 :a!a@a PRIVMSG #x.y :hi'],
    ['no channel', '@id=abc;tmi-sent-ts=1 :a!a@a PRIVMSG justinfan1 :hi'],
  ])('no item: %s', (_, line) => expect(chatItem(parseIrcLine(line)!)).toBeNull());
});

describe('twitch chatRemoval (moderators)', () => {
  it('CLEARMSG removes the one message', () => expect(chatRemoval(fixture('clearmsg_doc.irc'))).toEqual({ channel: 'dallas', itemId: 'twitch_abc-123-def' }));
  it('CLEARCHAT of a user removes their messages (with target-user-id when tagged)', () => {
    expect(chatRemoval(fixture('clearchat_user_doc.irc'))).toEqual({ channel: 'dallas', login: 'ronni', userId: null });
    expect(chatRemoval(fixture('clearchat_user_tags.irc'))).toEqual({ channel: 'dallas', login: 'ronni', userId: '87654321' });
  });
  it('CLEARCHAT of the room removes nothing; nor does a PRIVMSG', () => {
    expect(chatRemoval(fixture('clearchat_room_tags.irc'))).toBeNull();
    expect(chatRemoval(fixture('privmsg_tags_doc.irc'))).toBeNull();
  });
});

describe('twitch input check and poll', () => {
  it.each([
    ['xyzw', null],
    ['#Ninja_123', null],
    ['a'.repeat(25), null],
  ])('accepts %j', (input, problem) => expect(row.checkInput(input)).toBe(problem));

  it.each(['abc', 'a'.repeat(26), 'foo bar', 'foo\r\nPRIVMSG #x :spam', 'foo,#other', '#', 'ünïcode', 'https://www.twitch.tv/xyzw', '127.0.0.1'])('refuses %j (IRC injection, other channels, URLs)', (input) => {
    expect(row.checkInput(input)).toMatch(/Twitch channel login/);
  });

  it.each([
    ['https://irc-ws.chat.twitch.tv', /TWITCH_CHAT_URL/],
    ['not a url', /TWITCH_CHAT_URL/],
    ['wss://chat.example?x=1', /TWITCH_CHAT_URL/],
  ])('TWITCH_CHAT_URL=%j is refused, naming the variable', (value, problem) => expect(() => loadConfig({ TWITCH_CHAT_URL: value })).toThrow(problem));

  it('TWITCH_CHAT_URL: the default, a local server, off', () => {
    expect(loadConfig({}).services.twitch.chatUrl).toBe('wss://irc-ws.chat.twitch.tv:443');
    expect(loadConfig({ TWITCH_CHAT_URL: 'ws://127.0.0.1:4000/' }).services.twitch.chatUrl).toBe('ws://127.0.0.1:4000');
    expect(loadConfig({ TWITCH_CHAT_URL: 'off' }).services.twitch.chatUrl).toBe('off');
  });

  it('a poll reads nothing and keeps the state (a chat has no history)', async () => {
    const services = loadConfig({}).services;
    const fetch = () => Promise.reject(new Error('no request expected'));
    expect(await twitch.collect({ id: 'i', service: 'twitch', type: 'channel', input: 'xyzw' }, { kept: 1 }, { fetch, services, now: 0 })).toEqual({ items: [], state: { kept: 1 } });
  });
});
