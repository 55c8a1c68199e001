/**
 * The module of Threads (Meta's Threads API): its row, its connector, and its connect flow
 * (docs/api.md#connecting-an-account, developers.facebook.com/docs/threads/get-started/long-lived-tokens):
 *
 * - the code's token, which lives an hour, is exchanged for the long-lived one (60 days):
 *   `GET /access_token?grant_type=th_exchange_token&client_secret=…&access_token=…`;
 * - the long-lived token is refreshed before it expires (`refresh`, run by the collector before a
 *   poll, `REFRESH_MARGIN_MS` ahead: Meta refreshes a token at least 24 hours old and not expired,
 *   for 60 days more): `GET /refresh_access_token?grant_type=th_refresh_token&access_token=…`.
 *
 * Its quota (docs/api.md#quotas): keyword searches per UTC day and credential, counted from the
 * searches a poll made that found something (Meta does not count those that find nothing).
 *
 * Both endpoints sit beside the token endpoint's `oauth/` (`THREADS_TOKEN_URL`,
 * `https://graph.threads.net/oauth/access_token` → `https://graph.threads.net/access_token`).
 * Listed in `../index.ts`.
 */
import { type HttpFetch, type OAuthEndpoint, OAuthRefusal, type TokenSet } from '../../lib/oauth-client.ts';
import { utcDay } from '../../lib/quota-windows.ts';
import { defaultDetail, parseJson } from '../kit/http.ts';
import { num, obj, str } from '../kit/normalize.ts';
import type { ConnectedCredential, ServiceModule } from '../module.ts';
import { MAX_PAGES, threads as connector } from './connector.ts';
import { row } from './row.ts';

/** A long-lived token is refreshed when it expires within this many ms (7 days: it is then 53 days old, well past Meta's 24 hours). */
export const REFRESH_MARGIN_MS = 7 * 86_400_000;

/**
 * The keyword searches one call to `url` answered with `body` counts: 1 for a `/keyword_search`
 * below `apiUrl` whose `data` is not empty, else 0 (Meta: "Queries which return no results do not
 * count against this limit").
 */
export function threadsSearches(url: string, body: Uint8Array, apiUrl: string): number {
  if (!url.startsWith(`${apiUrl}/`) || new URL(url).pathname !== new URL(`${apiUrl}/keyword_search`).pathname) return 0;
  try {
    const data = (JSON.parse(Buffer.from(body).toString('utf8')) as { data?: unknown }).data;
    return Array.isArray(data) && data.length > 0 ? 1 : 0;
  } catch {
    return 0;
  }
}

/**
 * GETs `path` (beside the token endpoint) with `params` and reads Meta's token answer
 * (`{access_token, token_type, expires_in}`) as a `TokenSet`, `expires_in` counted from `now` (ms).
 * @throws OAuthRefusal `invalid_grant` for a Graph error code 190 (the token expired, was revoked,
 * or is not one Meta refreshes), `invalid_request` for another 4xx; Error for anything else.
 */
export async function metaTokenGet(endpoint: OAuthEndpoint, fetch: HttpFetch, path: string, params: Record<string, string>, now: number): Promise<TokenSet> {
  const url = new URL(`../${path}`, endpoint.tokenUrl);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const res = await fetch(url.href, { accept: 'application/json' });
  let body: unknown;
  try {
    body = parseJson(Buffer.from(res.body).toString('utf8'));
  } catch {
    body = undefined;
  }
  const json = obj(body);
  const accessToken = str(json.access_token);
  if (res.status === 200 && accessToken) {
    const expiresIn = num(json.expires_in);
    return { accessToken, ...(expiresIn !== undefined && { expiresAt: new Date(now + expiresIn * 1000).toISOString() }) };
  }
  const message = defaultDetail(body) ?? `HTTP ${res.status}`;
  if (num(obj(json.error).code) === 190) throw new OAuthRefusal('invalid_grant', message);
  if (res.status >= 400 && res.status < 500) throw new OAuthRefusal('invalid_request', message);
  throw new Error(`threads ${path} failed: ${message}`);
}

export const threads = {
  name: 'threads',
  row,
  connector,
  quota: {
    kind: 'units',
    name: 'threads-searches',
    unit: 'keyword searches',
    when: 'today (UTC)',
    variable: 'THREADS_ACCESS_TOKEN',
    limit: (settings) => settings.threadsDailySearches,
    period: utcDay,
    // A keyword poll reads at most MAX_PAGES pages, each a search; the other types search nothing.
    take: (input) => (input.type === 'keyword' ? MAX_PAGES : undefined),
    cost: (url, body, services) => threadsSearches(url, body, services.threads.apiUrl),
    chargesFailedCalls: false,
    needs: (input, taken) => `; a poll of this ${input.type} input takes up to ${taken}`,
  },
  connect: {
    server: 'app',
    async credentialOf(tokens, { endpoint, fetch, now }): Promise<ConnectedCredential> {
      const long = await metaTokenGet(endpoint, fetch, 'access_token', { grant_type: 'th_exchange_token', client_secret: endpoint.clientSecret, access_token: tokens.accessToken }, now);
      // The expiry is the credential's column only (not a plain field): each refresh moves it.
      return { secret: { accessToken: long.accessToken }, plain: {}, expiresAt: long.expiresAt ?? null };
    },
    refresh: {
      marginMs: REFRESH_MARGIN_MS,
      token: (values, { endpoint, fetch, now }) => metaTokenGet(endpoint, fetch, 'refresh_access_token', { grant_type: 'th_refresh_token', access_token: values.accessToken ?? '' }, now),
    },
  },
} as const satisfies ServiceModule<'threads'>;
