/**
 * What a bounded stream listener does with a server that sends one frame over its bound
 * (test/hostile-websocket.ts `oversized`), checked the same way for Jetstream and Twitch chat
 * (test/http/jetstream.test.ts, test/http/twitch-chat.test.ts). Apart from hostile-websocket.ts,
 * which the fake servers import outside vitest too (bench/freshness-jetstream.ts).
 */
import { expect } from 'vitest';
import { type HostileConnection, OVERSIZED_BYTES } from './hostile-websocket.ts';
import { until } from './processes.ts';

/**
 * Starts a stream listener (`listen`) against a fake whose connections are `oversized`, and checks
 * what a bounded listener does (src/services/kit/stream/websocket.ts): the first connection is
 * closed at the frame's header (less than 16 MiB of the 100 MiB announced taken), `lastError` names
 * the bound (`maxMessageBytes`), a second connection follows after at least the first back-off
 * (`firstBackoffMs`, a lower bound only: load can only make the gap longer), and the process's
 * buffers grow by less than 32 MiB meanwhile. Returns the listener, still running.
 */
export async function expectOversizedRefused<L extends { status(): { lastError: string | null } }>(
  fake: { hostileConnections: HostileConnection[] },
  listen: () => L,
  maxMessageBytes: number,
  firstBackoffMs: number,
): Promise<L> {
  // The process's buffers (undici's frame buffer among them), sampled while the server sends.
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 10);
  const listener = listen();
  try {
    const [first, second] = await until('a second connection after the refused frame', () => (fake.hostileConnections.length >= 2 ? fake.hostileConnections : undefined), 10_000);
    await until('the first connection closed', () => (first!.closed ? true : undefined), 10_000);
    expect(listener.status().lastError).toMatch(new RegExp(`message over ${maxMessageBytes} bytes refused`));
    expect(first!.bytesSent).toBeLessThan(16 * 1024 * 1024);
    expect(first!.bytesSent).toBeLessThan(OVERSIZED_BYTES);
    expect(second!.openedAt - first!.closedAt!).toBeGreaterThanOrEqual(firstBackoffMs - 50);
  } finally {
    clearInterval(sampler);
  }
  expect(peak - before).toBeLessThan(32 * 1024 * 1024);
  return listener;
}
