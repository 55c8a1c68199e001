/**
 * What the services read from "any instance" share (Mastodon, Pixelfed, Lemmy:
 * docs/services.md#mastodon, #pixelfed, #lemmy): the input forms that name the instance and the
 * guard on them, the Mastodon-API paging helpers (RFC 8288 `Link`, numeric id strings), and the
 * rule that a credential's token goes to its own instance only.
 *
 * The guard has two layers, as for Mastodon since its first version:
 * - the management API (`checkInput` of each row, built from `INSTANCE_HOST` and
 *   `LOCAL_ORIGIN` of `row.ts`) accepts a host name with a letter TLD in the handle and https forms, so
 *   IP literals in any notation (`127.0.0.1`, `2130706433`, `0x7f.1`, `[::1]`) and `localhost` are
 *   refused; `http://host:port/…` only with ALLOW_PRIVATE_FETCH;
 * - every request goes through the collector's guarded fetcher (`collect/fetch.ts`,
 *   `lib/addresses.ts`), which refuses a host that resolves to a non-public address.
 */
import { SourceError, type CollectContext, type CollectResult, type SourceInput } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { getJson, quotaExhaustedUntil } from './http.ts';
import { arr, idOf, isoDate, itemUrl, language, num, obj, str, type Json } from './normalize.ts';
import { INSTANCE_HOST } from './row.ts';

/** An instance input read: the origin requests go to, its host (keys item ids), and the name (tag, account, community, query). */
export interface InstanceInput {
  origin: string;
  host: string;
  name: string;
}

/** How a service names a source on an instance: in a URL of the instance, and as a `name@host` handle. */
export interface InstanceForms {
  /** The name in an instance URL (already parsed), or null when the URL does not name one. May throw URIError (read as a bad input). */
  url: (url: URL) => string | null;
  /** A handle: group 1 the name, group 2 the host (a host name with a letter TLD). */
  handle: RegExp;
}

/**
 * Reads an instance input: an http(s) URL of the instance (`http://` only with a port or to a
 * loopback host: a local instance), or a handle `name@host` (meaning `https://host`).
 * @throws {SourceError} permanent, from `bad()`, for any other text.
 */
export function parseInstanceInput(input: string, forms: InstanceForms, bad: () => SourceError): InstanceInput {
  const value = input.trim();
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    let name: string | null;
    try {
      url = new URL(value);
      name = forms.url(url);
    } catch {
      throw bad();
    }
    const loopback = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(url.hostname);
    if (url.protocol === 'http:' && !loopback && url.port === '') throw bad();
    if (!name) throw bad();
    return { origin: url.origin, host: url.host, name };
  }
  const m = forms.handle.exec(value);
  if (!m || !new RegExp(`^${INSTANCE_HOST}$`, 'i').test(m[2]!)) throw bad();
  return { origin: `https://${m[2]!.toLowerCase()}`, host: m[2]!.toLowerCase(), name: m[1]! };
}

/** The URL of `rel` in an RFC 8288 `Link` header, or null. */
export function linkRel(header: string | undefined, rel: string): string | null {
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]*)>(.*)$/.exec(part.trim());
    if (m && new RegExp(`;\\s*rel="?[^"]*\\b${rel}\\b`).test(m[2]!)) return m[1]!;
  }
  return null;
}

/** Whether decimal id string `a` is newer (larger) than `b`, compared without losing precision. */
export const newerId = (a: string, b: string) => (a.length !== b.length ? a.length > b.length : a > b);

/**
 * The `Authorization` header for requests to `origin`: the credential's token
 * (docs/api.md#credentials) when the credential is of that very instance, else none (a token is
 * never sent to another instance).
 */
export function authorizationFor(settings: { accessToken: string | undefined; instance: string | undefined }, origin: string): Record<string, string> {
  if (!settings.accessToken || !settings.instance) return {};
  let own: string;
  try {
    own = new URL(/^https?:\/\//i.test(settings.instance) ? settings.instance : `https://${settings.instance}`).origin;
  } catch {
    return {};
  }
  return own === origin ? { authorization: `Bearer ${settings.accessToken}` } : {};
}

/** Statuses per page asked of a Mastodon-API timeline (Mastodon's maximum). */
export const STATUS_PAGE = 40;
/** Pages read in one poll after the first (the newest page only on the first poll). */
const MAX_PAGES = 5;

/**
 * Reads a Mastodon-API status list (docs.joinmastodon.org/api/guidelines/#pagination, which
 * Pixelfed follows): the first poll (no `minId`) reads the newest page; later ones ask
 * `min_id=<minId>` and, while pages are full, again from the new cursor (at most 5 pages, and
 * none after a page whose answer says the rate limit is used up). The
 * cursor is the `min_id` of the `Link` header's `rel="prev"`, else the newest status id; it never
 * goes back. `list` is the URL with its query (`?limit=…`); `nextRunAt` (epoch ms) is set when a
 * response says the rate limit is used up.
 * @throws {SourceError} as `getJson` does, or when the body is not a list.
 */
export async function readStatusPages(
  ctx: CollectContext,
  page: { list: string; origin: string; host: string; service: string; headers: Record<string, string>; minId: string | null },
  itemOf: (status: Json) => ContentItem | null,
): Promise<{ items: ContentItem[]; minId: string | null; nextRunAt: number | undefined }> {
  const { list, origin, host, service } = page;
  let minId = page.minId;
  let url: string | null = minId ? `${list}&min_id=${minId}` : list;
  const items: ContentItem[] = [];
  let nextRunAt: number | undefined;
  // A page whose answer uses the rate limit up ends the walk: its statuses are kept, and asking
  // on would only be refused (429) and fail the poll with them.
  for (let n = 0; url && n < (page.minId ? MAX_PAGES : 1) && nextRunAt === undefined; n++) {
    const res = await getJson(ctx, url, page.headers);
    nextRunAt = quotaExhaustedUntil(res.headers, ctx.now);
    if (!Array.isArray(res.body)) throw new SourceError(`${service} ${host} answered without a list of statuses`);
    const statuses = res.body.map(obj);
    items.push(...statuses.map(itemOf).filter((i) => i !== null));
    const prev = linkRel(res.headers.link, 'prev');
    const prevMin = prev ? new URL(prev, origin).searchParams.get('min_id') : null;
    const newest = statuses.map((s) => idOf(s.id)).filter((i) => i !== null).reduce<string | null>((a, b) => (!a || newerId(b, a) ? b : a), null);
    const cursor = prevMin ?? newest;
    if (cursor && (!minId || newerId(cursor, minId))) minId = cursor;
    // A full page after min_id may leave newer statuses: ask again from the new cursor.
    url = statuses.length >= STATUS_PAGE && minId ? `${list}&min_id=${minId}` : null;
  }
  return { items, minId, nextRunAt };
}

/**
 * What a Mastodon-API status gives every service alike (docs/services.md#mastodon, #pixelfed):
 * the item fields `text` (its HTML `content`), `tags`, `url`, `date` and `author` (in that
 * order, as the items list them), its counts for kudos, and its language. `status` is the status
 * itself (a reblog already unwrapped).
 */
export function statusFields(status: Json) {
  const account = obj(status.account);
  return {
    fields: {
      text: str(status.content) ?? '',
      tags: arr(status.tags).map((t) => str(obj(t).name)).filter((t) => t !== null),
      url: itemUrl(status.url, status.uri, account.url),
      date: isoDate(status.created_at) ?? new Date(0).toISOString(),
      author: { name: str(account.display_name) ?? str(account.username), username: str(account.acct), userid: idOf(account.id), url: str(account.url) },
    },
    counts: { favourites: num(status.favourites_count), reblogs: num(status.reblogs_count), replies: num(status.replies_count) },
    language: language(status.language),
  };
}

/**
 * A poll of a Mastodon-API `user` or `tag` input (docs/services.md#mastodon, #pixelfed): a user's
 * account id is looked up once (`/api/v1/accounts/lookup`, kept in the state while the input is
 * the same), then its statuses without replies; a tag its timeline; both through
 * `readStatusPages`. State: `{minId, accountId, accountOf}`.
 * @throws {SourceError} permanent when the instance knows no such account; as `readStatusPages` otherwise.
 */
export async function collectStatuses(
  ctx: CollectContext,
  input: SourceInput,
  state: Record<string, unknown>,
  read: { service: string; instance: InstanceInput; headers: Record<string, string>; itemOf: (status: Json) => ContentItem | null },
): Promise<CollectResult> {
  const { service, instance: { origin, host, name }, headers } = read;
  let accountId: string | null = null;
  let list: string;
  if (input.type === 'user') {
    accountId = state.accountOf === input.input && typeof state.accountId === 'string' ? state.accountId : await lookupAccount(ctx, service, origin, name, headers);
    list = `${origin}/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?limit=${STATUS_PAGE}&exclude_replies=true`;
  } else {
    list = `${origin}/api/v1/timelines/tag/${encodeURIComponent(name)}?limit=${STATUS_PAGE}`;
  }
  const { items, minId, nextRunAt } = await readStatusPages(ctx, { list, origin, host, service, headers, minId: typeof state.minId === 'string' ? state.minId : null }, read.itemOf);
  const next = { ...(minId && { minId }), ...(accountId && { accountId, accountOf: input.input }) };
  return { items, state: next, ...(nextRunAt && { nextRunAt }) };
}

/** The account id of `acct` on the instance. @throws {SourceError} permanent, not the credential's, when the instance answers without one. */
async function lookupAccount(ctx: CollectContext, service: string, origin: string, acct: string, headers: Record<string, string>): Promise<string> {
  const { body } = await getJson(ctx, `${origin}/api/v1/accounts/lookup?${new URLSearchParams({ acct })}`, headers);
  const id = idOf(obj(body).id);
  if (!id) throw new SourceError(`${service} account ${acct} not found`, { permanent: true, credential: false });
  return id;
}
