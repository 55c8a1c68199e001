/**
 * The "newest first" page walk that Vimeo, Flickr, VK and Bluesky share: it keeps a cursor of
 * what was seen between polls, so that a poll reads only the new entries.
 */

/**
 * What a newest-first connector keeps between polls: the date of the newest item seen and the
 * ids seen at exactly that date (so items sharing it are neither lost nor taken twice).
 */
export interface Seen {
  latest?: string;
  ids?: string[];
}

/**
 * Walks a newest-first listing (Vimeo, Flickr, VK, Bluesky) from its first page and keeps the
 * entries newer than `seen`: the first poll (no `seen.latest`) reads one page; later polls read
 * on (`next` cursor) while every unpinned entry of a page is new, at most `maxPages` pages.
 * Returns the new entries (each id once) and the updated `Seen`.
 */
export async function newestFirst<T>(options: {
  seen: Seen;
  maxPages: number;
  page: (cursor: string | undefined) => Promise<{ entries: T[]; next?: string | undefined }>;
  key: (entry: T) => { id: string; date: string; pinned?: boolean } | null;
}): Promise<{ entries: T[]; seen: Seen }> {
  const { seen } = options;
  const known = new Set(seen.ids ?? []);
  const isNew = (k: { id: string; date: string }) =>
    !seen.latest || k.date > seen.latest || (k.date === seen.latest && !known.has(k.id));
  const fresh = new Map<string, { entry: T; date: string }>();
  let cursor: string | undefined;
  for (let n = 0; n < (seen.latest ? options.maxPages : 1); n++) {
    const { entries, next } = await options.page(cursor);
    let reachedSeen = false;
    for (const entry of entries) {
      const k = options.key(entry);
      if (!k) continue;
      if (isNew(k)) fresh.set(k.id, { entry, date: k.date });
      else if (!k.pinned) reachedSeen = true;
    }
    if (reachedSeen || !next || entries.length === 0) break;
    cursor = next;
  }
  let latest = seen.latest;
  let ids = seen.ids ?? [];
  for (const [id, { date }] of fresh) {
    if (!latest || date > latest) {
      latest = date;
      ids = [id];
    } else if (date === latest) ids = [...ids, id];
  }
  return { entries: [...fresh.values()].map((f) => f.entry), seen: latest ? { latest, ids } : {} };
}
