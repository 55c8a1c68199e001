/**
 * A fake external API for connector tests: a real HTTP server on 127.0.0.1 that answers with
 * what `respond` returns and records every request (path, query, headers), plus fixture reading.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createFetcher } from '../src/collect/fetch.ts';

export interface FakeRequest {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or bytes as they are; undefined never answers (a hang). */
  body?: unknown;
}

/** Reads `test/fixtures/<service>/<file>` as bytes. */
export const fixtureBytes = (service: string, file: string) =>
  readFileSync(new URL(`./fixtures/${service}/${file}`, import.meta.url));

/** Reads and parses a JSON fixture. */
export const fixtureJson = (service: string, file: string): any => JSON.parse(fixtureBytes(service, file).toString('utf8'));

export type FakeApi = { base: string; requests: FakeRequest[]; respond: (req: FakeRequest) => FakeResponse; close(): Promise<void> };

/** Starts the server; `respond` may be replaced between polls through the returned `respond` field. */
export async function fakeApi(respond: (req: FakeRequest) => FakeResponse): Promise<FakeApi> {
  const api: FakeApi = { base: '', requests: [], respond, close: async () => {} };
  await listen(api);
  return api;
}

/**
 * A connector test file's fake API and guarded fetcher (private addresses allowed, 1 s limit):
 * the server starts before the file's tests, its requests are cleared after each test, and both
 * are closed after all. Unhandled paths answer 404 until a test sets `respond`.
 */
export function useFakeApi(respond: (req: FakeRequest) => FakeResponse = () => ({ status: 404, body: {} })) {
  const api: FakeApi & { fetcher: ReturnType<typeof createFetcher> } = {
    base: '',
    requests: [],
    respond,
    close: async () => {},
    fetcher: createFetcher({ allowPrivate: true, timeoutMs: 1000 }),
  };
  beforeAll(() => listen(api));
  afterEach(() => {
    api.requests.length = 0;
  });
  afterAll(async () => {
    await api.close();
    await api.fetcher.close();
  });
  return api;
}

async function listen(api: FakeApi): Promise<void> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const request = { path: url.pathname, query: url.searchParams, headers: req.headers };
    api.requests.push(request);
    const { status = 200, headers = {}, body } = api.respond(request);
    if (body === undefined) return; // never answers
    const json = typeof body === 'object' && !(body instanceof Uint8Array);
    res.writeHead(status, { 'content-type': json ? 'application/json' : 'text/plain', ...headers });
    res.end(json ? JSON.stringify(body) : (body as string | Uint8Array));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
