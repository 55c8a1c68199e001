/**
 * What a bounded stream listener does with a server that sends one frame over its bound, or never
 * answers the handshake (test/hostile-websocket.ts), checked the same way for Jetstream and Twitch chat
 * (test/http/jetstream.test.ts, test/http/twitch-chat.test.ts). Apart from hostile-websocket.ts,
 * which the fake servers import outside vitest too (bench/freshness-jetstream.ts).
 */
import { expect } from 'vitest';
import { backoffMs } from '../src/services/kit/stream/websocket.ts';
import { type HostileConnection, OVERSIZED_BYTES } from './hostile-websocket.ts';
import { until } from './processes.ts';

/**
 * Starts a stream listener (`listen`) against a fake whose connections are `oversized`, and checks
 * what a bounded listener does (src/services/kit/stream/websocket.ts): the first connection is
 * closed at the frame's header (less than 16 MiB of the 100 MiB announced taken), `lastError` names
 * the bound (`maxMessageBytes`), a second connection follows after at least the first back-off,
 * and a third after at least the second: a connection refused as soon as it opened does not
 * start the back-off again (websocket.ts `dropsInARow`; lower bounds only, load can only make the
 * gaps longer); the process's buffers grow by less than 32 MiB meanwhile. Returns the listener,
 * still running.
 */
export async function expectOversizedRefused<L extends { status(): { lastError: string | null } }>(
  fake: { hostileConnections: HostileConnection[] },
  listen: () => L,
  maxMessageBytes: number,
): Promise<L> {
  // The process's buffers (undici's frame buffer among them), sampled while the server sends.
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 10);
  const listener = listen();
  try {
    const [first, second, third] = await until('a third connection after two refused frames', () => (fake.hostileConnections.length >= 3 ? fake.hostileConnections : undefined), 10_000);
    await until('the first two connections closed', () => (first!.closed && second!.closed ? true : undefined), 10_000);
    expect(listener.status().lastError).toMatch(new RegExp(`message over ${maxMessageBytes} bytes refused`));
    expect(first!.bytesSent).toBeLessThan(16 * 1024 * 1024);
    expect(first!.bytesSent).toBeLessThan(OVERSIZED_BYTES);
    expect(second!.openedAt - first!.closedAt!).toBeGreaterThanOrEqual(backoffMs(0) - 50);
    expect(third!.openedAt - second!.closedAt!).toBeGreaterThanOrEqual(backoffMs(1) - 50);
  } finally {
    clearInterval(sampler);
  }
  expect(peak - before).toBeLessThan(32 * 1024 * 1024);
  return listener;
}

/**
 * Checks what a bounded listener does with a server that accepts the connection and never
 * answers the opening handshake (test/hostile-websocket.ts `silent`), the listener started with a
 * handshake bound of 300 ms: the first attempt is given up and closed by the client, a second one
 * follows, well under undici's 300 s headers timeout (the only bound before), and `lastError`
 * names the bound.
 */
export async function expectSilentGivenUp(fake: { hostileConnections: HostileConnection[] }, listener: { status(): { lastError: string | null; connected: boolean } }): Promise<void> {
  const [first] = await until('a second attempt after the first was given up', () => (fake.hostileConnections.length >= 2 ? fake.hostileConnections : undefined), 10_000);
  await until('the first connection closed by the client', () => (first!.closed ? true : undefined), 10_000);
  expect(listener.status().lastError).toMatch(/opening handshake did not finish within 300 ms/);
  expect(listener.status().connected).toBe(false);
}
