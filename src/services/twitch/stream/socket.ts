/**
 * The chat listener's connection (docs/services.md#twitch-chat): Twitch's IRC over one WebSocket
 * (dev.twitch.tv/docs/chat/irc, "Connecting to the Twitch IRC server"), opened through the
 * collector's guarded agent (`createGuardedAgent`, docs/services.md#outbound-requests), logged in
 * anonymously as Twitch documents read-only access: no `PASS`, `NICK justinfan<digits>`, and
 * `CAP REQ :twitch.tv/tags twitch.tv/commands` for the message ids, times, authors and the
 * moderators' `CLEARMSG`/`CLEARCHAT`. It answers `PING` with `PONG`, says `RECONNECT` (the
 * server's request to reconnect) to its owner, drops the connection on a `NOTICE *` (a refused
 * login: "Login authentication failed"), and joins and parts channels at most
 * `JOIN_LIMIT` per `JOIN_WINDOW_MS` (Twitch's rate limit of JOINs per user: 20 per 10 s), in
 * lines within the 512 characters of an IRC message (RFC 1459 §2.3). A message over
 * `CHAT_BOUNDS`' size or a handshake past its time fails the connection (`kit/stream/websocket.ts`).
 */
import { randomInt } from 'node:crypto';
import type { Agent } from 'undici';
import { openBoundedWebSocket, type WebSocketBounds } from '../../kit/stream/websocket.ts';
import { type IrcMessage, parseIrcLine } from '../irc.ts';

/**
 * What a chat server may make the listener hold or wait for: a WebSocket message of at most
 * 64 KiB (Twitch may send several IRC messages in one, each at most 8 703 bytes with its tags,
 * IRCv3 message-tags: 8 191 for the tags and RFC 1459's 512), a handshake of at most 10 s.
 */
export const CHAT_BOUNDS: WebSocketBounds = { maxMessageBytes: 64 * 1024, handshakeTimeoutMs: 10_000 };

/** JOINs per window at most, and the window (ms): Twitch's limit for a user (dev.twitch.tv/docs/chat/#rate-limits). */
export const JOIN_LIMIT = 20;
export const JOIN_WINDOW_MS = 10_000;

/** The longest line sent, CR LF excluded: an IRC message is at most 512 characters with it (RFC 1459 §2.3). */
export const MAX_SENT_LINE = 510;

/**
 * `command` (`JOIN`, `PART`) of `channels` (logins, without `#`) as lines of comma-separated
 * `#channel`s, each within {@link MAX_SENT_LINE}: a server may cut a longer one, and with it a
 * channel's name.
 */
export function channelLines(command: string, channels: readonly string[]): string[] {
  const lines: string[] = [];
  let line = '';
  for (const channel of channels) {
    const next = line ? `${line},#${channel}` : `${command} #${channel}`;
    if (next.length > MAX_SENT_LINE && line) {
      lines.push(line);
      line = `${command} #${channel}`;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** What a connection tells its owner; nothing after `close()` or after `onDrop`. */
export interface ChatSocketHandlers {
  /** The connection is open and logged in (the login lines sent). */
  onOpen(): void;
  /** A message of the server other than `PING` and `RECONNECT`. */
  onMessage(message: IrcMessage): void;
  /** The connection failed (`failure`: the WebSocket's error), closed (null), or the server asked for a reconnect (`reconnect`: true); said once. */
  onDrop(failure: { error: unknown } | null, reconnect: boolean): void;
}

/** An open (or opening) connection. */
export interface ChatSocket {
  /** Joins `channels` (logins, checked by the caller), paced by the JOIN limit. */
  join(channels: readonly string[]): void;
  /** Leaves `channels`. */
  part(channels: readonly string[]): void;
  /** Closes it; its handlers hear nothing more. Never throws. */
  close(): void;
}

/**
 * Opens the chat connection to `href` through `agent` (made with `webSocketAgentOptions(bounds)`);
 * `idleMs`: a connection silent this long (Twitch PINGs about every 5 minutes) is dropped;
 * `joinLimit` JOINs per `joinWindowMs` (ms) at most (Twitch's, by default); `bounds`: a message
 * over its size or a handshake past its time fails the connection (default {@link CHAT_BOUNDS}).
 * Throws what undici's `WebSocket` throws synchronously (a URL that is not ws: or wss:).
 */
export function openChatSocket(
  href: string,
  agent: Agent,
  handlers: ChatSocketHandlers,
  {
    idleMs = 360_000,
    joinLimit = JOIN_LIMIT,
    joinWindowMs = JOIN_WINDOW_MS,
    bounds = CHAT_BOUNDS,
  }: { idleMs?: number; joinLimit?: number; joinWindowMs?: number; bounds?: WebSocketBounds } = {},
): ChatSocket {
  let done = false;
  let open = false;
  const waiting: string[] = [];
  let sentAt: number[] = [];
  let pacer: ReturnType<typeof setTimeout> | undefined;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const send = (line: string) => {
    if (!done) ws.send(`${line}\r\n`);
  };
  const finish = () => {
    done = true;
    clearTimeout(pacer);
    clearTimeout(idle);
    ws.close();
  };
  const drop = (failure: { error: unknown } | null, reconnect = false) => {
    if (done) return;
    finish();
    handlers.onDrop(failure, reconnect);
  };
  const awake = () => {
    clearTimeout(idle);
    idle = setTimeout(() => drop({ error: new Error(`the chat was silent for ${idleMs} ms`) }), idleMs);
  };
  /** Sends the waiting JOINs the window allows, and waits for the window for the rest. */
  const pace = () => {
    pacer = undefined;
    if (!open || done) return;
    const now = Date.now();
    sentAt = sentAt.filter((at) => now - at < joinWindowMs);
    const room = joinLimit - sentAt.length;
    const batch = waiting.splice(0, Math.max(0, room));
    if (batch.length) {
      for (const line of channelLines('JOIN', batch)) send(line);
      for (let i = 0; i < batch.length; i++) sentAt.push(now);
    }
    if (waiting.length) pacer = setTimeout(pace, Math.max(50, sentAt[0]! + joinWindowMs - now));
  };
  const ws = openBoundedWebSocket(href, agent, bounds, {
    onOpen() {
      if (done) return;
      open = true;
      send('CAP REQ :twitch.tv/tags twitch.tv/commands');
      send(`NICK justinfan${randomInt(10_000, 100_000_000)}`);
      awake();
      handlers.onOpen();
      pace();
    },
    onText(data) {
      if (done) return;
      awake();
      for (const line of data.split(/\r?\n/).slice(0, 1000)) {
        const message = parseIrcLine(line);
        if (!message) continue;
        if (message.command === 'PING') send(`PONG :${message.params[0] ?? 'tmi.twitch.tv'}`);
        else if (message.command === 'RECONNECT') return drop(null, true);
        else if (message.command === 'NOTICE' && message.params[0] === '*') return drop({ error: new Error(`the chat server refused the login: ${message.params.at(-1)}`) });
        else handlers.onMessage(message);
        if (done) return;
      }
    },
    onDrop: (failure) => drop(failure),
  });
  return {
    join(channels) {
      const fresh = channels.filter((c) => !waiting.includes(c));
      if (!fresh.length) return;
      waiting.push(...fresh);
      pacer ??= setTimeout(pace, 0);
    },
    part(channels) {
      const leaving = new Set(channels);
      const queued = waiting.filter((c) => !leaving.has(c));
      waiting.splice(0, waiting.length, ...queued);
      for (const line of channelLines('PART', channels)) send(line);
    },
    close: finish,
  };
}
