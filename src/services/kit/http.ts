/**
 * What the API connectors share: reading a JSON response with the failure classes of decisions
 * §9 and issue "connectors" (429/503 and 5xx transient with the time the source names; 401, 403,
 * 404 and other 4xx permanent; a body that is not JSON transient), rate-limit reset headers, and
 * the "not configured" error for a missing credential.
 */
import { SourceError, type CollectContext, type SourceRequest } from '../connector.ts';

/**
 * Milliseconds to wait from a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds or an HTTP
 * date, relative to `now` (epoch ms). Past dates give 0; absent or unreadable values undefined.
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Milliseconds until the source's rate limit resets, from `Retry-After`, or the reset headers
 * `x-rate-limit-reset` (X: epoch seconds), `x-ratelimit-reset` (Vimeo, Reddit: epoch seconds when
 * larger than 10^9, else seconds from now; Mastodon: an ISO 8601 time) and `ratelimit-reset`
 * (IETF RateLimit draft as Bluesky sends it, read the same way); undefined when none is given.
 * Header names are lower-case.
 */
export function rateLimitResetMs(headers: Record<string, string>, now: number): number | undefined {
  const retry = retryAfterMs(headers['retry-after'], now);
  if (retry !== undefined) return retry;
  const value = (headers['x-rate-limit-reset'] ?? headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'])?.trim();
  if (!value) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) {
    const at = /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : Number.NaN;
    return Number.isNaN(at) ? undefined : Math.max(0, at - now);
  }
  const reset = Number(value);
  if (reset <= 0) return undefined;
  return reset > 1e9 ? Math.max(0, reset * 1000 - now) : reset * 1000;
}

/**
 * The earliest next poll (epoch ms) when a successful response says the quota is used up
 * (`x-ratelimit-remaining` or `ratelimit-remaining` less than one: `0`, or Reddit's decimal `0.0`)
 * and names its reset; else undefined.
 */
export function quotaExhaustedUntil(headers: Record<string, string>, now: number): number | undefined {
  const remaining = (headers['x-ratelimit-remaining'] ?? headers['x-rate-limit-remaining'] ?? headers['ratelimit-remaining'])?.trim();
  if (!remaining || !/^\d+(\.\d+)?$/.test(remaining) || Number(remaining) >= 1) return undefined;
  const wait = rateLimitResetMs(headers, now);
  return wait === undefined ? undefined : now + wait;
}

/** The setting's value, or a permanent SourceError naming the variable to set (docs/services.md#credentials). */
export function requireSetting(value: string | undefined, variable: string, service: string): string {
  if (!value) throw new SourceError(`${service} is not configured: set ${variable}`, { permanent: true });
  return value;
}

/** What {@link getJson} reads: the parsed body (undefined for 304), the status and the headers. */
export interface JsonResponse {
  body: unknown;
  status: number;
  headers: Record<string, string>;
}

export interface GetJsonOptions {
  /**
   * Looks at a response before the default classification and may return the SourceError to
   * throw (e.g. an in-body quota error that must be transient, a rate limit sent as 400).
   */
  classify?: (response: JsonResponse) => SourceError | undefined;
  /** Method and body when not a plain GET. */
  request?: SourceRequest;
}

/**
 * JSON.parse that keeps integers beyond 2^53 as their source text (strings), so ids such as
 * Tumblr's numeric `id` keep every digit (TC39 JSON.parse source text access, Node ≥ 21).
 */
export function parseJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source ? context.source : value);
}

/**
 * GETs `url` and parses its JSON body. Throws SourceError: transient for 429, 503 (with the
 * reset time), other 5xx and malformed JSON; permanent for 401, 403, 404 and other 4xx. The
 * message carries the status and, when the body has one, the API's own error message (`detail`
 * function lets a connector pick it out of its service's error shape). A 304 (the caller sent a
 * validator) returns with body undefined. `options.classify` may decide first; `options.request`
 * makes it another method with a body (e.g. a POST).
 */
export async function getJson(
  ctx: CollectContext,
  url: string,
  headers: Record<string, string> = {},
  detail: (body: unknown) => string | undefined = defaultDetail,
  options: GetJsonOptions = {},
): Promise<JsonResponse> {
  const response = await ctx.fetch(url, { accept: 'application/json', ...headers }, options.request);
  let body: unknown;
  let malformed = false;
  try {
    body = parseJson(Buffer.from(response.body).toString('utf8'));
  } catch {
    malformed = true;
  }
  const status = response.status;
  if (status === 304) return { body: undefined, status, headers: response.headers };
  const own = options.classify?.({ body: malformed ? undefined : body, status, headers: response.headers });
  if (own) throw own;
  if (status >= 200 && status < 300) {
    if (malformed) throw new SourceError(`malformed JSON from ${new URL(response.url || url).host}`);
    return { body, status, headers: response.headers };
  }
  const message = `HTTP ${status}${!malformed && detail(body) ? `: ${detail(body)}` : ''}`;
  if (status === 429 || status === 503) throw new SourceError(message, { retryAfterMs: rateLimitResetMs(response.headers, ctx.now) });
  if (status >= 500 || status === 408) throw new SourceError(message);
  throw new SourceError(message, { permanent: true });
}

/**
 * The message of an API's error body, at most 200 characters, for the `HTTP <status>: …` of a
 * failed poll: `error.message` (Graph, Google), `error_description` (OAuth, RFC 6749 §5.2),
 * `detail` (RFC 9457), `message`, or a string `error`; undefined when the body has none.
 */
export function defaultDetail(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const error = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>) : undefined;
  const text = error?.message ?? b.error_description ?? b.detail ?? b.message ?? (typeof b.error === 'string' ? b.error : undefined);
  return typeof text === 'string' ? text.slice(0, 200) : undefined;
}
