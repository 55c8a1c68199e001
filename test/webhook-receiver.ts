/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request and
 * verifies its signature with the `standardwebhooks` package (Standard Webhooks), as an
 * integrator's receiver would. `answer` decides each reply: a status, or `hang` (never answer,
 * for timeouts); it may be replaced at any time.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified payload `{type, timestamp, data}`, or undefined when the signature did not verify. */
  event: { type: string; timestamp: string; data: Record<string, any> } | undefined;
  /** What the receiver answered: a status, or `hang`. */
  answered: number | 'hang';
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The secret each path's requests are verified with (set after the webhook is created). */
  secrets: Map<string, string>;
  answer: (request: { path: string; index: number }) => number | 'hang';
  /** The requests answered with a 2xx. */
  delivered(path?: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    secrets: new Map(),
    answer: () => 204,
    delivered: (path) => receiver.received.filter((r) => typeof r.answered === 'number' && r.answered < 300 && (!path || r.path === path)),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const secret = receiver.secrets.get(path);
      let event: Received['event'];
      try {
        event = secret ? (new Webhook(secret).verify(body, req.headers as Record<string, string>) as Received['event']) : undefined;
      } catch {
        event = undefined;
      }
      const answered = receiver.answer({ path, index: receiver.received.length });
      receiver.received.push({ path, headers: req.headers, body, event, answered });
      if (answered === 'hang') return;
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered < 300 ? 'thanks' : 'try again later');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
