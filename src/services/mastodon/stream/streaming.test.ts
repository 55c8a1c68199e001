/**
 * The pure parts of Mastodon streaming (docs/services.md#mastodon-streaming), table-driven: which
 * stream an input listens to, which streamed statuses belong to an input, a `delete` event's id, the reconnect delays,
 * the input forms the API accepts; and the guarded `open` the streams use, refusing private
 * addresses (directly and through a redirect) like every request of the collector.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '../../table.ts';
import { createFetcher, FetchError, isAllowedAddress } from '../../../collect/fetch.ts';
import { reconnectDelay } from './connection.ts';
import { deletedId } from './events.ts';
import { accountIdOf, statusMatches, streamOf } from './routing.ts';

describe('deletedId (a delete event: the status id as a string)', () => {
  it.each([
    ['109876543210987654', '109876543210987654'],
    ['123456789012345678901234567890', '123456789012345678901234567890'], // longer than a safe integer: kept as text
    [' 42\n', '42'],
    ['"42"', '42'],
    ['AbC9', 'AbC9'],
    ['', null],
    ['"', null],
    ['{"id":"42"}', null],
    ['42 43', null],
    ['../42', null],
    ['"4/2"', null],
    ['x'.repeat(65), null],
  ])('%j → %j', (data, id) => {
    expect(deletedId(data)).toBe(id);
  });
});

describe('streamOf', () => {
  it.each([
    ['tag', 'hoot@mastodon.social', null, 'mastodon:mastodon.social:hashtag:hoot', 'https://mastodon.social', '/api/v1/streaming/hashtag?tag=hoot'],
    ['tag', '#Hoot@mastodon.social', null, 'mastodon:mastodon.social:hashtag:hoot', 'https://mastodon.social', '/api/v1/streaming/hashtag?tag=hoot'],
    ['tag', 'https://mastodon.social/tags/caf%C3%A9', null, 'mastodon:mastodon.social:hashtag:café', 'https://mastodon.social', '/api/v1/streaming/hashtag?tag=caf%C3%A9'],
    ['tag', 'http://127.0.0.1:3000/tags/hoot', null, 'mastodon:127.0.0.1:3000:hashtag:hoot', 'http://127.0.0.1:3000', '/api/v1/streaming/hashtag?tag=hoot'],
    ['tag', 'http://mastodon.local:3000/tags/hoot', null, 'mastodon:mastodon.local:3000:hashtag:hoot', 'http://mastodon.local:3000', '/api/v1/streaming/hashtag?tag=hoot'],
    ['user', 'Gargron@mastodon.social', '1', 'mastodon:mastodon.social:public:local', 'https://mastodon.social', '/api/v1/streaming/public/local'],
  ])('%s %s → %s', (type, input, accountId, name, origin, path) => {
    expect(streamOf({ type, input }, accountId)).toMatchObject({ name, origin, path });
  });

  it.each([
    ['user', 'Gargron@mastodon.social', null], // account id not known yet: polled
    ['tag', 'http://mastodon.social/tags/hoot', null], // http without a port
    ['tag', 'nonsense', null],
  ])('%s %s cannot stream', (type, input, accountId) => {
    expect(streamOf({ type, input }, accountId)).toBeNull();
  });

  it('takes the account id of a user input from its own poll state only', () => {
    const state = JSON.stringify({ accountId: '42', accountOf: 'bob@mastodon.social' });
    expect(accountIdOf({ type: 'user', input: 'bob@mastodon.social', sourceState: state })).toBe('42');
    expect(accountIdOf({ type: 'user', input: 'carol@mastodon.social', sourceState: state })).toBeNull(); // input changed since
    expect(accountIdOf({ type: 'user', input: 'bob@mastodon.social', sourceState: '{}' })).toBeNull();
    expect(accountIdOf({ type: 'tag', input: 'bob@mastodon.social', sourceState: state })).toBeNull();
  });
});

describe('statusMatches', () => {
  const status = (account: string, replyTo?: [string, string]) => ({ id: '9', account: { id: account }, in_reply_to_id: replyTo?.[0] ?? null, in_reply_to_account_id: replyTo?.[1] ?? null });
  it.each([
    ['a tag input: every status of its stream', status('1'), 'tag', null, true],
    ['the user\'s own status', status('7'), 'user', '7', true],
    ['the user\'s reply to itself (a thread)', status('7', ['8', '7']), 'user', '7', true],
    ['the user\'s reply to another account', status('7', ['8', '5']), 'user', '7', false],
    ['another account\'s status', status('5'), 'user', '7', false],
    ['a user input without its account id', status('7'), 'user', null, false],
  ])('%s', (_what, raw, type, accountId, expected) => {
    expect(statusMatches(raw, { type, accountId })).toBe(expected);
  });
});

describe('reconnectDelay', () => {
  it.each([
    [0, 0, 500],
    [0, 0.999, 1000],
    [1, 0, 1000],
    [3, 0.5, 6000],
    [6, 0, 30_000],
    [7, 0.999, 59_970], // bounded by maxMs (60 000, half of it jitter)
    [1000, 0, 30_000], // still bounded after many failures
  ])('after %i failures (random %f) waits %i ms', (failures, random, expected) => {
    expect(reconnectDelay(failures, () => random)).toBe(expected);
  });
});

describe('mastodon input forms (API)', () => {
  const check = SERVICES.mastodon.checkInput;
  it.each([
    ['hoot@mastodon.social', false, true],
    ['https://mastodon.social/tags/hoot', false, true],
    ['http://127.0.0.1:3000/tags/hoot', false, false],
    ['http://mastodon.local:3000/@alice', false, false],
    ['http://127.0.0.1:3000/tags/hoot', true, true],
    ['http://mastodon.local:3000/@alice', true, true],
    ['http://[::1]:3000/@alice', true, true],
    ['http://mastodon.local/@alice', true, false], // http needs a port
    ['http://mastodon.local:3000/about', true, false],
    ['ftp://mastodon.local:3000/@alice', true, false],
  ])('%s with ALLOW_PRIVATE_FETCH=%s → %s', (input, allowPrivateFetch, ok) => {
    expect(check(input, { allowPrivateFetch }) === null).toBe(ok);
  });
});

describe('the guarded open of a stream', () => {
  let internal: Server;
  let redirecting: Server;
  let internalRequests = 0;
  // Production's guard, except that 127.0.0.1 stands in for a public instance.
  const fetcher = createFetcher({ allowPrivate: false, isAllowed: (address) => address === '127.0.0.1' || isAllowedAddress(address) });
  const port = (server: Server) => (server.address() as AddressInfo).port;

  beforeAll(async () => {
    internal = createServer((_req, res) => {
      internalRequests++;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: update\ndata: {}\n\n');
    });
    redirecting = createServer((req, res) => {
      if (req.url === '/ok') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(':)\n');
      res.writeHead(301, { location: `http://127.0.0.2:${port(internal)}/api/v1/streaming/public` }).end();
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await fetcher.close();
    internal.closeAllConnections();
    redirecting.closeAllConnections();
    await new Promise((resolve) => internal.close(resolve));
    await new Promise((resolve) => redirecting.close(resolve));
  });

  it('opens an allowed address and hands the body over (the control)', async () => {
    const res = await fetcher.open(`http://127.0.0.1:${port(redirecting)}/ok`, {}, AbortSignal.timeout(5000));
    expect(res.status).toBe(200);
    expect(await new Response(res.body).text()).toBe(':)\n');
  });

  it.each(['direct', 'redirect'])('refuses a private address (%s) before connecting', async (how) => {
    const url = how === 'direct' ? `http://127.0.0.2:${port(internal)}/api/v1/streaming/public` : `http://127.0.0.1:${port(redirecting)}/api/v1/streaming/public`;
    const error = await fetcher.open(url, {}, AbortSignal.timeout(5000)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).kind).toBe('blocked');
    expect(internalRequests).toBe(0);
  });
});
