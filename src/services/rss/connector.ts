/**
 * The feed connector (`rss`): fetches a feed with conditional requests and reads it with
 * `parseFeed` (`feed.ts`) into content items (`docs/services.md`), in a worker thread and with
 * at most MAX_FEED_ENTRIES entries per poll (`feed-pool.ts`).
 */
import { SourceError, type Connector } from '../connector.ts';
import { discoverTarget, linkHeaderLinks } from '../kit/websub-hub.ts';
import { readFeed } from '../kit/feed-pool.ts';
import { retryAfterMs } from '../kit/http.ts';

/**
 * The `rss` connector, type `feed`: `input.input` is the feed URL. Sends `If-None-Match` /
 * `If-Modified-Since` from `state.etag` / `state.lastModified`; 304 gives no items and the same
 * state; 2xx gives the parsed items, the entries dropped or dated at the poll time (`warnings`)
 * and `{etag, lastModified}` from the response, with `websub: {hub, topic}` when the feed names a
 * WebSub hub (HTTP `Link` header or the document's links, `../kit/websub-hub.ts`; the subscriber
 * subscribes to it, docs/services.md#websub), the feed's own `title` when it has one, and the
 * item ids of its Atom tombstones (`deleted`, RFC 6721; `refresh.ts` removes them). Throws
 * SourceError `HTTP <status>` otherwise (with `retryAfterMs` on 429 and 503), or from readFeed.
 */
export const rss: Connector = {
  service: 'rss',
  async collect(input, state, ctx) {
    const headers: Record<string, string> = {
      Accept: 'application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, */*;q=0.8',
    };
    if (typeof state.etag === 'string') headers['If-None-Match'] = state.etag;
    if (typeof state.lastModified === 'string') headers['If-Modified-Since'] = state.lastModified;
    const res = await ctx.fetch(input.input, headers);
    if (res.status === 304) return { items: [], state };
    if (res.status === 429 || res.status === 503) {
      throw new SourceError(`HTTP ${res.status}`, { retryAfterMs: retryAfterMs(res.headers['retry-after'], ctx.now) });
    }
    if (res.status < 200 || res.status > 299) throw new SourceError(`HTTP ${res.status}`);
    const url = res.url || input.input;
    const { items, deleted, warnings, links, title } = await readFeed(res.body, res.headers['content-type'], url, new Date(ctx.now));
    const next: Record<string, unknown> = {};
    if (res.headers.etag) next.etag = res.headers.etag;
    if (res.headers['last-modified']) next.lastModified = res.headers['last-modified'];
    const websub = discoverTarget(linkHeaderLinks(res.headers.link, url), links, url);
    if (websub) next.websub = websub;
    return { items, state: next, warnings, ...(title ? { title } : {}), ...(deleted.length ? { deleted } : {}) };
  },
};
