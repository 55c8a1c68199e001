import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceResponse } from '../connector.ts';
import { getJson, parseJson, quotaExhaustedUntil, rateLimitResetMs, requireSetting, retryAfterMs } from './http.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:26:00 GMT');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 120_000],
    ['Wed, 21 Oct 2015 07:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j → %j', (value, expected) => {
    expect(retryAfterMs(value, now)).toBe(expected);
  });
});

describe('rateLimitResetMs', () => {
  const now = 1_700_000_000_000;
  it.each([
    [{ 'retry-after': '30' }, 30_000],
    [{ 'x-rate-limit-reset': String(now / 1000 + 900) }, 900_000],
    [{ 'x-ratelimit-reset': '60' }, 60_000],
    [{ 'x-ratelimit-reset': String(now / 1000 - 5) }, 0],
    [{}, undefined],
  ])('%j → %j', (headers, expected) => expect(rateLimitResetMs(headers as Record<string, string>, now)).toBe(expected));
});

describe('quotaExhaustedUntil', () => {
  const now = 1_700_000_000_000;
  it.each([
    [{ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' }, now + 60_000],
    // Reddit sends the remaining requests as a decimal (`0.0`, `598.0`): nothing left is less than one.
    [{ 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '412' }, now + 412_000],
    [{ 'x-ratelimit-remaining': '0.4', 'x-ratelimit-reset': '30' }, now + 30_000],
    [{ 'x-ratelimit-remaining': '598.0', 'x-ratelimit-reset': '412' }, undefined],
    [{ 'ratelimit-remaining': '0', 'ratelimit-reset': '5' }, now + 5_000],
    [{ 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '60' }, undefined],
    [{ 'x-ratelimit-remaining': '', 'x-ratelimit-reset': '60' }, undefined],
    [{ 'x-ratelimit-remaining': 'none', 'x-ratelimit-reset': '60' }, undefined],
    [{ 'x-ratelimit-remaining': '0.0' }, undefined],
  ])('%j → %j', (headers, expected) => expect(quotaExhaustedUntil(headers as Record<string, string>, now)).toBe(expected));
});

describe('getJson', () => {
  const now = 1_700_000_000_000;
  const ctx = (status: number, body: string, headers: Record<string, string> = {}) => ({
    services: loadConfig({}).services,
    now,
    fetch: async (url: string): Promise<SourceResponse> => ({ status, headers, body: new TextEncoder().encode(body), url }),
  });

  it('returns the parsed body and headers of a 2xx', async () => {
    await expect(getJson(ctx(200, '{"a":[1]}', { etag: 'x' }), 'http://api.test/a')).resolves.toEqual({ body: { a: [1] }, status: 200, headers: { etag: 'x' } });
  });

  it.each([
    [429, '{"title":"Too Many Requests"}', { 'x-rate-limit-reset': String(now / 1000 + 60) }, false, 60_000, 'HTTP 429'],
    [503, '', { 'retry-after': '5' }, false, 5000, 'HTTP 503'],
    [500, 'oops', {}, false, undefined, 'HTTP 500'],
    [401, '{"error":{"message":"Invalid OAuth access token."}}', {}, true, undefined, 'HTTP 401: Invalid OAuth access token.'],
    [403, '{"detail":"Forbidden"}', {}, true, undefined, 'HTTP 403: Forbidden'],
    [404, '{}', {}, true, undefined, 'HTTP 404'],
    [200, '<html>', {}, false, undefined, 'malformed JSON from api.test'],
  ])('classifies %i as permanent=%s', async (status, body, headers, permanent, retry, message) => {
    const error = await getJson(ctx(status, body, headers), 'http://api.test/a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs: retry, message });
  });

  it('names the variable of a missing credential', () => {
    expect(() => requireSetting(undefined, 'TWITTER_BEARER_TOKEN', 'twitter')).toThrow('twitter is not configured: set TWITTER_BEARER_TOKEN');
    expect(requireSetting('t', 'X', 'x')).toBe('t');
  });
});

describe('parseJson', () => {
  it('keeps integers beyond 2^53 as their digits and leaves the rest alone', () => {
    expect(parseJson('{"id":1577730467436138524,"n":42,"f":1.5,"s":"9007199254740993","big":-9007199254740993}'))
      .toEqual({ id: '1577730467436138524', n: 42, f: 1.5, s: '9007199254740993', big: '-9007199254740993' });
  });
});

describe('getJson with options', () => {
  const ctx = (status: number, body: string) => ({
    services: loadConfig({}).services,
    now: 0,
    fetch: async (url: string): Promise<SourceResponse> => ({ status, headers: {}, body: new TextEncoder().encode(body), url }),
  });
  it('returns a 304 without a body', async () => {
    await expect(getJson(ctx(304, ''), 'http://api.test/a')).resolves.toEqual({ body: undefined, status: 304, headers: {} });
  });
  it('lets the connector classify a response first', async () => {
    const classify = ({ status }: { status: number }) => (status === 400 ? new SourceError('quota', { retryAfterMs: 5 }) : undefined);
    await expect(getJson(ctx(400, '{}'), 'http://api.test/a', {}, undefined, { classify })).rejects.toMatchObject({ message: 'quota', permanent: false, retryAfterMs: 5 });
  });
});
