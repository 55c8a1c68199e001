/**
 * The outbound address guard (src/collect/fetch.ts): every IPv6 form of a private address is
 * judged by the IPv4 address it embeds, only global unicast is allowed, and a redirect to a
 * private address is refused before any connection to it. Servers listen on loopback only, and
 * the redirect targets are loopback addresses, so nothing leaves the machine even if the guard
 * were wrong.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, FetchError, isAllowedAddress } from './fetch.ts';

describe('isAllowedAddress: IPv6 forms judged by the IPv4 address they embed', () => {
  it.each([
    // IPv4-compatible, ::/96 (RFC 4291 §2.5.5.1)
    ['::7f00:1', false, '127.0.0.1'],
    ['::127.0.0.1', false, '127.0.0.1'],
    ['::a9fe:a9fe', false, '169.254.169.254'],
    ['::a00:1', false, '10.0.0.1'],
    ['::c0a8:101', false, '192.168.1.1'],
    ['::6440:1', false, '100.64.0.1'],
    ['::1', false, 'loopback'],
    ['::', false, 'unspecified'],
    ['::808:808', true, '8.8.8.8'],
    // IPv4-mapped, ::ffff:0:0/96 (RFC 4291 §2.5.5.2)
    ['::ffff:7f00:1', false, '127.0.0.1'],
    ['::ffff:127.0.0.1', false, '127.0.0.1'],
    ['::ffff:a9fe:a9fe', false, '169.254.169.254'],
    ['::ffff:ac10:1', false, '172.16.0.1'],
    ['::ffff:0:0', false, '0.0.0.0'],
    ['::ffff:8.8.8.8', true, '8.8.8.8'],
    // IPv4-translated, ::ffff:0:0:0/96 (RFC 2765)
    ['::ffff:0:7f00:1', false, '127.0.0.1'],
    ['::ffff:0:a00:1', false, '10.0.0.1'],
    ['::ffff:0:808:808', true, '8.8.8.8'],
    // NAT64 well-known prefix, 64:ff9b::/96 (RFC 6052)
    ['64:ff9b::7f00:1', false, '127.0.0.1'],
    ['64:ff9b::127.0.0.1', false, '127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', false, '169.254.169.254'],
    ['64:ff9b::c0a8:1', false, '192.168.0.1'],
    ['64:ff9b::808:808', true, '8.8.8.8'],
    // NAT64 local-use prefix, 64:ff9b:1::/48 (RFC 8215): never global
    ['64:ff9b:1::7f00:1', false, 'local-use NAT64'],
    ['64:ff9b:1::808:808', false, 'local-use NAT64'],
    ['64:ff9b:1:7f00:0:100::', false, 'local-use NAT64 (/48 layout)'],
    // 6to4, 2002::/16 (RFC 3056)
    ['2002:7f00:1::', false, '127.0.0.1'],
    ['2002:7f00:1::1', false, '127.0.0.1'],
    ['2002:a9fe:a9fe::1', false, '169.254.169.254'],
    ['2002:a00:1:1::1', false, '10.0.0.1'],
    ['2002:c0a8:101::', false, '192.168.1.1'],
    ['2002:808:808::1', true, '8.8.8.8'],
  ])('%s → %s (%s)', (address, allowed) => {
    expect(isAllowedAddress(address)).toBe(allowed);
  });
});

describe('isAllowedAddress: only global unicast IPv6', () => {
  it.each([
    ['2606:4700::1111', true],
    ['2a00:1450:4001:80b::200e', true],
    ['2001:4860:4860::8888', true],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['fc00::1', false],
    ['fd00:ec2::254', false],
    ['fec0::1', false],
    ['ff02::1', false],
    ['100::1', false], // discard (RFC 6666)
    ['::1:2:3:4', false], // in ::/64 but not ::/96: not global unicast
    ['4000::1', false], // outside 2000::/3
    ['5f00::1', false], // segment routing (RFC 9602)
    ['2001:db8::1', false], // documentation (RFC 3849)
    ['3fff::1', false], // documentation (RFC 9637)
    ['2001::1', false], // Teredo (RFC 4380)
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false],
    ['2001:2::1', false], // benchmarking (RFC 5180)
    ['2001:20::1', false], // ORCHIDv2 (RFC 7343)
    ['8.8.8.8', true],
    ['127.0.0.2', false],
    ['0.0.0.0', false],
    ['[::1]', false],
    ['::ffff:7f00:1:1', false], // not an address in any of the forms above, and not global
    ['', false],
  ])('%s → %s', (address, allowed) => {
    expect(isAllowedAddress(address)).toBe(allowed);
  });
});

interface Server {
  port: number;
  requests: number;
  connections: number;
  close(): Promise<void>;
}

async function listen(host: string, handler: http.RequestListener): Promise<Server> {
  const server = http.createServer(handler);
  const state: Server = {
    port: 0,
    requests: 0,
    connections: 0,
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    }),
  };
  server.on('request', () => state.requests++);
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  return state;
}

describe('a redirect to a private address', () => {
  let redirecting: Server;
  let internal: Server;
  // The guard as in production, except that the one redirecting server (127.0.0.1) is let through,
  // standing in for a public site.
  const fetcher = createFetcher({ allowPrivate: false, isAllowed: (address) => address === '127.0.0.1' || isAllowedAddress(address) });

  beforeAll(async () => {
    internal = await listen('127.0.0.2', (_req, res) => res.end('internal secret'));
    redirecting = await listen('127.0.0.1', (req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/ok') return void res.end('public');
      const target = url.searchParams.get('to') ?? '';
      res.writeHead(302, { location: target.replace('PORT', String(internal.port)).replace('SELF', String(redirecting.port)) }).end();
    });
  });
  afterAll(async () => {
    await fetcher.close();
    await redirecting.close();
    await internal.close();
  });

  it('is followed when it leads to an allowed address (the control)', async () => {
    const res = await fetcher(`http://127.0.0.1:${redirecting.port}/start?to=${encodeURIComponent('http://127.0.0.1:SELF/ok')}`);
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(res.body)).toBe('public');
  });

  it.each([
    'http://127.0.0.2:PORT/latest/meta-data/',
    'http://[::ffff:127.0.0.2]:PORT/',
    'http://[::ffff:7f00:2]:PORT/',
    'http://0x7f000002:PORT/',
    'http://2130706434:PORT/',
    'http://[::1]:PORT/',
  ])('is refused before connecting: 302 to %s', async (target) => {
    const before = { internal: internal.connections, requests: redirecting.requests };
    let error: unknown;
    try {
      await fetcher(`http://127.0.0.1:${redirecting.port}/start?to=${encodeURIComponent(target)}`);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).kind).toBe('blocked');
    expect(redirecting.requests).toBe(before.requests + 1);
    expect(internal.connections).toBe(before.internal);
  });
});
