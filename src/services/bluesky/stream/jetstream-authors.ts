/**
 * The authors of streamed posts (docs/services.md#bluesky-jetstream): their handles and display
 * names from `app.bsky.actor.getProfiles` (`blueskyProfiles`), looked up in batches and kept in an
 * LRU cache for an hour. When the lookup fails, posts go with their DIDs for `PROFILES_PAUSE_MS`
 * rather than wait for the AppView; an `identity` event (a changed handle) forgets that author.
 */
import { LRUCache } from 'lru-cache';
import type { BlueskyAuthor } from '../connector.ts';

/** After a failed profiles lookup, items are stored with DIDs for this long, ms. */
export const PROFILES_PAUSE_MS = 30_000;

/** The authors known to the listener. */
export interface AuthorCache {
  /** The author of `did` as last looked up (`{}` when the AppView knew nothing), or undefined. */
  get(did: string): BlueskyAuthor | undefined;
  /** Forgets `did` (its next post looks it up again). */
  forget(did: string): void;
  /**
   * Looks up the DIDs not known yet, in one call of `lookup`, unless a lookup failed less than
   * `PROFILES_PAUSE_MS` ago. Never throws: a failure is handed to `onError` and starts the pause.
   */
  fill(dids: Iterable<string>, now: number): Promise<void>;
}

/** An empty cache whose lookups go through `lookup` (`blueskyProfiles` with the listener's fetch). */
export function authorCache(lookup: (dids: string[]) => Promise<Map<string, BlueskyAuthor>>, onError: (error: unknown) => void): AuthorCache {
  const profiles = new LRUCache<string, BlueskyAuthor>({ max: 10_000, ttl: 3_600_000 });
  let downUntil = 0;
  return {
    get: (did) => profiles.get(did),
    forget: (did) => void profiles.delete(did),
    async fill(dids, now) {
      const missing = [...new Set(dids)].filter((did) => !profiles.has(did));
      if (!missing.length || now < downUntil) return;
      try {
        const found = await lookup(missing);
        for (const did of missing) profiles.set(did, found.get(did) ?? {});
      } catch (error) {
        downUntil = now + PROFILES_PAUSE_MS;
        onError(error);
      }
    },
  };
}
