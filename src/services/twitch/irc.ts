/**
 * A strict parser of one IRC message line as IRCv3 writes it (ircv3.net/specs/extensions/message-tags,
 * RFC 1459 §2.3.1 for the rest), as Twitch's chat sends it (dev.twitch.tv/docs/chat/irc):
 *
 *     ['@' <tags> SPACE] [':' <prefix> SPACE] <command> [params] [SPACE ':' <trailing>]
 *
 * Tag values are unescaped per the message-tags spec (`\:` → `;`, `\s` → space, `\\` → `\`,
 * `\r` → CR, `\n` → LF, `\` before another character → that character, a trailing lone `\`
 * dropped); a tag without `=` has the value `''`. No npm parser fits: `irc-message` pulls in
 * streams (through2) for a job of fifty lines.
 */

/** One parsed message: tags, prefix (`nick!user@host`, or a server name as `nick`), command (upper-case as sent) and parameters (the trailing one last). */
export interface IrcMessage {
  tags: Record<string, string>;
  prefix: { nick: string; user: string | null; host: string | null } | null;
  command: string;
  params: string[];
}

/** The longest line read, characters (tags 8 191 bytes + the 512 of the rest, IRCv3). */
export const MAX_LINE = 8191 + 512;

const ESCAPES: Record<string, string> = { ':': ';', s: ' ', '\\': '\\', r: '\r', n: '\n' };

/** A tag value unescaped (see the module). */
export function unescapeTag(value: string): string {
  return value.replace(/\\(.?)/gs, (_, c: string) => (c === '' ? '' : (ESCAPES[c] ?? c)));
}

/** `line` (without its CR LF) parsed, or null when it is not a message (empty, too long, no command, a bad command). */
export function parseIrcLine(line: string): IrcMessage | null {
  if (!line || line.length > MAX_LINE) return null;
  let rest = line;
  const tags: Record<string, string> = {};
  if (rest.startsWith('@')) {
    const end = rest.indexOf(' ');
    if (end < 0) return null;
    for (const tag of rest.slice(1, end).split(';')) {
      if (!tag) continue;
      const eq = tag.indexOf('=');
      const key = eq < 0 ? tag : tag.slice(0, eq);
      if (key) tags[key] = eq < 0 ? '' : unescapeTag(tag.slice(eq + 1));
    }
    rest = rest.slice(end + 1).replace(/^ +/, '');
  }
  let prefix: IrcMessage['prefix'] = null;
  if (rest.startsWith(':')) {
    const end = rest.indexOf(' ');
    if (end < 0) return null;
    const source = rest.slice(1, end);
    const bang = source.indexOf('!');
    const at = source.indexOf('@');
    prefix = {
      nick: source.slice(0, bang >= 0 ? bang : at >= 0 ? at : undefined),
      user: bang >= 0 ? source.slice(bang + 1, at > bang ? at : undefined) : null,
      host: at >= 0 ? source.slice(at + 1) : null,
    };
    rest = rest.slice(end + 1).replace(/^ +/, '');
  }
  const trailingAt = rest.indexOf(' :');
  const head = trailingAt >= 0 ? rest.slice(0, trailingAt) : rest;
  const [command, ...params] = head.split(' ').filter(Boolean);
  if (!command || !/^([A-Za-z]+|\d{3})$/.test(command)) return null;
  if (trailingAt >= 0) params.push(rest.slice(trailingAt + 2));
  return { tags, prefix, command, params };
}
