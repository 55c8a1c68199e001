/**
 * The service table's row of twitch (a live channel's chat, read anonymously over IRC on
 * WebSocket; docs/services.md#twitch-chat): its input type, the chat server's URL, no credential,
 * and the check of a channel's login. Listed in `../table.ts`.
 */
import type { ServiceRow } from '../kit/row.ts';

/**
 * A Twitch login: 4 to 25 of `a-z`, `0-9` and `_` (Twitch's "Username" rules; the IRC channel
 * name is `#` + the login). A leading `#` and capitals are accepted and normalized by `channelOf`.
 */
const LOGIN = /^#?[A-Za-z0-9_]{4,25}$/;

/** The channel (its login, lower-case, without `#`) an input's text names; null when it is not a login. */
export function channelOf(input: string): string | null {
  return LOGIN.test(input) ? input.replace(/^#/, '').toLowerCase() : null;
}

export const row = {
  types: ['channel'],
  urls: {
    /** Twitch's IRC over WebSocket (dev.twitch.tv/docs/chat/irc, "Connecting to the Twitch IRC server"). */
    chatUrl: ['TWITCH_CHAT_URL', 'wss://irc-ws.chat.twitch.tv:443'],
  },
  credentials: {},
  checkInput: (input) => (channelOf(input) ? null : 'input must be a Twitch channel login: 4 to 25 letters, digits or underscores'),
  /**
   * A message has no page of its own: its `url` is the channel's, shared by every message said
   * there. As a feed entry without a link, it is keyed for duplicates by its text only, never by
   * that URL (lib/item-keys.ts), so a channel's messages are not one another's duplicates.
   */
  ownEntries: true,
} as const satisfies ServiceRow;
