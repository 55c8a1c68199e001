/**
 * A fake external API (a vendor's API, authorization or token endpoint) for connector and connect
 * tests: a real HTTP server on 127.0.0.1 that records every request (method, path, query, headers
 * and body, the body also read as a form) and answers with what `respond` returns; plus fixture
 * reading.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createFetcher } from '../src/collect/fetch.ts';

/** A request the fake received, recorded once its body has been read. */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text ('' when there is none). */
  body: string;
  /** The body read as `application/x-www-form-urlencoded` (an OAuth token request's parameters). */
  form: URLSearchParams;
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

/**
 * Starts the server on a free port of 127.0.0.1: `base` is its origin (`http://127.0.0.1:<port>`),
 * `requests` what it received in order (a test empties it as it likes), `close()` ends its
 * connections and stops it. `respond` may be replaced between polls through the returned field.
 */
export async function fakeApi(respond: (req: FakeRequest) => FakeResponse): Promise<FakeApi> {
  const api: FakeApi = { base: '', requests: [], respond, close: async () => {} };
  await listen(api);
  return api;
}

/**
 * A test file's fake server (`fakeApi`): it starts before the file's tests, its requests are
 * cleared after each test, and it is closed after all. Unhandled paths answer 404 until a test
 * sets `respond`.
 */
export function useFakeServer(respond: (req: FakeRequest) => FakeResponse = () => ({ status: 404, body: {} })): FakeApi {
  const api: FakeApi = { base: '', requests: [], respond, close: async () => {} };
  beforeAll(() => listen(api));
  afterEach(() => {
    api.requests.length = 0;
  });
  afterAll(() => api.close());
  return api;
}

/**
 * A connector test file's fake API (`useFakeServer`) and guarded fetcher (private addresses
 * allowed, 1 s limit), closed after all the file's tests.
 */
export function useFakeApi(respond?: (req: FakeRequest) => FakeResponse) {
  const api = Object.assign(useFakeServer(respond), { fetcher: createFetcher({ allowPrivate: true, timeoutMs: 1000 }) });
  afterAll(() => api.fetcher.close());
  return api;
}

async function listen(api: FakeApi): Promise<void> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = Buffer.concat(chunks).toString('utf8');
      const request = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: text, form: new URLSearchParams(text) };
      api.requests.push(request);
      const { status = 200, headers = {}, body } = api.respond(request);
      if (body === undefined) return; // never answers
      const json = typeof body === 'object' && !(body instanceof Uint8Array);
      res.writeHead(status, { 'content-type': json ? 'application/json' : 'text/plain', ...headers });
      res.end(json ? JSON.stringify(body) : (body as string | Uint8Array));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
