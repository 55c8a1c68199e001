/**
 * A real HTTP server on 127.0.0.1 standing in for an external API in connector tests: each
 * request is recorded (method, path with query, headers, body) and answered by `handler`.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createFetcher } from '../src/collect/fetch.ts';

export interface Recorded {
  method: string;
  /** Path and query as sent, e.g. `/users/x/videos?page=2`. */
  url: string;
  /** The parsed URL (against the server's base), for reading query parameters. */
  parsed: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** Never answer (for timeouts). */
  hang?: boolean;
}

export interface SourceServer {
  base: string;
  requests: Recorded[];
  /** Replaces the handler. */
  handle(handler: (req: Recorded) => Reply): void;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (a free port) answering with `handler`. */
export async function startSourceServer(handler: (req: Recorded) => Reply = () => ({ status: 404 })): Promise<SourceServer> {
  let current = handler;
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: Recorded = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        parsed: new URL(req.url ?? '/', 'http://127.0.0.1'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const reply = current(recorded);
      if (reply.hang) return;
      const raw = reply.body === undefined ? '' : typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body);
      const type = typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? 'text/plain' : 'application/json; charset=utf-8';
      res.writeHead(reply.status ?? 200, { 'content-type': type, ...reply.headers });
      res.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    handle(h) {
      current = h;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A connector test file's source server and guarded fetcher: the server starts before the file's
 * tests (answering 404 until a test calls `handle`), its requests are cleared before each test,
 * and both are closed after all. `timeoutMs` is the fetcher's time limit.
 */
export function useSourceServer(timeoutMs?: number): SourceServer & { fetcher: ReturnType<typeof testFetcher> } {
  let started: SourceServer | undefined;
  const server = {
    base: '',
    requests: [] as Recorded[],
    fetcher: testFetcher(timeoutMs),
    handle: (handler: (req: Recorded) => Reply) => started!.handle(handler),
    close: async () => started?.close(),
  };
  beforeAll(async () => {
    started = await startSourceServer();
    server.base = started.base;
    server.requests = started.requests;
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await server.close();
    await server.fetcher.close();
  });
  return server;
}

/** The guarded fetcher as tests use it: private addresses allowed, a short time limit when asked. */
export const testFetcher = (timeoutMs?: number) => createFetcher({ allowPrivate: true, ...(timeoutMs && { timeoutMs }) });

/** A fixture under test/fixtures, parsed as JSON. */
export const fixtureJson = (path: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8'));
/** A fixture under test/fixtures, as text. */
export const fixtureText = (path: string): string => readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');

/**
 * The failure classes every API connector must show (issue 7 "Show"): runs `collect` against
 * `server` answering each case and checks the SourceError (or FetchError for a timeout).
 * `now` is the poll time `collect` is given (epoch ms).
 */
export const failureCases = (now: number): Array<{ name: string; reply: Reply; permanent: boolean; retryAfterMs: number | undefined }> => [
  { name: '429 with Retry-After', reply: { status: 429, headers: { 'retry-after': '120' }, body: {} }, permanent: false, retryAfterMs: 120_000 },
  { name: '429 with x-ratelimit-reset (epoch s)', reply: { status: 429, headers: { 'x-ratelimit-reset': String(now / 1000 + 300) }, body: {} }, permanent: false, retryAfterMs: 300_000 },
  { name: '429 with x-ratelimit-reset (ISO, Mastodon)', reply: { status: 429, headers: { 'x-ratelimit-reset': new Date(now + 90_000).toISOString() }, body: {} }, permanent: false, retryAfterMs: 90_000 },
  { name: '429 with ratelimit-reset (Bluesky)', reply: { status: 429, headers: { 'ratelimit-reset': String(now / 1000 + 60) }, body: {} }, permanent: false, retryAfterMs: 60_000 },
  { name: '401', reply: { status: 401, body: { error: 'unauthorized' } }, permanent: true, retryAfterMs: undefined },
  { name: '403', reply: { status: 403, body: { error: 'forbidden' } }, permanent: true, retryAfterMs: undefined },
  { name: '500', reply: { status: 500, body: 'oops' }, permanent: false, retryAfterMs: undefined },
  { name: '502', reply: { status: 502, body: '' }, permanent: false, retryAfterMs: undefined },
  { name: 'malformed JSON', reply: { status: 200, body: '{"data": [' }, permanent: false, retryAfterMs: undefined },
];
