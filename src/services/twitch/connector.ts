/**
 * The Twitch chat connector (docs/services.md#twitch-chat). A chat has no history to read: a
 * channel's messages exist only as they are said, so its input is fed by the chat listener alone
 * (`stream/chat.ts`) and a poll reads nothing: `collect` returns no items, sends no request and
 * keeps the state it is given. What the listener needs is here, pure:
 *
 * - `chatItem`: a `PRIVMSG` (dev.twitch.tv/docs/chat/irc, "PRIVMSG tags") as a content item;
 * - `chatRemoval`: what a moderator's `CLEARMSG` (one message, `target-msg-id`) or `CLEARCHAT`
 *   (every message of a user, or of the whole room) removes.
 */
import type { ContentItem } from '../../item.ts';
import type { Connector } from '../connector.ts';
import { escapeHtml } from '../kit/normalize.ts';
import type { IrcMessage } from './irc.ts';

/** A login as the chat names one: `a-z0-9_`, at most 25 (older logins may be shorter than the 4 an input needs: the documentation's own example is `#xyz`). */
const CHAT_LOGIN = /^[a-z0-9_]{1,25}$/i;
const loginOf = (name: string | undefined): string | null => (name && CHAT_LOGIN.test(name) ? name.toLowerCase() : null);

/** The channel page of login `login` (no message has a page of its own). */
export const channelUrl = (login: string) => `https://www.twitch.tv/${login}`;

/** The channel (login, without `#`) a message is in, from its first parameter; null when there is none or it is not a login. */
export function channelOfMessage(message: IrcMessage): string | null {
  const target = message.params[0];
  return target?.startsWith('#') ? loginOf(target.slice(1)) : null;
}

/** A `/me` message's text without its CTCP `ACTION` wrapper (`\x01ACTION …\x01`); other text as it is. */
function withoutAction(text: string): string {
  const action = /^\x01ACTION (.*?)\x01?$/s.exec(text);
  return action ? action[1]! : text;
}

/**
 * The content item of a `PRIVMSG` (see the module), or null for another command or a message
 * without an `id` tag, a channel or a valid `tmi-sent-ts` (ms since the epoch).
 *
 * - `id`: `twitch_<id tag>` (Twitch's UUID of the message); `type`: `status`;
 * - `text`: the message, HTML-escaped, a `/me`'s `ACTION` wrapper dropped; emotes stay their
 *   names (the `emotes` tag only marks their ranges); `tags`: none; `media`: null;
 * - `url`: the channel's page; `date`: `tmi-sent-ts`;
 * - `author`: `display-name` (else the login), the login (the prefix's nick), `user-id`, the
 *   author's channel page; `kudos`: `{score: 0}` (chat has no counters).
 */
export function chatItem(message: IrcMessage): ContentItem | null {
  if (message.command !== 'PRIVMSG' || message.params.length < 2) return null;
  const channel = channelOfMessage(message);
  const id = message.tags['id'];
  const sent = Number(message.tags['tmi-sent-ts']);
  if (!channel || !id || !/^[A-Za-z0-9-]{1,64}$/.test(id) || !Number.isSafeInteger(sent) || sent <= 0) return null;
  const login = loginOf(message.prefix?.nick);
  return {
    id: `twitch_${id}`,
    service: 'twitch',
    type: 'status',
    text: escapeHtml(withoutAction(message.params.at(-1)!)),
    tags: [],
    url: channelUrl(channel),
    date: new Date(sent).toISOString(),
    author: {
      name: message.tags['display-name'] || login,
      username: login,
      userid: message.tags['user-id'] || null,
      url: login ? channelUrl(login) : null,
    },
    media: null,
    kudos: { score: 0 },
  };
}

/**
 * What a moderation command removes (dev.twitch.tv/docs/chat/irc, CLEARMSG and CLEARCHAT), in its
 * channel: one message (`CLEARMSG`'s `target-msg-id`: the item `twitch_<id>`), every message of a
 * user (`CLEARCHAT #c :<login>`, with `target-user-id`), or null for anything else — a `CLEARCHAT`
 * of the whole room (`/clear`) removes nothing: it clears the screens of the viewers, it does not
 * say any message was bad.
 */
export function chatRemoval(message: IrcMessage): { channel: string; itemId: string } | { channel: string; login: string; userId: string | null } | null {
  const channel = channelOfMessage(message);
  if (!channel) return null;
  if (message.command === 'CLEARMSG') {
    const id = message.tags['target-msg-id'];
    return id && /^[A-Za-z0-9-]{1,64}$/.test(id) ? { channel, itemId: `twitch_${id}` } : null;
  }
  if (message.command === 'CLEARCHAT' && message.params.length >= 2) {
    const login = loginOf(message.params[1]);
    return login ? { channel, login, userId: message.tags['target-user-id'] || null } : null;
  }
  return null;
}

export const twitch: Connector = {
  service: 'twitch',
  /** A chat has no history (see the module): nothing to read, the state kept. */
  async collect(_input, state) {
    return { items: [], state };
  },
};
