/**
 * The connection to one Mastodon stream against a real SSE server on 127.0.0.1, opened through
 * the collector's guarded `open` (docs/services.md#mastodon-streaming): events read across chunks,
 * a silent stream ended, an oversized event refused, an abort honoured; reconnects after an error
 * answer and after the server closes, and a refusal (401) that ends the listening.
 */
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../../../collect/fetch.ts';
import { keepConnected, MAX_EVENT_BYTES, readEvents } from './connection.ts';

/** Each request answered by the next script (a function of the response), the last one repeated. */
let scripts: ((res: ServerResponse) => void)[] = [];
let requests = 0;
let server: Server;
let base: string;
const fetcher = createFetcher({ allowPrivate: true });
const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });

beforeAll(async () => {
  server = createServer((_req, res) => scripts[Math.min(requests++, scripts.length - 1)]!(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await fetcher.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function read(script: (res: ServerResponse) => void, { idleMs = 5000, signal = AbortSignal.timeout(10_000) } = {}) {
  scripts = [script];
  requests = 0;
  const res = await fetcher.open(`${base}/api/v1/streaming/public/local`, {}, signal);
  const events: Pick<EventSourceMessage, 'event' | 'data'>[] = [];
  const outcome = await readEvents(res.body!, ({ event, data }) => events.push({ event, data }), { idleMs, signal }).then(() => 'ended', (error: unknown) => error);
  return { events, outcome };
}

describe('readEvents', () => {
  it('reads events split across chunks, comments and heartbeats skipped, until the stream ends', async () => {
    const { events, outcome } = await read((res) => {
      sse(res).write(':thump\n\nevent: upd');
      setTimeout(() => res.write('ate\ndata: {"id":"1"}\n\nevent: delete\ndata: 1\n\n'), 20);
      setTimeout(() => res.end('event: status.update\ndata: {"id":"1",\ndata: "x":1}\n\n'), 40);
    });
    expect(outcome).toBe('ended');
    expect(events).toEqual([
      { event: 'update', data: '{"id":"1"}' },
      { event: 'delete', data: '1' },
      { event: 'status.update', data: '{"id":"1",\n"x":1}' },
    ]);
  });

  it('ends a stream silent for idleMs (the server keeps it open)', async () => {
    const { events, outcome } = await read((res) => void sse(res).write('event: update\ndata: {}\n\n'), { idleMs: 200 });
    expect(outcome).toBe('ended');
    expect(events).toHaveLength(1);
  });

  it('refuses an event over MAX_EVENT_BYTES without holding it (the attack: one endless event)', async () => {
    const { events, outcome } = await read((res) => {
      sse(res).write('event: update\ndata: ');
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const more = () => { if (!res.destroyed && sent <= MAX_EVENT_BYTES) { sent += chunk.length; res.write(chunk, more); } };
      more();
    });
    expect(events).toEqual([]);
    expect((outcome as { type?: string }).type).toBe('max-buffer-size-exceeded');
  });

  it('stops reading when its signal aborts', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const { outcome } = await read((res) => void sse(res).write(':open\n\n'), { signal: abort.signal });
    expect(outcome).toBe('ended');
  });
});

describe('keepConnected', () => {
  function run(refusedStatus?: number) {
    const abort = new AbortController();
    const log: string[] = [];
    const done = keepConnected(
      {
        open: (signal) => fetcher.open(`${base}/api/v1/streaming/hashtag?tag=hoot`, {}, signal),
        refused: (status) => {
          log.push(`refused ${status}`);
          return status === refusedStatus;
        },
        connected: async () => void log.push('connected'),
        event: (message) => {
          log.push(`event ${message.data}`);
          if (log.filter((line) => line.startsWith('event')).length === 2) abort.abort();
        },
        lost: (error) => void log.push(error ? `lost: ${(error as Error).message}` : 'lost'),
      },
      { host: 'instance.test', signal: abort.signal, idleMs: 5000, reconnect: { minMs: 10, maxMs: 20 } },
    );
    return { done, log };
  }

  it('reconnects after an error answer and after the server closes, until aborted', async () => {
    requests = 0;
    scripts = [
      (res) => res.writeHead(502).end(),
      (res) => sse(res).end('event: update\ndata: 1\n\n'),
      (res) => void sse(res).write('event: update\ndata: 2\n\n'),
    ];
    const { done, log } = run();
    await done;
    expect(log).toEqual(['refused 502', 'lost: instance.test answered HTTP 502 to the stream', 'connected', 'event 1', 'lost', 'connected', 'event 2', 'lost']);
  });

  it('stops for good when the answer is refused (an instance that wants a token)', async () => {
    requests = 0;
    scripts = [(res) => res.writeHead(401).end()];
    const { done, log } = run(401);
    await done;
    expect(log).toEqual(['refused 401', 'lost']);
    expect(requests).toBe(1);
  });
});
