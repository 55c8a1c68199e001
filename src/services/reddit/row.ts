/**
 * The service table's row of reddit (Reddit's Data API with an app's client credentials;
 * docs/services.md#reddit): its input types, base URLs and credentials read from the environment,
 * and the check of an input, with the parsing of an input's text that the connector shares.
 * Listed in `../table.ts`.
 *
 * Names (reddit's open-source r2, `r2/lib/validator`): a subreddit is letters, digits or `_`,
 * not starting with `_`, 3–21 characters for new ones (`subreddit_rx`) and 2 for a few old ones
 * (r/tv, r/de), so 2–21 are taken; a user 3–20 letters, digits, `_` or `-` (`user_rx`); a search
 * query at most 512 characters (the `q` of `GET /search`, https://www.reddit.com/dev/api#GET_search).
 */
import { type ServiceRow, secret, plain, optional } from '../kit/row.ts';

const SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/;
const USER = /^[A-Za-z0-9_-]{3,20}$/;
/** The longest search query Reddit takes (`q`, 512 characters). */
export const MAX_QUERY = 512;
/** Reddit's own web hosts, whose `/r/…` and `/user/…` page URLs an input may be given as. */
const HOSTS = new Set(['reddit.com', 'www.reddit.com', 'old.reddit.com', 'new.reddit.com', 'np.reddit.com', 'm.reddit.com']);

/**
 * The path segments of `text`: of a page URL on one of Reddit's own hosts (https, no port or
 * user), or of a path (`r/pics`, `/u/spez`); undefined for a URL of any other host or scheme.
 */
function segments(text: string): string[] | undefined {
  const value = text.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return undefined;
    }
    if (url.protocol !== 'https:' || url.port || url.username || url.password || !HOSTS.has(url.hostname.toLowerCase())) return undefined;
    return url.pathname.split('/').filter(Boolean);
  }
  return value.split('/').filter(Boolean);
}

/**
 * The subreddit an input names (`pics`, `r/pics`, `/r/pics/`, `https://www.reddit.com/r/pics/new/`),
 * or undefined when it names none (another host, `..`, a multireddit `a+b`, a name Reddit would refuse).
 */
export function subredditOf(text: string): string | undefined {
  const parts = segments(text);
  if (!parts) return undefined;
  const name = parts.length === 1 ? parts[0] : parts[0]?.toLowerCase() === 'r' && parts.length <= 3 ? parts[1] : undefined;
  if (parts.length === 3 && !['new', 'hot', 'top', 'rising'].includes(parts[2]!.toLowerCase())) return undefined;
  return name && SUBREDDIT.test(name) ? name : undefined;
}

/**
 * The user an input names (`spez`, `u/spez`, `/user/spez`, `https://www.reddit.com/user/spez/submitted/`),
 * or undefined when it names none.
 */
export function userOf(text: string): string | undefined {
  const parts = segments(text.trim().replace(/^@/, ''));
  if (!parts) return undefined;
  const prefixed = ['u', 'user'].includes(parts[0]?.toLowerCase() ?? '');
  const name = parts.length === 1 ? parts[0] : prefixed && parts.length <= 3 ? parts[1] : undefined;
  if (parts.length === 3 && parts[2]!.toLowerCase() !== 'submitted') return undefined;
  return name && USER.test(name) ? name : undefined;
}

/** The search words of an input: trimmed, 1–512 characters without control characters; undefined otherwise. */
export function queryOf(text: string): string | undefined {
  const value = text.trim();
  return value && value.length <= MAX_QUERY && !/[\u0000-\u001f\u007f]/.test(value) ? value : undefined;
}

export const row = {
  types: ['subreddit', 'search', 'user'],
  urls: {
    apiUrl: ['REDDIT_API_URL', 'https://oauth.reddit.com'],
    /** Where the app's token is asked for (client_credentials grant). */
    tokenUrl: ['REDDIT_TOKEN_URL', 'https://www.reddit.com/api/v1/access_token'],
  },
  // The app's client id and secret (application-only OAuth); `username`, the Reddit account
  // that registered the app, is named in the User-Agent as Reddit's API rules ask.
  credentials: { clientId: plain('REDDIT_CLIENT_ID'), clientSecret: secret('REDDIT_CLIENT_SECRET'), username: optional(plain('REDDIT_USERNAME')) },
  checkInput(input, { type }) {
    if (type === 'subreddit') return subredditOf(input) ? null : 'input must be a subreddit name (2–21 letters, digits or _), r/name, or its https://www.reddit.com/r/name URL';
    if (type === 'user') return userOf(input) ? null : 'input must be a Reddit user name (3–20 letters, digits, _ or -), u/name, or its https://www.reddit.com/user/name URL';
    if (type === 'search') return queryOf(input) ? null : `input must be search words of 1–${MAX_QUERY} characters without control characters`;
    return null;
  },
} as const satisfies ServiceRow;
