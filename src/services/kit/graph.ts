/**
 * What the Facebook and Instagram connectors share: GET on the Graph API with Meta's rate-limit
 * signals (https://developers.facebook.com/docs/graph-api/overview/rate-limiting/).
 *
 * - Throttling errors (`error.code` 4, 17, 32, 613, 80001–80014) arrive as HTTP 400/403: they are
 *   transient, retried after `estimated_time_to_regain_access` minutes when a usage header gives
 *   it, else after one hour (Meta's rolling window). Other 4xx stay permanent (bad token: 190).
 * - Usage headers `X-App-Usage`, `X-Page-Usage`, `X-Ad-Account-Usage` and
 *   `X-Business-Use-Case-Usage` give percentages; at 90 % or more the next run moves one hour
 *   (or the time to regain access) later, before Meta starts refusing.
 * - An error naming ids that do not exist (code 803 "Some of the aliases you requested do not
 *   exist: a,b", or code 100 "Object with ID 'a' does not exist…") is permanent like any other
 *   4xx, but thrown as `GraphMissingIds` carrying the ids, so that a multiple-id read
 *   (`?ids=a,b,c`), which Meta fails whole for one deleted object, can ask again without them.
 */
import { SourceError, type CollectContext } from '../connector.ts';
import { type HttpFetch, type OAuthEndpoint, otherGrant, type TokenSet } from '../../lib/oauth-client.ts';
import type { ConnectedCredential } from '../module.ts';
import { getJson, type JsonResponse } from './http.ts';
import { arr, num, obj, str } from './normalize.ts';

const THROTTLED = new Set([4, 17, 32, 613]);
const HOUR_MS = 3600_000;
/** Usage (percent) from which the connector slows down by itself. */
export const USAGE_LIMIT = 90;

const detail = (body: unknown) => str(obj(obj(body).error).message) ?? undefined;

/**
 * A Graph API error naming ids that do not exist (see the module docstring): the same permanent
 * SourceError as any other 4xx, with `ids` as the message names them (not checked against what
 * was asked) and the error's `code`: 803 says they do not exist; 100 says they do not exist *or*
 * cannot be read (permissions), so only 803 is taken as a deletion (docs/services.md#re-verification).
 */
export class GraphMissingIds extends SourceError {
  readonly ids: string[];
  readonly code: number;
  constructor(message: string, ids: string[], code: number) {
    super(message, { permanent: true });
    this.name = 'GraphMissingIds';
    this.ids = ids;
    this.code = code;
  }
}

/**
 * The ids a Graph API error body says do not exist: the comma-separated list after "do not
 * exist:" of code 803 (e.g. `(#803) Some of the aliases you requested do not exist: 1_2,3_4`), or
 * the quoted ids of "Object with ID '1_2' does not exist" of code 100; empty when the body is no
 * such error or names none (e.g. code 100 "Object does not exist, cannot be loaded due to missing
 * permission…"). Source: Graph API answers as reported (e.g.
 * https://github.com/mobolic/facebook-sdk/issues/315,
 * https://github.com/Pirate-Parties-International/PPI-party-info/issues/67); Meta's guide
 * (https://developers.facebook.com/docs/graph-api/guides/error-handling/) gives only the
 * `{error: {message, type, code}}` shape, no format for these messages.
 */
export function graphMissingIds(body: unknown): string[] {
  const error = obj(obj(body).error);
  const code = num(error.code);
  const message = str(error.message) ?? '';
  if (code === 803) return (/do not exist:\s*(.*)$/s.exec(message)?.[1] ?? '').split(/[\s,]+/).filter(Boolean);
  if (code === 100) return [...message.matchAll(/Object with ID '([^']+)' does not exist/g)].map((m) => m[1]!);
  return [];
}

/** Highest usage percentage and longest time to regain access (ms) named by the usage headers. */
export function graphUsage(headers: Record<string, string>): { percent: number; regainMs: number } {
  let percent = 0;
  let regainMs = 0;
  const read = (u: Record<string, unknown>) => {
    for (const key of ['call_count', 'total_cputime', 'total_time', 'acc_id_util_pct']) percent = Math.max(percent, num(u[key]) ?? 0);
    regainMs = Math.max(regainMs, (num(u.estimated_time_to_regain_access) ?? 0) * 60_000);
  };
  for (const name of ['x-app-usage', 'x-page-usage', 'x-ad-account-usage', 'x-business-use-case-usage']) {
    let value: unknown;
    try {
      value = JSON.parse(headers[name] ?? 'null');
    } catch {
      continue;
    }
    if (name === 'x-business-use-case-usage') for (const list of Object.values(obj(value))) arr(list).map(obj).forEach(read);
    else read(obj(value));
  }
  return { percent, regainMs };
}

/** Epoch ms before which the next poll should not run, when usage is near the limit; else undefined. */
export function graphNextRunAt(headers: Record<string, string>, now: number): number | undefined {
  const { percent, regainMs } = graphUsage(headers);
  return percent >= USAGE_LIMIT ? now + Math.max(regainMs, HOUR_MS) : undefined;
}

/**
 * GETs a Graph API URL with the token in the `Authorization` header (kept out of URLs and
 * logs); throttling in the body is transient with the time to wait; an error naming ids that do
 * not exist is thrown as `GraphMissingIds`.
 */
export function graphGet(ctx: CollectContext, url: string, token: string, service: string): Promise<JsonResponse> {
  const classify = ({ status, body, headers }: JsonResponse) => {
    const error = obj(obj(body).error);
    const code = num(error.code);
    if (status < 400 || code === undefined) return undefined;
    const missing = status < 500 ? graphMissingIds(body) : [];
    if (missing.length) return new GraphMissingIds(`HTTP ${status}: ${str(error.message)}`, missing, code);
    if (!(THROTTLED.has(code) || (code >= 80001 && code <= 80014))) return undefined;
    const regain = graphUsage(headers).regainMs;
    return new SourceError(`${service} rate limit (code ${code}): ${str(error.message) ?? `HTTP ${status}`}`, { retryAfterMs: regain || HOUR_MS });
  };
  return getJson(ctx, url, { authorization: `Bearer ${token}` }, detail, { classify });
}

/**
 * The credential of a Facebook Login connect (Facebook and Instagram): the code's token, which
 * lives an hour or two, exchanged for the long-lived one (about 60 days; `grant_type=fb_exchange_token`,
 * developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived), kept in
 * `accessToken` with its expiry in `expiresAt`.
 * @throws OAuthRefusal when Facebook refuses the exchange.
 */
export async function longLivedCredential(tokens: TokenSet, endpoint: OAuthEndpoint, fetch: HttpFetch, now: number): Promise<ConnectedCredential> {
  const exchanged = await otherGrant(endpoint, fetch, 'fb_exchange_token', { fb_exchange_token: tokens.accessToken }, now);
  const plain: Record<string, string> = exchanged.expiresAt ? { expiresAt: exchanged.expiresAt } : {};
  const secret: Record<string, string> = { accessToken: exchanged.accessToken };
  if (exchanged.refreshToken) secret.refreshToken = exchanged.refreshToken;
  return { secret, plain, expiresAt: exchanged.expiresAt ?? null };
}
