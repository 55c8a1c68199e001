/**
 * The collection a screen shows (issue 33, "the console remembers"): the one the address names
 * (`?collection=<id>`), else the one the user was shown last on this contract (remember.ts), else
 * the only one, else (unless the screen asks) the first. The choice is written into the address
 * (replacing the entry, so Back is not doubled) and remembered for the other screens and the next
 * visit. A remembered collection the contract no longer has is forgotten silently; an address
 * naming one it does not have is reported (`unknown`): a screen that asks shows none, another
 * shows its fallback.
 */
import { useLocation } from 'preact-iso/router';
import { useEffect } from 'preact/hooks';
import { withCollection } from './paths.ts';
import { forgetCollection, rememberCollection, rememberedCollection } from './remember.ts';
import type { Collection } from './resources.ts';
import { useSession } from './session.ts';

export interface CollectionChoice {
  /** The collection shown, once the contract's collections are known and one is chosen. */
  chosen?: Collection;
  /** The id of the address when the contract has no such collection. */
  unknown?: string;
  /** Opens the current screen on another collection (a new history entry). */
  choose(collectionId: string): void;
}

/**
 * The collection of the module's description among `collections` (undefined while loading) of
 * `contractId`. `ask`: with several collections and none named or remembered, choose none (the
 * screen asks) instead of the first.
 */
export function useChosenCollection(contractId: string, collections: Collection[] | undefined, { ask = false } = {}): CollectionChoice {
  const { url, query, route } = useLocation();
  const user = useSession().me?.consumer_id;
  const remembered = rememberedCollection(user, contractId);
  const stale = Boolean(collections && remembered && !collections.some((c) => c._id === remembered));
  // A link carrying a remembered collection that is gone counts as naming none.
  const named = (stale && query.collection === remembered ? undefined : query.collection) || undefined;
  let chosen: Collection | undefined;
  if (collections) {
    const fallback = () => collections.find((c) => c._id === remembered) ?? (collections.length === 1 || !ask ? collections[0] : undefined);
    chosen = named ? (collections.find((c) => c._id === named) ?? (ask ? undefined : fallback())) : fallback();
  }
  const unknown = collections && named && !collections.some((c) => c._id === named) ? named : undefined;
  const chosenId = chosen?._id;
  useEffect(() => {
    if (!collections) return;
    if (stale) forgetCollection(user, contractId);
    if (!chosenId) return;
    rememberCollection(user, contractId, chosenId);
    if (named !== chosenId) route(withCollection(url, chosenId), true);
  }, [collections, chosenId, named, stale, user, contractId]);
  return { chosen, unknown, choose: (collectionId: string) => route(withCollection(url, collectionId)) };
}
