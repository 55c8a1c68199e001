import { describe, expect, it } from 'vitest';
import { type IrcMessage, MAX_LINE, parseIrcLine, unescapeTag } from './irc.ts';

describe('unescapeTag (IRCv3 message-tags escaping)', () => {
  it.each([
    ['plain', 'plain'],
    ['a\\sb', 'a b'],
    ['semi\\:colon', 'semi;colon'],
    ['back\\\\slash', 'back\\slash'],
    ['cr\\rlf\\n', 'cr\rlf\n'],
    ['\\b\\x', 'bx'],
    ['trailing\\', 'trailing'],
    ['\\\\s', '\\s'],
    ['', ''],
  ])('%j → %j', (raw, value) => expect(unescapeTag(raw)).toBe(value));
});

const cases: [string, IrcMessage | null][] = [
  ['PING :tmi.twitch.tv', { tags: {}, prefix: null, command: 'PING', params: ['tmi.twitch.tv'] }],
  [':tmi.twitch.tv RECONNECT', { tags: {}, prefix: { nick: 'tmi.twitch.tv', user: null, host: null }, command: 'RECONNECT', params: [] }],
  [':tmi.twitch.tv 001 justinfan123 :Welcome, GLHF!', { tags: {}, prefix: { nick: 'tmi.twitch.tv', user: null, host: null }, command: '001', params: ['justinfan123', 'Welcome, GLHF!'] }],
  [
    '@a=1;b;c=x\\sy;=skip :nick!user@host PRIVMSG #chan :hello :) there',
    { tags: { a: '1', b: '', c: 'x y' }, prefix: { nick: 'nick', user: 'user', host: 'host' }, command: 'PRIVMSG', params: ['#chan', 'hello :) there'] },
  ],
  ['PRIVMSG #chan ::)', { tags: {}, prefix: null, command: 'PRIVMSG', params: ['#chan', ':)'] }],
  ['PRIVMSG #chan :', { tags: {}, prefix: null, command: 'PRIVMSG', params: ['#chan', ''] }],
  ['JOIN   #a,#b', { tags: {}, prefix: null, command: 'JOIN', params: ['#a,#b'] }],
  [':nick@host NOTICE x', { tags: {}, prefix: { nick: 'nick', user: null, host: 'host' }, command: 'NOTICE', params: ['x'] }],
  // Tags without a prefix; every escape in one value; `=` inside a value; a key sent twice (the last wins).
  [
    '@msg=a\\:b\\sc\\\\d\\re\\nf;k=x=y;d=1;d=2 PRIVMSG #c :t',
    { tags: { msg: 'a;b c\\d\re\nf', k: 'x=y', d: '2' }, prefix: null, command: 'PRIVMSG', params: ['#c', 't'] },
  ],
  // The trailing parameter keeps its spaces, leading, inner and trailing, and a `:` after the first.
  ['PRIVMSG #c :  two  spaces : colon  ', { tags: {}, prefix: null, command: 'PRIVMSG', params: ['#c', '  two  spaces : colon  '] }],
  // The longest line read is read; one character more is not.
  [`PRIVMSG #x :${'a'.repeat(MAX_LINE - 12)}`, { tags: {}, prefix: null, command: 'PRIVMSG', params: ['#x', 'a'.repeat(MAX_LINE - 12)] }],
  // Not messages: nothing, only tags, only a prefix, a command that is neither letters nor three digits, too long.
  ['', null],
  ['@a=1', null],
  [':prefix', null],
  [':prefix  ', null],
  ['PRIV-MSG #x :y', null],
  ['12 #x', null],
  [`PRIVMSG #x :${'a'.repeat(MAX_LINE - 11)}`, null],
];

describe('parseIrcLine', () => {
  it.each(cases)('%j', (line, message) => expect(parseIrcLine(line)).toEqual(message));
});
