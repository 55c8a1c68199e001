/**
 * A local fake of Bluesky's Jetstream (github.com/bluesky-social/jetstream) and of the two AppView
 * calls the listener makes, on one 127.0.0.1 port, for tests and benches:
 *
 * - `GET /subscribe?wantedCollections=…&cursor=<time_us>` (WebSocket): every published event, as
 *   Jetstream sends it (JSON text frames); with a cursor, the log from that `time_us` on first
 *   (a replay), then live ones. Each connection's query is recorded (`connections`).
 * - `GET /xrpc/app.bsky.actor.getProfiles?actors=…`: a profile per DID (`handle` = the DID's last
 *   part + `.test`, `displayName` = `Name <part>`), counted in `profileLookups`; 503 while
 *   `failProfiles`.
 * - `GET /xrpc/com.atproto.identity.resolveHandle?handle=…`: the DIDs of `handles`.
 *
 * While `hostile` is set, a WebSocket upgrade is answered by a hostile server instead
 * (test/hostile-websocket.ts: `silent` never answers it, `oversized` sends a 100 MiB frame),
 * recorded in `hostileConnections`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { type HostileConnection, type Hostility, serveHostile } from './hostile-websocket.ts';

export interface JetstreamEvent {
  did: string;
  time_us: number;
  kind: 'commit';
  commit: { rev: string; operation: 'create' | 'update' | 'delete'; collection: string; rkey: string; cid: string; record?: Record<string, unknown> };
}

export interface PostOptions {
  tags?: string[];
  /** Tag facets (`app.bsky.richtext.facet#tag`) for these tags. */
  facetTags?: string[];
  reply?: boolean;
  rkey?: string;
  embed?: Record<string, unknown>;
}

export interface FakeJetstream {
  /** `ws://127.0.0.1:<port>/subscribe` */
  url: string;
  /** `http://127.0.0.1:<port>` (BLUESKY_API_URL). */
  apiUrl: string;
  /** Every event published, in order. */
  log: JetstreamEvent[];
  /** The query of every connection, in order (`cursor` absent → null). */
  connections: { cursor: string | null; wantedCollections: string[] }[];
  profileLookups: number;
  /** While true, getProfiles answers 503. */
  failProfiles: boolean;
  /** Handle → DID answered by resolveHandle. */
  handles: Map<string, string>;
  /** While set, upgrades go to a hostile server (test/hostile-websocket.ts), not to the Jetstream. */
  hostile: Hostility | null;
  /** Every connection the hostile server took, in order. */
  hostileConnections: HostileConnection[];
  /** Open connections now. */
  open(): number;
  /** Publishes a post of `did` (its `time_us` later than any before); answers the event. */
  post(did: string, text: string, options?: PostOptions): JetstreamEvent;
  /** Publishes any event as it is (time_us assigned). */
  publish(event: Omit<JetstreamEvent, 'time_us'>): JetstreamEvent;
  /** Cuts every connection (the client must reconnect with its cursor). */
  drop(): void;
  close(): Promise<void>;
}

/** Starts the fake on a free 127.0.0.1 port. */
export async function startFakeJetstream(): Promise<FakeJetstream> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/xrpc/app.bsky.actor.getProfiles') {
      fake.profileLookups += 1;
      if (fake.failProfiles) return void res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Unavailable' }));
      const profiles = url.searchParams.getAll('actors').map((did) => {
        const part = did.split(':').pop()!;
        return { did, handle: `${part}.test`, displayName: `Name ${part}` };
      });
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ profiles }));
    }
    if (url.pathname === '/xrpc/com.atproto.identity.resolveHandle') {
      const did = fake.handles.get(url.searchParams.get('handle') ?? '');
      if (!did) return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'InvalidRequest', message: 'Unable to resolve handle' }));
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ did }));
    }
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/subscribe') return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    if (fake.hostile) return void fake.hostileConnections.push(serveHostile(fake.hostile, req, socket));
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const clients = new Set<WebSocket>();
  let lastUs = 0;
  let seq = 0;
  wss.on('connection', (socket, req) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const cursor = url.searchParams.get('cursor');
    fake.connections.push({ cursor, wantedCollections: url.searchParams.getAll('wantedCollections') });
    if (cursor !== null) for (const event of fake.log) if (event.time_us >= Number(cursor)) socket.send(JSON.stringify(event));
    clients.add(socket);
    socket.on('close', () => clients.delete(socket));
    socket.on('error', () => clients.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeJetstream = {
    url: `ws://127.0.0.1:${port}/subscribe`,
    apiUrl: `http://127.0.0.1:${port}`,
    log: [],
    connections: [],
    profileLookups: 0,
    failProfiles: false,
    handles: new Map(),
    hostile: null,
    hostileConnections: [],
    open: () => clients.size,
    publish(event) {
      lastUs = Math.max(lastUs + 1, Date.now() * 1000);
      const full = { ...event, time_us: lastUs } as JetstreamEvent;
      fake.log.push(full);
      const frame = JSON.stringify(full);
      for (const socket of clients) socket.send(frame);
      return full;
    },
    post(did, text, options = {}) {
      seq += 1;
      const bytes = new TextEncoder();
      const facets = (options.facetTags ?? []).map((tag) => {
        const at = bytes.encode(text.slice(0, Math.max(0, text.indexOf(`#${tag}`)))).length;
        return { index: { byteStart: at, byteEnd: at + bytes.encode(`#${tag}`).length }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag }] };
      });
      const record: Record<string, unknown> = {
        $type: 'app.bsky.feed.post',
        text,
        createdAt: new Date().toISOString(),
        langs: ['en'],
        ...(facets.length && { facets }),
        ...(options.tags && { tags: options.tags }),
        ...(options.reply && { reply: { root: { uri: 'at://did:plc:x/app.bsky.feed.post/1', cid: 'c' }, parent: { uri: 'at://did:plc:x/app.bsky.feed.post/1', cid: 'c' } } }),
        ...(options.embed && { embed: options.embed }),
      };
      const rkey = options.rkey ?? `3k${String(seq).padStart(11, '0')}`;
      return fake.publish({ did, kind: 'commit', commit: { rev: `r${seq}`, operation: 'create', collection: 'app.bsky.feed.post', rkey, cid: `bafy${seq}`, record } });
    },
    drop() {
      for (const socket of clients) socket.terminate();
      clients.clear();
      for (const connection of fake.hostileConnections) connection.destroy();
    },
    async close() {
      fake.drop();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
