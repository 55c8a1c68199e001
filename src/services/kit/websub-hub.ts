/**
 * The pure parts of WebSub (W3C Recommendation, https://www.w3.org/TR/websub/; docs/services.md#websub):
 * discovering a feed's hub and topic (§4: an HTTP `Link` header, else the document's own
 * `<link rel="hub">` / `rel="self"`), the topic of a YouTube channel at YouTube's hub, and the
 * check of a notification's `X-Hub-Signature` (§8: `<method>=<hex HMAC of the raw body>`, keyed
 * with the subscription's `hub.secret`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FeedLinks } from './feed.ts';

/** What an input subscribes to: the hub to ask and the topic URL to name. */
export interface WebsubTarget {
  hub: string;
  topic: string;
}

/**
 * The `rel="hub"` and `rel="self"` targets of an HTTP `Link` header (RFC 8288 §3: `<uri>`
 * followed by `;`-separated parameters, links separated by `,`; a `rel` may list several
 * space-separated types). Relative targets resolve against `base`; unreadable ones are skipped.
 */
export function linkHeaderLinks(value: string | undefined, base: string): FeedLinks {
  const links: FeedLinks = { hubs: [], self: null };
  if (!value) return links;
  for (const match of value.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]*(?:"[^"]*"[^;,]*)?)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '');
    const types = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    let url: string;
    try {
      url = new URL(match[1]!.trim(), base).href;
    } catch {
      continue;
    }
    if (types.includes('hub')) links.hubs.push(url);
    if (types.includes('self') && links.self === null) links.self = url;
  }
  return links;
}

/**
 * The hub and topic of a fetched feed (W3C WebSub §4): the `Link` header's when it names a hub
 * (its `self`, else the document's, else the fetched URL is the topic), else the document's
 * links; the first http(s) hub; undefined when none.
 */
export function discoverTarget(header: FeedLinks, document: FeedLinks, fetchedUrl: string): WebsubTarget | undefined {
  const from = header.hubs.length ? header : document;
  const hub = from.hubs.find((url) => /^https?:\/\//i.test(url));
  if (!hub) return undefined;
  const topic = [from.self, header.self, document.self, fetchedUrl].find((url): url is string => !!url && /^https?:\/\//i.test(url))!;
  return { hub, topic };
}

/** YouTube's topic URL of channel `channelId` (YouTube Data API, "Subscribe to push notifications"). */
export function youtubeTopic(channelId: string): string {
  return `https://www.youtube.com/xml/feeds/videos.xml?${new URLSearchParams({ channel_id: channelId })}`;
}

const CHANNEL_ID = /^UC[\w-]{22}$/;

/**
 * The channel id of a YouTube `channel` input: the input itself when it is a channel id
 * (`UC…`), else the one its uploads playlist (`UU…`, kept in the poll's state) names; undefined
 * for a `@handle` not resolved yet.
 */
export function youtubeChannelId(input: string, state: Record<string, unknown>): string | undefined {
  const value = input.trim();
  if (CHANNEL_ID.test(value)) return value;
  const playlist = typeof state.playlist === 'string' ? state.playlist : '';
  return /^UU[\w-]{22}$/.test(playlist) ? `UC${playlist.slice(2)}` : undefined;
}

/** The HMAC methods a hub may sign with (W3C WebSub §8.1: sha1, sha256, sha384, sha512). */
const METHODS = new Set(['sha1', 'sha256', 'sha384', 'sha512']);

/**
 * Whether `header` (`X-Hub-Signature`, `<method>=<hex>`) is the HMAC of `body` with `secret` by a
 * method W3C WebSub §8.1 names (sha256 is what hubs should use; sha1, sha384, sha512 are
 * accepted). The digests are compared in constant time; an absent, malformed or unknown-method
 * signature is false.
 */
export function verifySignature(header: string | undefined, secret: string, body: Uint8Array): boolean {
  const match = /^\s*(sha1|sha256|sha384|sha512)=([0-9a-f]+)\s*$/i.exec(header ?? '');
  if (!match || !METHODS.has(match[1]!.toLowerCase())) return false;
  const expected = createHmac(match[1]!.toLowerCase(), secret).update(body).digest();
  const given = Buffer.from(match[2]!, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
