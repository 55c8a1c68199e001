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
 */
import { SourceError, type CollectContext } from '../connector.ts';
import { getJson, type JsonResponse } from './http.ts';
import { arr, num, obj, str } from './normalize.ts';

const THROTTLED = new Set([4, 17, 32, 613]);
const HOUR_MS = 3600_000;
/** Usage (percent) from which the connector slows down by itself. */
export const USAGE_LIMIT = 90;

const detail = (body: unknown) => str(obj(obj(body).error).message) ?? undefined;

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
 * logs); throttling in the body is transient with the time to wait.
 */
export function graphGet(ctx: CollectContext, url: string, token: string, service: string): Promise<JsonResponse> {
  const classify = ({ status, body, headers }: JsonResponse) => {
    const error = obj(obj(body).error);
    const code = num(error.code);
    if (status < 400 || code === undefined || !(THROTTLED.has(code) || (code >= 80001 && code <= 80014))) return undefined;
    const regain = graphUsage(headers).regainMs;
    return new SourceError(`${service} rate limit (code ${code}): ${str(error.message) ?? `HTTP ${status}`}`, { retryAfterMs: regain || HOUR_MS });
  };
  return getJson(ctx, url, { authorization: `Bearer ${token}` }, detail, { classify });
}
