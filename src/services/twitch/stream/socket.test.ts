/**
 * The chat connection (`socket.ts`) against the local fake chat server (test/fake-twitch-chat.ts):
 * its JOINs paced by the limit (a small limit here: what is asserted is how the channels are
 * split into JOINs, never a time), and a refused login dropping the connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { type FakeTwitchChat, startFakeTwitchChat } from '../../../../test/fake-twitch-chat.ts';
import { until } from '../../../../test/processes.ts';
import { openChatSocket } from './socket.ts';

let fake: FakeTwitchChat | undefined;
const agent = new Agent();
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const noop = { onOpen() {}, onMessage() {}, onDrop() {} };

describe('openChatSocket', () => {
  it('joins at most the limit per window: 5 channels at 2 a window are three JOINs', async () => {
    fake = await startFakeTwitchChat();
    const socket = openChatSocket(fake.url, agent, noop, { joinLimit: 2, joinWindowMs: 200 });
    socket.join(['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']);
    socket.join(['aaaa']); // already waiting: not twice
    const joins = await until('every channel joined', () => {
      const lines = fake!.connections[0]?.lines.filter((l) => l.startsWith('JOIN')) ?? [];
      return lines.length === 3 ? lines : undefined;
    }, 10_000);
    expect(joins).toEqual(['JOIN #aaaa,#bbbb', 'JOIN #cccc,#dddd', 'JOIN #eeee']);
    socket.close();
  });

  it('keeps every JOIN and PART line within the 512 characters of an IRC message (RFC 1459 §2.3, CR LF included)', async () => {
    fake = await startFakeTwitchChat();
    // 20 logins of the longest form (25 characters): in one line, `JOIN #…,#…` would be 544 characters.
    const channels = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(23)}`);
    const socket = openChatSocket(fake.url, agent, noop);
    socket.join(channels);
    const joined = await until('every channel joined', () => (channels.every((c) => fake!.connections[0]?.channels.has(c)) ? fake!.connections[0] : undefined), 10_000);
    socket.part(channels);
    await until('every channel parted', () => (joined.channels.size === 0 ? true : undefined), 10_000);
    const sent = joined.lines.filter((l) => /^(JOIN|PART) /.test(l));
    expect(sent.length).toBeGreaterThan(2);
    for (const line of sent) expect(line.length + 2).toBeLessThanOrEqual(512);
    socket.close();
  });

  it('a refused login (NOTICE *) drops the connection with the reason', async () => {
    fake = await startFakeTwitchChat();
    let dropped: { error: unknown } | null | undefined;
    openChatSocket(fake.url, agent, { ...noop, onDrop: (failure) => (dropped = failure) });
    await until('the connection', () => (fake!.open().length === 1 ? true : undefined), 10_000);
    fake.send(null, ':tmi.twitch.tv NOTICE * :Login authentication failed');
    await until('the drop', () => (dropped !== undefined ? true : undefined), 10_000);
    expect(String((dropped as { error: Error }).error.message)).toMatch(/refused the login: Login authentication failed/);
  });

});
