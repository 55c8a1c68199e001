/**
 * The shape of a row of the service table (`../table.ts`, docs/services.md) and the helpers its
 * rows are written with: one row per service, in its folder (`../<name>/row.ts`).
 */

/** A base URL setting: its environment variable and default (everything before the API's own paths). */
export type Url = readonly [variable: string, fallback: string];
/**
 * A credential: its environment variable, and whether it is a secret (masked by `sluice config`).
 * `optional`: the service works without it (an OAuth token beside an API key, a Mastodon token
 * for an instance's authenticated reads); it does not count for "configured" or as missing.
 */
export type Credential = { readonly variable: string; readonly secret: boolean; readonly optional?: boolean };

/** A service's row of the table: what configuration, input validation and read parameters know of it. */
export interface ServiceRow {
  /** The input types of the service, as `type` of an input (`docs/api.md`, inputs). */
  readonly types: readonly string[];
  /** Base URLs, by setting name; each has a default. */
  readonly urls: Readonly<Record<string, Url>>;
  /** Credentials, by setting name; none has a default (unset → undefined). */
  readonly credentials: Readonly<Record<string, Credential>>;
  /**
   * The problem with an input's `input` text for this service, or null when it is well formed.
   * `allowPrivateFetch`: ALLOW_PRIVATE_FETCH is on (local instances, tests), so forms naming a
   * local server (Mastodon's `http://host:port/…`) are accepted too. `type`: the input's type,
   * for services whose types take different texts (absent where the caller checks none).
   */
  readonly checkInput?: (input: string, options: { allowPrivateFetch: boolean; type?: string }) => string | null;
  /** Its access tokens expire (Graph API user and page tokens): its credentials also take `expiresAt` (docs/api.md#credentials). */
  readonly credentialExpires?: boolean;
  /**
   * Its items are a publisher's own entries (feeds), not posts that may share an article: an
   * item's target is its own URL, and a status is keyed by text only when its URL is its media's
   * (docs/api.md#duplicates, `lib/item-keys.ts`).
   */
  readonly ownEntries?: boolean;
  /**
   * Its items carry no author id or username, only a display name: an author is named by
   * `author.name` where one must be named (an erasure, docs/api.md#erasure).
   */
  readonly authorsByName?: boolean;
}

/** A secret credential (masked by `sluice config`) read from `variable`. */
export const secret = (variable: string): Credential => ({ variable, secret: true });
/** A credential that is not secret (an account id, an instance) read from `variable`. */
export const plain = (variable: string): Credential => ({ variable, secret: false });
/** `credential`, marked as not needed for the service to work. */
export const optional = (credential: Credential): Credential => ({ ...credential, optional: true });

/** An absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
