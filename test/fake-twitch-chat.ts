/**
 * A local fake of Twitch's chat server (IRC over WebSocket, dev.twitch.tv/docs/chat/irc) on a
 * 127.0.0.1 port, for tests: it records every line each client sends (`connections`), answers
 * `CAP REQ` with `CAP * ACK` and `NICK` with the `001` welcome, and lets a test send lines to the
 * clients that joined a channel (`say`, `send`), PING them, ask them to `RECONNECT`, or cut them.
 * While `hostile` is set, a WebSocket upgrade is answered by a hostile server instead
 * (test/hostile-websocket.ts: `silent` never answers it, `oversized` sends a 100 MiB frame),
 * recorded in `hostileConnections`.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { type HostileConnection, type Hostility, serveHostile } from './hostile-websocket.ts';

export interface FakeConnection {
  socket: WebSocket;
  /** Every line the client sent, in order. */
  lines: string[];
  /** The channels it joined and did not part. */
  channels: Set<string>;
  nick: string | null;
  closed: boolean;
  /** When the server accepted it (epoch ms). */
  openedAt: number;
}

export interface FakeTwitchChat {
  /** `ws://127.0.0.1:<port>` (TWITCH_CHAT_URL). */
  url: string;
  connections: FakeConnection[];
  /** Open connections now. */
  open(): FakeConnection[];
  /** Sends `line` to every open client that joined `channel` (to all open ones when null). */
  send(channel: string | null, line: string): void;
  /** A `PRIVMSG` in `channel` with Twitch's tags; answers the message id. */
  say(channel: string, login: string, text: string, options?: { id?: string; userId?: string; displayName?: string; sentAt?: number }): string;
  /** Cuts every connection without a word. */
  drop(): void;
  /** Called with each connection once it has logged in (after the `001` welcome), e.g. to send it a `RECONNECT`. */
  onLogin: ((connection: FakeConnection) => void) | null;
  /** While set, upgrades go to a hostile server (test/hostile-websocket.ts), not to the chat. */
  hostile: Hostility | null;
  /** Every connection the hostile server took, in order. */
  hostileConnections: HostileConnection[];
  close(): Promise<void>;
}

/** A recorded line of test/fixtures/twitch/ (without its line end). */
export const fixtureLine = (file: string) => readFileSync(new URL(`./fixtures/twitch/${file}`, import.meta.url), 'utf8').replace(/\r?\n$/, '');

/** Starts the fake on a free 127.0.0.1 port. */
export async function startFakeTwitchChat(): Promise<FakeTwitchChat> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (fake.hostile) return void fake.hostileConnections.push(serveHostile(fake.hostile, req, socket));
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  let counter = 0;
  const fake: FakeTwitchChat = {
    url: '',
    connections: [],
    open: () => fake.connections.filter((c) => !c.closed),
    send(channel, line) {
      for (const c of fake.open()) if (channel === null || c.channels.has(channel)) c.socket.send(`${line}\r\n`);
    },
    say(channel, login, text, options = {}) {
      counter += 1;
      const id = options.id ?? `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
      const tags = `badge-info=;badges=;color=;display-name=${options.displayName ?? login};emotes=;id=${id};mod=0;room-id=1;subscriber=0;tmi-sent-ts=${options.sentAt ?? 1_700_000_000_000 + counter};turbo=0;user-id=${options.userId ?? '1'};user-type=`;
      fake.send(channel, `@${tags} :${login}!${login}@${login}.tmi.twitch.tv PRIVMSG #${channel} :${text}`);
      return id;
    },
    drop() {
      for (const c of fake.open()) c.socket.terminate();
    },
    onLogin: null,
    hostile: null,
    hostileConnections: [],
    async close() {
      for (const c of fake.connections) c.socket.terminate();
      for (const c of fake.hostileConnections) c.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  wss.on('connection', (socket) => {
    const c: FakeConnection = { socket, lines: [], channels: new Set(), nick: null, closed: false, openedAt: Date.now() };
    fake.connections.push(c);
    socket.on('close', () => (c.closed = true));
    socket.on('message', (data) => {
      for (const line of data.toString().split('\r\n').filter(Boolean)) {
        c.lines.push(line);
        const [command, ...rest] = line.split(' ');
        if (command === 'CAP') socket.send(':tmi.twitch.tv CAP * ACK :twitch.tv/tags twitch.tv/commands\r\n');
        if (command === 'NICK') {
          c.nick = rest[0] ?? null;
          socket.send(`:tmi.twitch.tv 001 ${c.nick} :Welcome, GLHF!\r\n`);
          fake.onLogin?.(c);
        }
        if (command === 'JOIN') for (const ch of (rest[0] ?? '').split(',')) c.channels.add(ch.replace(/^#/, ''));
        if (command === 'PART') for (const ch of (rest[0] ?? '').split(',')) c.channels.delete(ch.replace(/^#/, ''));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
