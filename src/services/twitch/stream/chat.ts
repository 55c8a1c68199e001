/**
 * The Twitch chat listener (docs/services.md#twitch-chat): ONE anonymous IRC-over-WebSocket
 * connection per installation (TWITCH_CHAT_URL, `socket.ts`) joins the channel of every active
 * twitch input of every contract; each channel is thus listened to once, whatever the number of
 * inputs on it.
 *
 * - **Lease**: the connection is held by one collector process at a time (stream `twitch-chat`,
 *   `store/streams.ts`), renewed every third of the lease (default 6 s); a process that fails to
 *   renew closes the connection at once; when the holder dies another takes over once its lease
 *   has run out. The holder id is `<host>:<pid>:<random>`. With no active input nothing connects.
 * - **Channels**: read with the inputs every tick; new ones are joined (paced by Twitch's JOIN
 *   limit), those no input follows any more are parted.
 * - **Messages**: each `PRIVMSG` becomes a `status` item (`chatItem`) stored through
 *   `ingestPushed` for every input of its channel (filters, de-duplication, rejections, events),
 *   in arrival order, in batches. A moderator's `CLEARMSG` removes that message's item, and
 *   `CLEARCHAT #c :<login>` (a ban or time-out) the items of that user this process stored lately
 *   (`recent.ts`), from the channel's inputs only (`removeItems`, reason `deleted`,
 *   docs/api.md#removed-at-the-source); `CLEARCHAT` of the whole room removes nothing.
 *   A channel's `NOTICE` (a suspended or unknown channel) is logged and kept as `lastError`.
 * - **Reconnects**: a dropped connection is opened again after a back-off from 1 s to 30 s (reset
 *   by a connection that lasted 30 s); a server's `RECONNECT` reconnects at once, unless the
 *   connection before did not last either (then it is backed off like a drop). A chat has no
 *   history: what is said while no connection is open is not collected.
 * - **Feed mode**: the inputs served are `stream` while this process holds an open connection,
 *   and `poll` again when it stops, loses the lease, stays disconnected longer than the grace
 *   (default 15 s), or an input leaves (deactivated, changed, deleted). Their polls read nothing.
 * - **Bounds**: the connection goes through the collector's private-address guard
 *   (`createGuardedAgent`, ALLOW_PRIVATE_FETCH); a WebSocket message over 64 KiB or a handshake
 *   past 10 s fails it (`CHAT_BOUNDS`); more than 20 000 messages waiting → the
 *   connection is dropped and opened again.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { ContentItem } from '../../../item.ts';
import { removeItems } from '../../../store/removals.ts';
import { activeInputsOf, setFeedMode } from '../../../store/inputs.ts';
import { holdStream, releaseStream } from '../../../store/streams.ts';
import type { InputRow } from '../../../store/tables.ts';
import type { FetchError } from '../../connector.ts';
import type { StreamDeps } from '../../kit/stream/collector.ts';
import { ownsEntries } from '../../table.ts';
import { channelOfMessage, chatItem, chatRemoval } from '../connector.ts';
import type { IrcMessage } from '../irc.ts';
import { channelOf } from '../row.ts';
import { RecentMessages } from './recent.ts';
import { webSocketAgentOptions } from '../../kit/stream/websocket.ts';
import { backoffMs, dropsInARow } from '../../kit/stream/websocket.ts';
import { CHAT_BOUNDS, type ChatSocket, openChatSocket } from './socket.ts';

/** The stream's name in the `streams` table. */
export const TWITCH_CHAT = 'twitch-chat';
/** Messages waiting, at most; past it the connection is dropped. */
const MAX_QUEUE = 20_000;
/** Messages applied per batch, at most. */
const BATCH = 500;

/** Options of {@link startTwitchChat}; the defaults suit production, tests shorten them. */
export interface TwitchChatOptions {
  /** Lease, ms (default 6000); renewed every third of it. */
  leaseMs?: number;
  /** Disconnected longer than this, ms, the inputs go back to polling (default 15 000). */
  graceMs?: number;
  /** A connection silent this long is dropped, ms (default 360 000: Twitch PINGs about every 5 minutes). */
  idleMs?: number;
  /** Longest wait for the WebSocket's opening handshake, ms (default `CHAT_BOUNDS`' 10 000). */
  handshakeTimeoutMs?: number;
}

/** What the listener says of itself (tests, logs). */
export interface TwitchChatStatus {
  holder: string;
  /** Holds the lease and has an open connection. */
  connected: boolean;
  /** Connections opened so far. */
  connections: number;
  /** The channels joined on the open connection. */
  channels: string[];
  /** The last failure, or null. */
  lastError: string | null;
}

export interface TwitchChat {
  status(): TwitchChatStatus;
  /** Reads the inputs and renews the lease now (or joins the tick under way). */
  tick(): Promise<void>;
  /** Closes the connection, hands the inputs back to polling and gives the lease up. */
  stop(): Promise<void>;
}

/** Starts the listener (see the module); a no-op listener when TWITCH_CHAT_URL is `off`. */
export function startTwitchChat(deps: StreamDeps, options: TwitchChatOptions = {}): TwitchChat {
  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const url = deps.config.services.twitch.chatUrl;
  if (url === 'off') {
    const state: TwitchChatStatus = { holder, connected: false, connections: 0, channels: [], lastError: null };
    return { status: () => ({ ...state }), tick: async () => {}, stop: async () => {} };
  }
  const listener = new Listener(deps, url, holder, {
    leaseMs: options.leaseMs ?? 6000,
    graceMs: options.graceMs ?? 15_000,
    idleMs: options.idleMs ?? 360_000,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? CHAT_BOUNDS.handshakeTimeoutMs,
  });
  const ticker = deps.tools.startTicker(() => listener.tick(), Math.max(100, Math.floor(listener.settings.leaseMs / 3)), deps.log);
  let stopped: Promise<void> | undefined;
  return {
    status: () => ({ ...listener.state, channels: [...listener.state.channels] }),
    tick: ticker.tick,
    stop() {
      listener.stopping = true;
      stopped ??= ticker.stop().then(() => listener.stop());
      return stopped;
    },
  };
}

/** One listener's state and steps (see the module). */
class Listener {
  readonly state: TwitchChatStatus;
  readonly settings: Required<TwitchChatOptions>;
  stopping = false;
  private readonly deps: StreamDeps;
  private readonly url: string;
  private readonly agent: Agent;
  private refused: FetchError | undefined;
  /** The inputs of each channel followed, as last read. */
  private channels = new Map<string, InputRow[]>();
  /** Inputs this process has set to `stream`. */
  private streamed = new Set<string>();
  private readonly recent = new RecentMessages();
  private socket: ChatSocket | undefined;
  /** Bumped at each connection and disconnection: messages of an older one are dropped. */
  private generation = 0;
  private holding = false;
  private failures = 0;
  private retryAt = 0;
  private openedAt: number | null = null;
  private disconnectedAt = Date.now();
  private readonly queue: IrcMessage[] = [];
  private draining: Promise<void> | undefined;

  constructor(deps: StreamDeps, url: string, holder: string, settings: Required<TwitchChatOptions>) {
    this.deps = deps;
    this.url = url;
    this.settings = settings;
    this.state = { holder, connected: false, connections: 0, channels: [], lastError: null };
    this.agent = deps.tools.createGuardedAgent({ allowPrivate: deps.config.allowPrivateFetch, onBlocked: (error) => (this.refused = error), ...webSocketAgentOptions(CHAT_BOUNDS) });
  }

  private get log(): FastifyBaseLogger | undefined {
    return this.deps.log;
  }

  private fail(message: string) {
    this.state.lastError = message;
    this.log?.warn({ stream: TWITCH_CHAT }, `twitch chat: ${message}`);
  }

  /** Sets the feed mode of `ids` and remembers which this process streams. */
  private async setMode(ids: string[], mode: 'stream' | 'poll') {
    if (!ids.length) return;
    await setFeedMode(this.deps.db, ids, mode);
    for (const id of ids) (mode === 'stream' ? this.streamed.add(id) : this.streamed.delete(id));
  }

  private servedIds(): string[] {
    return [...this.channels.values()].flat().map((input) => input.id);
  }

  /** One step: reads the inputs, renews the lease, (re)connects, joins and parts, and hands the inputs back to polling after the grace. */
  async tick(): Promise<void> {
    if (this.stopping) return;
    const channels = new Map<string, InputRow[]>();
    for (const input of await activeInputsOf(this.deps.db, 'twitch', ['channel'])) {
      const channel = channelOf(input.input);
      if (channel) channels.set(channel, [...(channels.get(channel) ?? []), input]);
    }
    this.channels = channels;
    const served = new Set(this.servedIds());
    await this.setMode([...this.streamed].filter((id) => !served.has(id)), 'poll');
    if (!channels.size) {
      if (this.holding) await this.giveUp();
      return;
    }
    if (!(await this.renewLease())) return;
    const now = Date.now();
    if (!this.socket && now >= this.retryAt) this.connect();
    if (this.state.connected) {
      this.syncChannels();
      await this.setMode([...served].filter((id) => !this.streamed.has(id)), 'stream');
    } else if (this.streamed.size && now - this.disconnectedAt > this.settings.graceMs) await this.setMode([...this.streamed], 'poll');
  }

  /** Joins the channels followed and not joined, parts those joined and no longer followed. */
  private syncChannels() {
    if (!this.socket) return;
    const joined = new Set(this.state.channels);
    const join = [...this.channels.keys()].filter((c) => !joined.has(c));
    const part = [...joined].filter((c) => !this.channels.has(c));
    if (join.length) this.socket.join(join);
    if (part.length) this.socket.part(part);
    this.state.channels = [...this.channels.keys()];
  }

  /** Takes or renews the lease; answers whether this process holds it. Losing it disconnects. */
  private async renewLease(): Promise<boolean> {
    let held: boolean;
    try {
      held = (await holdStream(this.deps.db, TWITCH_CHAT, this.state.holder, this.settings.leaseMs)).held;
    } catch (error) {
      held = false;
      this.fail(`could not renew the lease: ${describe(error)}`);
    }
    if (!held && this.holding) {
      this.holding = false;
      this.disconnect();
      // The feed modes are the new holder's to set now.
      this.streamed = new Set();
    }
    this.holding = held;
    return held;
  }

  private connect() {
    const mine = ++this.generation;
    this.refused = undefined;
    this.state.channels = [];
    const dropped = (reconnect: boolean) => {
      // Counted before `disconnect` forgets when the connection opened.
      this.failures = dropsInARow(this.failures, this.openedAt, Date.now());
      this.disconnect();
      // A server's RECONNECT is answered at once after a connection that lasted, or the first
      // time; asked again by connections that did not last, it waits the back-off as a drop does,
      // so a server repeating it cannot make the listener reconnect in a loop.
      const now = reconnect && this.failures <= 1;
      this.retryAt = now ? 0 : Date.now() + backoffMs(this.failures - 1);
      if (now && this.holding && !this.stopping) this.connect();
    };
    try {
      this.socket = openChatSocket(
        this.url,
        this.agent,
        {
          onOpen: () => {
            if (mine !== this.generation) return;
            this.state.connected = true;
            this.state.connections += 1;
            this.openedAt = Date.now();
            this.syncChannels();
            void this.setMode(this.servedIds().filter((id) => !this.streamed.has(id)), 'stream').catch((error: unknown) => this.fail(`could not set the feed mode: ${describe(error)}`));
          },
          onMessage: (message) => {
            if (mine !== this.generation) return;
            this.queue.push(message);
            if (this.queue.length > MAX_QUEUE) {
              this.fail(`more than ${MAX_QUEUE} messages waiting: reconnecting`);
              return dropped(false);
            }
            this.draining ??= this.drain().finally(() => (this.draining = undefined));
          },
          onDrop: (failure, reconnect) => {
            if (mine !== this.generation) return;
            if (failure) this.fail(`connection failed: ${describe(this.refused ?? failure.error)}`);
            dropped(reconnect);
          },
        },
        { idleMs: this.settings.idleMs, bounds: { ...CHAT_BOUNDS, handshakeTimeoutMs: this.settings.handshakeTimeoutMs } },
      );
    } catch (error) {
      this.fail(`could not connect: ${describe(error)}`);
      this.socket = undefined;
      this.failures += 1;
      this.retryAt = Date.now() + backoffMs(this.failures - 1);
    }
  }

  private disconnect() {
    this.generation += 1;
    this.socket?.close();
    this.socket = undefined;
    this.openedAt = null;
    this.state.channels = [];
    if (this.state.connected) this.disconnectedAt = Date.now();
    this.state.connected = false;
  }

  /** Applies the queued messages, in order, a batch at a time. */
  private async drain() {
    while (this.queue.length && !this.stopping) {
      try {
        await this.apply(this.queue.splice(0, BATCH));
      } catch (error) {
        this.fail(`storing failed: ${describe(error)}`);
      }
    }
  }

  /** Stores the batch's messages for their channels' inputs; a removal first stores what came before it (order holds). */
  private async apply(batch: IrcMessage[]) {
    let items = new Map<string, ContentItem[]>();
    const flush = async () => {
      for (const [channel, list] of items) {
        for (const input of this.channels.get(channel) ?? []) {
          await this.deps.tools.ingestPushed(this.deps.db, input, list, { ...(this.log && { log: this.log }) }).catch((error: unknown) => this.fail(`items of ${input.id} not stored: ${describe(error)}`));
        }
      }
      items = new Map();
    };
    for (const message of batch) {
      const item = chatItem(message);
      const channel = channelOfMessage(message);
      if (item && channel) {
        items.set(channel, [...(items.get(channel) ?? []), item]);
        if (item.author.username) this.recent.add(channel, item.author.username, item.id);
        continue;
      }
      if (message.command === 'NOTICE' && channel) {
        // E.g. msg_channel_suspended: "This channel does not exist or has been suspended."
        this.fail(`#${channel}: ${message.tags['msg-id'] ? `${message.tags['msg-id']}: ` : ''}${message.params.at(-1) ?? ''}`);
        continue;
      }
      const removal = chatRemoval(message);
      if (!removal) continue;
      await flush();
      const ids = 'itemId' in removal ? [removal.itemId] : this.recent.take(removal.channel, removal.login);
      const inputIds = (this.channels.get(removal.channel) ?? []).map((input) => input.id);
      if (ids.length && inputIds.length) await removeItems(this.deps.db, { service: 'twitch', ids, inputIds }, { reason: 'deleted' }, ownsEntries);
    }
    await flush();
  }

  /** Stops: disconnects, waits for the storing under way, hands the inputs back to polling and releases the lease. */
  async stop() {
    this.stopping = true;
    await this.giveUp();
    await this.agent.close().catch(() => {});
  }

  private async giveUp() {
    this.disconnect();
    await this.draining;
    await this.setMode([...this.streamed], 'poll').catch((error: unknown) => this.fail(`could not set the feed mode: ${describe(error)}`));
    if (this.holding) await releaseStream(this.deps.db, TWITCH_CHAT, this.state.holder).catch(() => {});
    this.holding = false;
  }
}

/** An error's message and, for a wrapped one, its causes' (the guard's "not a public address"). */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e && parts.length < 5; e = (e as { cause?: unknown }).cause) parts.push(e instanceof Error ? e.message : String(e));
  return parts.join(': ') || 'unknown error';
}
