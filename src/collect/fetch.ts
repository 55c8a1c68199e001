/**
 * Outbound HTTP for the collector (docs/services.md#outbound-requests): requests refuse loopback,
 * private, link-local and metadata addresses unless `ALLOW_PRIVATE_FETCH=true` (tests and local
 * demos set it), time out after 15 s, follow at most 5 redirects, and read at most 10 MiB.
 *
 * The address check sits in the socket connector, so it applies to the address actually dialled
 * (after DNS resolution, on every connection, every redirect hop) and cannot be dodged by DNS
 * rebinding between a check and the connect. Hosts written as IP literals skip DNS and are checked
 * directly (the WHATWG URL parser has already normalised `0x7f000001`, `0177.0.0.1`, … to dotted
 * decimal and `[::ffff:127.0.0.1]` to `[::ffff:7f00:1]`).
 */
import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { isAllowedAddress } from '../lib/addresses.ts';
import { FetchError, type OpenedStream, type OpenStream, type SourceFetch, type SourceRequest, type SourceResponse } from '../services/connector.ts';

// The error and the stream types live with the fetch's contract (services/connector.ts), where connectors and stream listeners see them.
export { FetchError, type FetchErrorKind, type OpenedStream, type OpenStream } from '../services/connector.ts';
export { isAllowedAddress };

/** Default whole-request time limit, ms (docs/services.md#outbound-requests). */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Default body size limit, bytes: 10 MiB (docs/services.md#outbound-requests). */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** Default number of redirects followed (docs/services.md#outbound-requests). */
export const DEFAULT_MAX_REDIRECTS = 5;
/** Default `User-Agent` request header. */
export const DEFAULT_USER_AGENT = 'Sluice/0.1 (content aggregator)';

/** Redirect statuses that carry a `Location` to follow (RFC 9110 §15.4.2–§15.4.4, §15.4.8, §15.4.9). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Content codings undici's fetch decodes (when every listed coding is one of these). */
const DECODED_CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'zstd']);
/** Request headers not carried over a redirect to another origin (as the Fetch standard does). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/** Options for {@link createFetcher}. */
export interface FetcherOptions {
  /** Skip the address check (`ALLOW_PRIVATE_FETCH=true`; tests and local demos). */
  allowPrivate: boolean;
  /**
   * The address policy applied when `allowPrivate` is false: whether a dialled address is
   * allowed. Default {@link isAllowedAddress}; tests narrow it to let one loopback server through.
   */
  isAllowed?: (address: string) => boolean;
  /** Time limit for the whole request (all hops, headers and body), ms. Default 15 000. */
  timeoutMs?: number;
  /** Largest body accepted, bytes, after content decoding. Default 10 MiB. */
  maxBytes?: number;
  /** Most redirects followed. Default 5. */
  maxRedirects?: number;
  /** `User-Agent` request header. Default {@link DEFAULT_USER_AGENT}. */
  userAgent?: string;
  /**
   * Most requests under way at once to one origin (scheme, host, port) through this fetcher: the
   * agent opens at most this many connections per origin, one request at a time on each (no
   * pipelining), and queues the others without holding up other origins (COLLECT_HOST_CONCURRENCY,
   * docs/services.md#polling). The time limit counts the wait in that queue. Default: no limit.
   */
  connectionsPerOrigin?: number;
}

/**
 * Makes the collector's guarded `fetch` (docs/services.md#outbound-requests), backed by undici's
 * `fetch` with its own `Agent` (so no global dispatcher or proxy settings apply).
 *
 * The returned function does a GET (or the POST `request` asks for) of `url` with the given extra request headers (they override
 * the default `User-Agent`) and resolves to a {@link SourceResponse}: status, headers with
 * lower-case names (repeated headers joined with `, `), the body bytes and the final URL after
 * redirects. HTTP error statuses (4xx, 5xx) and 3xx responses that are not followed (304, 300,
 * a redirect without `Location`) are returned, not thrown: the connector decides.
 *
 * - Redirects (301, 302, 303, 307, 308 with a `Location`; RFC 9110 §15.4) are followed by hand,
 *   at most `maxRedirects` times; a relative `Location` is resolved against the current URL;
 *   every hop must be `http:` or `https:` and is address-checked on connect. `Authorization`,
 *   `Cookie` and `Proxy-Authorization` are dropped when a redirect changes origin.
 * - `Accept-Encoding` is set by undici, which also decodes gzip, deflate, br and zstd bodies; for
 *   a decoded body, `content-encoding` and `content-length` are removed from the headers returned.
 * - The size limit applies to the decoded body; a `Content-Length` above it fails at once.
 *
 * @throws {FetchError} with kind `blocked`, `timeout`, `too_large`, `redirects`, `protocol` or
 *   `network` (see {@link FetchError}).
 *
 * `open(url, headers, signal)` is the same guarded GET for a stream ({@link OpenStream}).
 * `close()` closes the agent's connections; call it once, when the collector stops.
 */
export function createFetcher(options: FetcherOptions): SourceFetch & { open: OpenStream; close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const allowPrivate = options.allowPrivate;
  const isAllowed = options.isAllowed ?? isAllowedAddress;

  const agent = createGuardedAgent({ allowPrivate, isAllowed, timeoutMs, ...(options.connectionsPerOrigin !== undefined ? { connectionsPerOrigin: options.connectionsPerOrigin } : {}) });

  async function guardedFetch(url: string, headers: Record<string, string> = {}, request: SourceRequest = {}): Promise<SourceResponse> {
    let current = parseHttpUrl(url, undefined);
    let method = request.method ?? 'GET';
    let requestBody = request.body;
    const signal = AbortSignal.timeout(timeoutMs);
    const requestHeaders: Record<string, string> = { 'user-agent': userAgent };
    for (const [name, value] of Object.entries(headers)) requestHeaders[name.toLowerCase()] = value;

    for (let redirects = 0; ; redirects++) {
      const host = current.host;
      try {
        const response = await undiciFetch(current.href, {
          method,
          headers: requestHeaders,
          ...(requestBody !== undefined && { body: requestBody }),
          redirect: 'manual',
          signal,
          dispatcher: agent,
        });

        const location = response.headers.get('location');
        if (REDIRECT_STATUSES.has(response.status) && location !== null) {
          await response.body?.cancel().catch(() => {});
          if (redirects >= maxRedirects) {
            throw new FetchError('redirects', `Too many redirects (more than ${maxRedirects}) fetching ${host}`);
          }
          const next = parseHttpUrl(location, current);
          if (next.origin !== current.origin) for (const name of CREDENTIAL_HEADERS) delete requestHeaders[name];
          // RFC 9110 §15.4: only 307 and 308 keep the method and body; the others become a GET.
          if (response.status !== 307 && response.status !== 308) {
            method = 'GET';
            requestBody = undefined;
            delete requestHeaders['content-type'];
          }
          current = next;
          continue;
        }

        const responseHeaders: Record<string, string> = {};
        for (const [name, value] of response.headers) {
          responseHeaders[name] = name in responseHeaders ? `${responseHeaders[name]}, ${value}` : value;
        }
        const declared = Number(responseHeaders['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          await response.body?.cancel().catch(() => {});
          throw tooLarge(host, maxBytes);
        }
        const body = await readCapped(response.body as ReadableStream<Uint8Array> | null, maxBytes, host);
        const codings = (responseHeaders['content-encoding'] ?? '').toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '');
        if (codings.length > 0 && codings.every((c) => DECODED_CODINGS.has(c))) {
          delete responseHeaders['content-encoding'];
          delete responseHeaders['content-length'];
        }
        return { status: response.status, headers: responseHeaders, body, url: current.href };
      } catch (err) {
        throw toFetchError(err, host, signal, timeoutMs);
      }
    }
  }

  async function open(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<OpenedStream> {
    const target = parseHttpUrl(url, undefined);
    const requestHeaders: Record<string, string> = { 'user-agent': userAgent };
    for (const [name, value] of Object.entries(headers)) requestHeaders[name.toLowerCase()] = value;
    // The time limit covers the response's headers only: the body is read for as long as it lasts.
    const headersDue = new AbortController();
    const timer = setTimeout(() => headersDue.abort(new DOMException('headers timed out', 'TimeoutError')), timeoutMs);
    const both = AbortSignal.any([signal, headersDue.signal]);
    try {
      // Redirects as the Fetch standard follows them (credentials dropped on another origin); each hop dials through the guarded agent.
      const response = await undiciFetch(target.href, { headers: requestHeaders, redirect: 'follow', signal: both, dispatcher: agent });
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of response.headers) responseHeaders[name] = name in responseHeaders ? `${responseHeaders[name]}, ${value}` : value;
      return { status: response.status, headers: responseHeaders, body: response.body as ReadableStream<Uint8Array> | null, url: response.url || target.href };
    } catch (err) {
      throw toFetchError(err, target.host, headersDue.signal, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  return Object.assign(guardedFetch, {
    open,
    close: () => agent.close(),
  });
}

/**
 * The undici `Agent` whose connector refuses non-public addresses (unless `allowPrivate`): the
 * guard of every outbound connection, checked on the address actually dialled (see the module).
 * `createFetcher` uses it for HTTP; a WebSocket (undici's, `{dispatcher}`) or SSE client uses it
 * for streams (docs/services.md#push-and-streams). A refused connection fails with a
 * {@link FetchError} of kind `blocked` (wrapped by undici); `timeoutMs` bounds the connect.
 * `onBlocked` hears of each refusal (undici's WebSocket reports a failed handshake without its
 * cause). `webSocket.maxPayloadSize` (bytes) is undici's bound on a WebSocket message received
 * through the agent (its docs/api/Client.md, `webSocket`; default 128 MiB): a stream listener sets
 * its service's (`services/kit/stream/websocket.ts`, docs/services.md#outbound-requests).
 */
export function createGuardedAgent(options: {
  allowPrivate: boolean;
  isAllowed?: (address: string) => boolean;
  timeoutMs?: number;
  onBlocked?: (error: FetchError) => void;
  connectionsPerOrigin?: number;
  webSocket?: { maxPayloadSize: number };
}): Agent {
  const allowPrivate = options.allowPrivate;
  const isAllowed = options.isAllowed ?? isAllowedAddress;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const blockedError = (host: string) => {
    const error = blocked(host);
    options.onBlocked?.(error);
    return error;
  };
  const lookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
    dns.lookup(hostname, { family: lookupOptions.family ?? 0, hints: lookupOptions.hints, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), '');
      }
      if (!allowPrivate && !addresses.every((a) => isAllowed(a.address))) {
        return callback(blockedError(hostname), '');
      }
      if (lookupOptions.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };

  const baseConnect = buildConnector({ lookup, timeout: timeoutMs });
  const agent = new Agent({
    // Politeness (COLLECT_HOST_CONCURRENCY): at most this many connections per origin, one request on each.
    ...(options.connectionsPerOrigin !== undefined ? { connections: options.connectionsPerOrigin, pipelining: 1 } : {}),
    ...(options.webSocket && { webSocket: { maxPayloadSize: options.webSocket.maxPayloadSize } }),
    connect(connectOptions, callback) {
      const host = connectOptions.hostname;
      if (!allowPrivate && net.isIP(host) !== 0 && !isAllowed(host)) {
        callback(blockedError(host), null);
        return;
      }
      baseConnect(connectOptions, callback);
    },
  });
  return agent;
}

/** Parses `input` (relative to `base`, if given) and requires an http(s) URL without credentials. */
function parseHttpUrl(input: string, base: URL | undefined): URL {
  const where = base ? `redirect from ${base.host}` : 'URL';
  let url: URL;
  try {
    url = new URL(input, base);
  } catch (err) {
    throw new FetchError('protocol', `Invalid ${where}`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('protocol', `Unsupported URL scheme ${url.protocol} in ${where}${base ? '' : ` for ${url.host || 'no host'}`}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new FetchError('protocol', `Credentials in URL are not allowed (${url.host})`);
  }
  return url;
}

/** Reads a body stream into one buffer, cancelling it once more than `maxBytes` arrive. */
async function readCapped(stream: ReadableStream<Uint8Array> | null, maxBytes: number, host: string): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(host, maxBytes);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function blocked(hostname: string): FetchError {
  return new FetchError('blocked', `Refused to fetch from ${hostname}: not a public address`);
}

function tooLarge(host: string, maxBytes: number): FetchError {
  return new FetchError('too_large', `Response from ${host} is larger than ${maxBytes} bytes`);
}

/** Maps whatever undici or the body stream threw to a FetchError naming `host`. */
function toFetchError(err: unknown, host: string, signal: AbortSignal, timeoutMs: number): FetchError {
  if (err instanceof FetchError) return err;
  // The blocked error raised in the connector arrives wrapped (`TypeError: fetch failed`).
  const chain: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
    if (e instanceof FetchError) return e;
  }
  const code = (e: unknown): string => String((e as { code?: unknown } | null)?.code ?? '');
  const name = (e: unknown): string => String((e as { name?: unknown } | null)?.name ?? '');
  if (signal.aborted || chain.some((e) => name(e) === 'TimeoutError' || code(e) === 'UND_ERR_CONNECT_TIMEOUT' || code(e) === 'ETIMEDOUT')) {
    return new FetchError('timeout', `Request to ${host} timed out after ${timeoutMs} ms`, { cause: err });
  }
  // HTTP framing (llhttp `HPE_*`) and content decoding (zlib `Z_*`, brotli `ERR__*`, zstd `ZSTD_*`).
  const malformed = /^(HPE_|Z_|ERR__|ZSTD_)/;
  if (chain.some((e) => name(e) === 'HTTPParserError' || malformed.test(code(e)))) {
    return new FetchError('protocol', `Malformed response from ${host}`, { cause: err });
  }
  const detail = chain.map(code).find((c) => c !== '' && !c.startsWith('UND_ERR_'));
  return new FetchError('network', `Request to ${host} failed${detail ? ` (${detail})` : ''}`, { cause: err });
}
