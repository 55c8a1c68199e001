/**
 * Addresses of the console's screens (the route table, routes.ts, lists the screens). Every
 * screen lives under a contract: `/console/contracts/<contract id>/<segment>[/…]`, except the
 * signed-in user's own Account screen (`ACCOUNT_PATH`), which belongs to no contract. Kept apart
 * from the route table so that a screen links to another without importing the table that
 * imports it.
 */

/** The address of a screen of a contract: `screenPath('c1', 'sources')` → `/console/contracts/c1/sources`. */
export function screenPath(contractId: string, segment: string, rest = ''): string {
  return `/console/contracts/${encodeURIComponent(contractId)}${segment ? `/${segment}` : ''}${rest}`;
}

/** The contract id and screen segment of an address, when it is a screen's. */
export function locate(path: string): { contractId?: string; segment?: string } {
  const match = /^\/console\/contracts\/([^/]+)(?:\/([^/]+))?/.exec(path);
  return match ? { contractId: decodeURIComponent(match[1]!), segment: match[2] ?? '' } : {};
}

/** The Account screen (password, two-factor sign-in, sign out everywhere): the user's, under no contract. */
export const ACCOUNT_PATH = '/console/account';

/**
 * `path` (with or without a query) naming the collection shown: `?collection=<id>` set, replacing
 * one it had, the rest of the query kept; `path` unchanged without an id.
 */
export function withCollection(path: string, collectionId: string | undefined): string {
  if (!collectionId) return path;
  const url = new URL(path, 'http://console.invalid');
  url.searchParams.set('collection', collectionId);
  return `${url.pathname}${url.search}`;
}
