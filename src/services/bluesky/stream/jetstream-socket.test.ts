/**
 * The Jetstream connection (`jetstream-socket.ts`) against a real WebSocket server on 127.0.0.1:
 * JSON text frames handed over as objects (others skipped), a close said once, nothing after
 * `close()`, and the guard refusing a private address.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createGuardedAgent, type FetchError } from '../../../collect/fetch.ts';
import type { Json } from '../../kit/normalize.ts';
import { openJetstreamSocket } from './jetstream-socket.ts';

/** What the handlers heard, in order. */
type Heard = ['open'] | ['event', Json] | ['drop', 'error' | 'close'];

const servers: WebSocketServer[] = [];
afterEach(async () => {
  while (servers.length) await new Promise((done) => servers.pop()!.close(done));
});

/** A server that sends `frames` to each connection, then closes it when `closeAfter`. */
async function serve(frames: (string | Buffer)[], closeAfter: boolean): Promise<string> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(server);
  server.on('connection', (ws) => {
    for (const frame of frames) ws.send(frame);
    if (closeAfter) ws.close();
  });
  await new Promise((done) => server.once('listening', done));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/subscribe`;
}

/** Opens a connection to `href`; resolves what was heard once it dropped (or `until` says so). */
function listen(href: string, allowPrivate: boolean, until: (heard: Heard[]) => boolean = () => false) {
  const heard: Heard[] = [];
  let refused: FetchError | undefined;
  const agent = createGuardedAgent({ allowPrivate, onBlocked: (error) => (refused = error) });
  return new Promise<{ heard: Heard[]; refused?: FetchError; failure: { error: unknown } | null }>((resolve) => {
    const socket = openJetstreamSocket(href, agent, {
      onOpen: () => heard.push(['open']),
      onEvent: (event) => {
        heard.push(['event', event]);
        if (until(heard)) {
          socket.close();
          setTimeout(() => resolve({ heard, refused, failure: null }), 200);
        }
      },
      onDrop: (failure) => {
        heard.push(['drop', failure ? 'error' : 'close']);
        resolve({ heard, refused, failure });
      },
    });
  }).finally(() => agent.close());
}

describe('openJetstreamSocket', () => {
  it('hands JSON text frames over as objects, skips other frames, and says a close once', async () => {
    const href = await serve(['{"kind":"commit","time_us":1}', 'not json', Buffer.from('{"binary":true}'), '[1,2]', '{"kind":"identity"}'], true);
    const { heard } = await listen(href, true);
    expect(heard).toEqual([['open'], ['event', { kind: 'commit', time_us: 1 }], ['event', {}], ['event', { kind: 'identity' }], ['drop', 'close']]);
  });

  it('says nothing more after close()', async () => {
    const href = await serve(['{"n":1}', '{"n":2}', '{"n":3}'], false);
    const { heard } = await listen(href, true, (h) => h.some(([kind]) => kind === 'event'));
    expect(heard).toEqual([['open'], ['event', { n: 1 }]]);
  });

  it('refuses a private address unless allowed: a failure, never an open', async () => {
    const href = await serve(['{"n":1}'], false);
    const { heard, refused } = await listen(href, false);
    expect(heard).toEqual([['drop', 'error']]);
    expect(refused?.message).toMatch(/address/i);
  });
});
