/**
 * Access and refresh tokens (docs/api.md#authentication), stored by SHA-256 hash only. Tokens
 * issued from one grant share a `family`; revoking the family ends every token in it (RFC 9700
 * §4.14).
 */
import { hash, randomBytes } from 'node:crypto';
import { type Db, preparedLookup } from './db.ts';
import type { TokenRow } from './tables.ts';

/**
 * The OAuth 2.0 scopes a client may be registered with and a token may carry (RFC 6749 §3.3,
 * docs/api.md#roles-and-scopes), in the order they are listed: reading the queue, moderating it,
 * reading the management resources, changing them, the contract's service credentials, connect
 * flows and webhooks, and its team. A scope narrows what a token may do within its consumer's role
 * on a contract; it never widens it.
 */
export const SCOPES = ['queue:read', 'queue:moderate', 'manage:read', 'manage:write', 'credentials', 'team'] as const;
export type Scope = (typeof SCOPES)[number];

/** Whether `name` is one of `SCOPES`. */
export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}

/**
 * The scope names of a space-delimited `scope` value (RFC 6749 §3.3: `scope-token *( SP
 * scope-token )`), in `SCOPES` order, duplicates dropped; `unknown` gets the names that are not
 * scopes. Empty or absent → [].
 */
export function parseScope(value: string | null | undefined): { scopes: Scope[]; unknown: string[] } {
  const names = (value ?? '').split(' ').filter(Boolean);
  return { scopes: SCOPES.filter((scope) => names.includes(scope)), unknown: names.filter((name) => !isScope(name)) };
}

/** The stored and sent form of a scope list: the names in `SCOPES` order, space-separated (RFC 6749 §3.3). */
export function formatScope(scopes: readonly string[]): string {
  return SCOPES.filter((scope) => scopes.includes(scope)).join(' ');
}

/**
 * SHA-256 hex of a token, the only form in which tokens, authorization codes and sign-in
 * sessions are stored (RFC 6749 §10.3: tokens are kept confidential in storage).
 */
export function tokenHash(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * A new single-use link token (invitation and password-reset links, docs/api.md#invitations,
 * docs/api.md#password-reset): 256 random bits, base64url (the form of `auth/secrets.ts`
 * `randomToken`), and its `tokenHash`, which alone is stored.
 */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: tokenHash(token) };
}

/** Stores issued tokens (by their hashes) in one insert. */
export async function insertTokens(db: Db, rows: TokenRow[]): Promise<void> {
  await db.insertInto('tokens').values(rows).execute();
}

/** The token stored under `tokenHash`, or undefined (prepared: every token-bearing request asks). */
export const findToken: (db: Db, tokenHash: string) => Promise<TokenRow | undefined> = preparedLookup((db, tokenHash: string) =>
  db.selectFrom('tokens').selectAll().where('tokenHash', '=', tokenHash),
);

/** The stored access token for `token` if it is known and not revoked (it may be expired). */
export async function lookupAccessToken(db: Db, token: string): Promise<TokenRow | undefined> {
  const row = await findToken(db, tokenHash(token));
  return row && row.kind === 'access' && !row.revoked ? row : undefined;
}

/**
 * Marks one unrevoked token revoked; returns false when it was already revoked (or unknown), so
 * that of two concurrent uses of one refresh token only one wins.
 */
export async function revokeToken(db: Db, tokenHash: string): Promise<boolean> {
  const result = await db.updateTable('tokens').set({ revoked: 1 }).where('tokenHash', '=', tokenHash).where('revoked', '=', 0).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revokes every token of `family`, the tokens issued from one grant (RFC 9700 §4.14). */
export async function revokeFamily(db: Db, family: string): Promise<void> {
  await db.updateTable('tokens').set({ revoked: 1 }).where('family', '=', family).execute();
}

/** One holder of access to a contract: an access token (by hash) and the contract it was let in to. */
export interface ContractAccess {
  tokenHash: string;
  contractId: string;
}

/** Most tokens asked about in one statement (`liveAccess` reads more in several). */
const ACCESS_PER_QUERY = 500;

/**
 * Which of `holders` still have their access at `now` (ms), as `tokenHash contractId` keys: the
 * access token is known, not revoked and not expired, its consumer (and the client it was issued
 * to, when another) is not disabled, the consumer still holds a grant to the contract and the
 * contract is active — what a token-bearing request is checked for (http/authenticate.ts,
 * http/public.ts `activeContract`), for many holders at once: one statement per 500 tokens, each
 * row found through primary keys. Used to end moderators' streams when access ends
 * (docs/api.md#queue-stream).
 */
export async function liveAccess(db: Db, holders: readonly ContractAccess[], now = Date.now()): Promise<Set<string>> {
  const live = new Set<string>();
  const tokens = [...new Set(holders.map((h) => h.tokenHash))];
  for (let start = 0; start < tokens.length; start += ACCESS_PER_QUERY) {
    const chunk = new Set(tokens.slice(start, start + ACCESS_PER_QUERY));
    const contracts = [...new Set(holders.filter((h) => chunk.has(h.tokenHash)).map((h) => h.contractId))];
    const rows = await db
      .selectFrom('tokens')
      .innerJoin('consumers as consumer', 'consumer.id', 'tokens.consumerId')
      .leftJoin('consumers as client', 'client.id', 'tokens.clientId')
      .innerJoin('grants', 'grants.consumerId', 'tokens.consumerId')
      .innerJoin('contracts', 'contracts.id', 'grants.contractId')
      .select(['tokens.tokenHash', 'grants.contractId'])
      .where('tokens.tokenHash', 'in', [...chunk])
      .where('tokens.kind', '=', 'access')
      .where('tokens.revoked', '=', 0)
      .where('tokens.expiresAt', '>', now)
      .where('consumer.disabled', '=', 0)
      .where((eb) => eb.or([eb('tokens.clientId', 'is', null), eb('tokens.clientId', '=', eb.ref('tokens.consumerId')), eb('client.disabled', '=', 0)]))
      .where('grants.contractId', 'in', contracts)
      .where('contracts.active', '=', 1)
      .execute();
    for (const row of rows) live.add(accessKey(row));
  }
  return live;
}

/** The key of a holder in `liveAccess`'s answer. */
export function accessKey(holder: ContractAccess): string {
  return `${holder.tokenHash} ${holder.contractId}`;
}
