/**
 * The hostile WebSocket servers the fakes (test/fake-jetstream.ts, test/fake-twitch-chat.ts) turn
 * into on demand, answering an upgrade request by hand on its raw socket:
 *
 * - `silent`: the TCP connection is accepted and the upgrade request never answered (a server that
 *   would hold a client for undici's 300 s headers timeout);
 * - `oversized`: the handshake completes (RFC 6455 §4.2.2), then one text frame announces
 *   {@link OVERSIZED_BYTES} and its payload (spaces) is written as fast as the client reads it,
 *   until the client closes or it is all sent; `bytesSent` says how much the client took.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** The payload the `oversized` server announces and sends at most: 100 MiB. */
export const OVERSIZED_BYTES = 100 * 1024 * 1024;

export type Hostility = 'silent' | 'oversized';

/** One connection to a hostile server. */
export interface HostileConnection {
  hostility: Hostility;
  /** Payload bytes of the oversized frame handed to the socket (what the client took, give or take the socket buffers). */
  bytesSent: number;
  /** The TCP connection is closed (by either side). */
  closed: boolean;
  /** When the server accepted it, and when it closed (epoch ms). */
  openedAt: number;
  closedAt: number | null;
  /** Cuts it. */
  destroy(): void;
}

/** The GUID of RFC 6455 §1.3 that the `Sec-WebSocket-Accept` answer hashes with the key. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Answers the upgrade request `req` on `socket` as `hostility` says (see the module). */
export function serveHostile(hostility: Hostility, req: IncomingMessage, socket: Duplex): HostileConnection {
  const connection: HostileConnection = { hostility, bytesSent: 0, closed: false, openedAt: Date.now(), closedAt: null, destroy: () => socket.destroy() };
  const closed = () => {
    if (connection.closed) return;
    connection.closed = true;
    connection.closedAt = Date.now();
  };
  socket.on('close', closed);
  socket.on('error', closed);
  // Reads (and drops) what the client sends, so that its closing the connection is seen; the
  // HTTP server allows half-open sockets, so the client's end closes this side too.
  socket.on('end', () => socket.destroy());
  socket.resume();
  if (hostility === 'silent') return connection;
  const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}${WEBSOCKET_GUID}`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  // FIN + text (0x81), unmasked, 64-bit payload length (RFC 6455 §5.2).
  const header = Buffer.alloc(10);
  header[0] = 0x81;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(OVERSIZED_BYTES), 2);
  socket.write(header);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const pump = () => {
    // Bounded: at most OVERSIZED_BYTES / 64 KiB writes, each waiting for the client to read.
    while (!connection.closed && connection.bytesSent < OVERSIZED_BYTES) {
      const n = Math.min(chunk.length, OVERSIZED_BYTES - connection.bytesSent);
      connection.bytesSent += n;
      if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void socket.once('drain', pump);
    }
  };
  pump();
  return connection;
}
