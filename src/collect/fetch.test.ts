import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, FetchError, isAllowedAddress } from './fetch.ts';

// Every server here listens on 127.0.0.1; no test makes a connection anywhere else.

interface TestServer {
  port: number;
  requests: number;
  connections: number;
  close(): Promise<void>;
}

async function startServer(handler: http.RequestListener): Promise<TestServer> {
  const server = http.createServer(handler);
  const state: TestServer = {
    port: 0,
    requests: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  server.on('request', () => state.requests++);
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  return state;
}

async function fetchError(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    return err as FetchError;
  }
  throw new Error('expected the fetch to fail');
}

describe('isAllowedAddress', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.1', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd00:ec2::254', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:169.254.169.254', false],
    ['not an address', false],
    ['', false],
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700::1111', true],
    ['::ffff:8.8.8.8', true],
  ])('%s → %s', (address, allowed) => {
    expect(isAllowedAddress(address)).toBe(allowed);
  });
});

describe('createFetcher with allowPrivate false', () => {
  let server: TestServer;
  const fetcher = createFetcher({ allowPrivate: false });

  beforeAll(async () => {
    server = await startServer((_req, res) => res.end('secret'));
  });
  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it.each([
    'http://127.0.0.1:PORT/',
    'http://localhost:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://0x7f000001:PORT/',
    'http://0177.0.0.1:PORT/',
  ])('refuses %s', async (template) => {
    const url = template.replace('PORT', String(server.port));
    const err = await fetchError(fetcher(`${url}path?token=hidden`));
    expect(err.kind).toBe('blocked');
    expect(err.message).not.toContain('token');
    expect(err.message).not.toContain('path');
    expect(server.requests).toBe(0);
    expect(server.connections).toBe(0);
  });

  it('refuses a non-http scheme', async () => {
    expect((await fetchError(fetcher('file:///etc/passwd'))).kind).toBe('protocol');
  });
});

describe('createFetcher with allowPrivate true', () => {
  let server: TestServer;
  let hanging: TestServer;
  let base: string;
  const big = 'x'.repeat(5000);
  const fetcher = createFetcher({ allowPrivate: true, maxBytes: 1000, timeoutMs: 300 });
  let lastHeaders: http.IncomingHttpHeaders = {};

  beforeAll(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      lastHeaders = req.headers;
      const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
      if (chain) {
        const n = Number(chain[1]);
        res.writeHead(302, { location: n > 1 ? `/chain/${n - 1}` : '/ok' }).end();
        return;
      }
      switch (url.pathname) {
        case '/ok':
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Custom': 'Yes' }).end('hello');
          return;
        case '/missing':
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
          return;
        case '/not-modified':
          res.writeHead(304, { etag: '"v1"' }).end();
          return;
        case '/absolute-redirect':
          res.writeHead(301, { location: `http://127.0.0.1:${server.port}/ok` }).end();
          return;
        case '/to-file':
          res.writeHead(302, { location: 'file:///etc/passwd' }).end();
          return;
        case '/to-ftp':
          res.writeHead(307, { location: 'ftp://127.0.0.1/file' }).end();
          return;
        case '/big-length':
          res.writeHead(200, { 'content-length': String(big.length) }).end(big);
          return;
        case '/big-chunked':
          // No Content-Length: sent chunked, in several writes.
          res.writeHead(200, { 'content-type': 'text/plain' });
          for (let i = 0; i < 5; i++) res.write(big.slice(i * 1000, (i + 1) * 1000));
          res.end();
          return;
        case '/slow-body':
          // Headers and part of the body, then nothing.
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return;
        case '/gzip': {
          const encoded = zlib.gzipSync(Buffer.from('compressed hello'));
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(encoded.length) }).end(encoded);
          return;
        }
        case '/gzip-bomb': {
          // Small on the wire, larger than maxBytes once decoded.
          const encoded = zlib.gzipSync(Buffer.alloc(100_000));
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(encoded.length) }).end(encoded);
          return;
        }
        default:
          res.writeHead(500).end();
      }
    });
    hanging = await startServer(() => {
      // Never answers.
    });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await fetcher.close();
    await server.close();
    await hanging.close();
  });

  it('returns a 200 with body, lower-case headers and the URL', async () => {
    const res = await fetcher(`${base}/ok`, { 'If-None-Match': '"v0"' });
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(res.body)).toBe('hello');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-custom']).toBe('Yes');
    expect(res.url).toBe(`${base}/ok`);
    expect(lastHeaders['user-agent']).toMatch(/^Sluice\//);
    expect(lastHeaders['if-none-match']).toBe('"v0"');
  });

  it('sends a custom User-Agent', async () => {
    const custom = createFetcher({ allowPrivate: true, userAgent: 'Test/1.0' });
    try {
      await custom(`${base}/ok`);
      expect(lastHeaders['user-agent']).toBe('Test/1.0');
    } finally {
      await custom.close();
    }
  });

  it('returns a 404 instead of throwing', async () => {
    const res = await fetcher(`${base}/missing`);
    expect(res.status).toBe(404);
    expect(new TextDecoder().decode(res.body)).toBe('not here');
  });

  it('returns a 304 instead of following it', async () => {
    const res = await fetcher(`${base}/not-modified`);
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe('"v1"');
    expect(res.body.byteLength).toBe(0);
  });

  it('follows redirects and reports the final URL', async () => {
    const absolute = await fetcher(`${base}/absolute-redirect`);
    expect(absolute.status).toBe(200);
    expect(absolute.url).toBe(`${base}/ok`);

    const five = await fetcher(`${base}/chain/5`);
    expect(five.status).toBe(200);
    expect(new TextDecoder().decode(five.body)).toBe('hello');
    expect(five.url).toBe(`${base}/ok`);
  });

  it('fails a chain of 6 redirects', async () => {
    expect((await fetchError(fetcher(`${base}/chain/6`))).kind).toBe('redirects');
  });

  it.each(['/to-file', '/to-ftp'])('fails a redirect to a non-http scheme (%s)', async (path) => {
    expect((await fetchError(fetcher(`${base}${path}`))).kind).toBe('protocol');
  });

  it.each(['/big-length', '/big-chunked', '/gzip-bomb'])('fails a body over maxBytes (%s)', async (path) => {
    const err = await fetchError(fetcher(`${base}${path}`));
    expect(err.kind).toBe('too_large');
    expect(err.message).toContain(`127.0.0.1:${server.port}`);
  });

  it('decodes a gzip body', async () => {
    const res = await fetcher(`${base}/gzip`);
    expect(new TextDecoder().decode(res.body)).toBe('compressed hello');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(lastHeaders['accept-encoding']).toContain('gzip');
  });

  it('times out when the server never answers', async () => {
    const started = Date.now();
    const err = await fetchError(fetcher(`http://127.0.0.1:${hanging.port}/`));
    expect(err.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(hanging.requests).toBe(1);
  });

  it('times out when the body never ends', async () => {
    expect((await fetchError(fetcher(`${base}/slow-body`))).kind).toBe('timeout');
  });
});
