/**
 * What the console remembers of a signed-in user's choices across screens and visits (issue 33,
 * docs/architecture.md#the-console): the contract last used and, per contract, the collection
 * last shown, in localStorage under `sluice.remember.<consumer id>` as
 * `{"contract": "<id>", "collections": {"<contract id>": "<collection id>"}}`, so two people
 * sharing a browser each find their own. Nothing secret is kept: ids only. A remembered id the
 * user no longer has is dropped by the caller (`forget…`) without a word.
 *
 * Every function takes the consumer id (`me.consumer_id`); without one (not signed in yet) reads
 * answer undefined and writes do nothing. Storage that cannot be used (private mode, full) is
 * treated as empty.
 */

interface Remembered {
  contract?: string;
  collections: Record<string, string>;
}

const PREFIX = 'sluice.remember.';

function read(user: string | undefined): Remembered {
  if (!user) return { collections: {} };
  try {
    const value = JSON.parse(localStorage.getItem(PREFIX + user) ?? '{}') as Partial<Remembered>;
    return { contract: typeof value.contract === 'string' ? value.contract : undefined, collections: value.collections && typeof value.collections === 'object' ? value.collections : {} };
  } catch {
    return { collections: {} };
  }
}

function write(user: string | undefined, change: (value: Remembered) => Remembered): void {
  if (!user) return;
  try {
    localStorage.setItem(PREFIX + user, JSON.stringify(change(read(user))));
  } catch {
    // Storage refused: the console works without remembering.
  }
}

/** The contract `user` used last, if any. */
export function rememberedContract(user: string | undefined): string | undefined {
  return read(user).contract;
}

/** Remembers `contractId` as the one `user` used last. */
export function rememberContract(user: string | undefined, contractId: string): void {
  if (read(user).contract !== contractId) write(user, (value) => ({ ...value, contract: contractId }));
}

/** Forgets the remembered contract (no longer granted) and its collection. */
export function forgetContract(user: string | undefined, contractId: string): void {
  write(user, ({ contract, collections }) => {
    const { [contractId]: _dropped, ...rest } = collections;
    return { contract: contract === contractId ? undefined : contract, collections: rest };
  });
}

/** The collection of `contractId` that `user` was shown last, if any. */
export function rememberedCollection(user: string | undefined, contractId: string): string | undefined {
  const id = read(user).collections[contractId];
  return typeof id === 'string' ? id : undefined;
}

/** Remembers `collectionId` as the collection of `contractId` that `user` was shown last. */
export function rememberCollection(user: string | undefined, contractId: string, collectionId: string): void {
  if (rememberedCollection(user, contractId) !== collectionId) write(user, (value) => ({ ...value, collections: { ...value.collections, [contractId]: collectionId } }));
}

/** Forgets the remembered collection of `contractId` (deleted, or no longer the user's). */
export function forgetCollection(user: string | undefined, contractId: string): void {
  if (rememberedCollection(user, contractId) !== undefined) {
    write(user, (value) => {
      const { [contractId]: _dropped, ...rest } = value.collections;
      return { ...value, collections: rest };
    });
  }
}
