/**
 * The source's own title an input shows (docs/api.md#inputs, `title`): what the connector read
 * (a feed's title), else, for an input of one account (`user`, `page`, `channel`: a person's,
 * page's or channel's posts), the display name most of the items collected carry, their author
 * being the account (a repost's author is another's, so the most frequent name, not the first).
 * Tags, keywords, places and playlists have no own title: their text is their name. Pure.
 */
import type { ContentItem } from '../item.ts';

/** Input types that are one account's posts (every service's row names them so: services/kit/row.ts `types`). */
const ACCOUNT_TYPES: ReadonlySet<string> = new Set(['user', 'page', 'channel']);

/** The most a title holds (characters; the connector's feed titles are cut alike). */
const MAX_TITLE = 200;

/** The input's title after a poll of `type` that read `connectorTitle` and `items`; undefined when none is known. */
export function sourceTitle(type: string, connectorTitle: string | undefined, items: readonly Pick<ContentItem, 'author'>[]): string | undefined {
  if (connectorTitle) return connectorTitle;
  if (!ACCOUNT_TYPES.has(type)) return undefined;
  const counts = new Map<string, number>();
  for (const item of items) {
    const name = item.author?.name?.trim();
    if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  let best: string | undefined;
  for (const [name, count] of counts) if (best === undefined || count > counts.get(best)!) best = name;
  return best?.slice(0, MAX_TITLE);
}
