/**
 * Real-browser set-up: Chromium driven by playwright-core (no browser download; which Chromium:
 * chromium.ts, docs/operations.md#tests), a Sluice server listening on 127.0.0.1 (port 0), and an
 * "embedding site" on another local port, so the publication runs cross-origin exactly as on a
 * customer's site. Nothing leaves loopback.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createConnection, createServer as createTcpServer, type Socket } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { inject } from 'vitest';
import { build, buildTenant } from '../helper.ts';
import type { ChromiumFound } from './chromium.ts';

// Undefined only under a vitest config without the globalSetup (test/browser/chromium.ts).
const resolved = inject('chromium') ?? { missing: 'No Chromium resolved: run the browser tests with a vitest config whose globalSetup is test/browser/chromium.ts.' };

/**
 * Set when this machine has no Chromium (the line saying what to install, printed once by the
 * run): each browser test file wraps its tests in `describe.skipIf(browserMissing)`.
 */
export const browserMissing: string | undefined = 'missing' in resolved ? resolved.missing : undefined;

/** Chromium's switches for the tests; the npm package's own (`--single-process`, `--disable-web-security`...) would change what the tests check. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A headless Chromium, the one the run resolved (chromium.ts). Throws when there is none (`browserMissing`). */
export async function launch(): Promise<Browser> {
  if ('missing' in resolved) throw new Error(resolved.missing);
  const found: ChromiumFound = resolved;
  return chromium.launch({ executablePath: found.executablePath, args: ARGS, env: { ...process.env, ...found.env } });
}

/** A listening Sluice with one tenant; closed after the test by the helper. */
export async function serve(env: Record<string, string> = {}) {
  const ctx = await build(env);
  const tenant = await buildTenant(ctx.db);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const wallUrl = (layout = 'grid') => `${origin}/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}&layout=${layout}`;
  return { ...ctx, tenant, origin, wallUrl };
}

/** A site on its own port whose page embeds the publication with embed.js. */
export async function embeddingSite(sluiceOrigin: string, contract: string, q: string, layout = 'grid'): Promise<{ url: string; close: () => Promise<void> }> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Customer site</title></head>
<body><h1 id="site-title">Customer site</h1>
<div id="wall" data-sluice-contract="${contract}" data-sluice-q="${q}" data-sluice-layout="${layout}"></div>
<p id="site-footer">Footer of the customer site</p>
<script src="${sluiceOrigin}/v1/embed.js"></script></body></html>`;
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * A TCP relay on 127.0.0.1 in front of `origin`: a screen's network. `cut()` drops every open
 * connection and refuses new ones (as a pulled cable would: Chromium's offline emulation,
 * `context.setOffline`, fails new requests but leaves an open stream flowing), `restore()` lets
 * them through again; `close()` after the test.
 */
export async function networkRelay(origin: string): Promise<{ origin: string; cut: () => void; restore: () => void; close: () => Promise<void> }> {
  const target = new URL(origin);
  const sockets = new Set<Socket>();
  let down = false;
  const server = createTcpServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
