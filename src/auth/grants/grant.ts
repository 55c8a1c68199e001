/**
 * The shape every grant module shares (as in panva/node-oidc-provider's lib/actions/grants):
 * its `grantType`, whether public clients (no secret) may use it, and a handler that turns the
 * authenticated client and the request body into tokens or throws an OAuth error.
 */
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { parseScope, type Scope } from '../../store/tokens.ts';
import { invalidScope } from '../oauth-errors.ts';
import type { IssuedTokens } from '../tokens.ts';

export interface GrantContext {
  db: Db;
  config: Config;
  client: ConsumerRow;
  body: Record<string, unknown>;
  now: number;
}

export interface Grant {
  grantType: string;
  allowPublicClients: boolean;
  handler(ctx: GrantContext): Promise<IssuedTokens>;
}

/**
 * The parameters of a body (form or JSON) or query string the handler checks itself
 * (`handlerValidated` in auth/schema.ts): the object as a record, or `{}` when it is none.
 */
export function fields(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The body parameter `name` as a non-empty string, or undefined (arrays count as missing). */
export function param(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' && value ? value : undefined;
}

/**
 * The scope the token request asks for (its `scope` parameter, RFC 6749 §3.3, §4.4.2, §6) within
 * `allowed` (what the client was registered with, or what the refresh token carries), or
 * undefined when it names none (the caller's default applies). Throws 400 `invalid_scope` for an
 * unknown scope name or one outside `allowed` (RFC 6749 §5.2).
 */
export function requestedScope(body: Record<string, unknown>, allowed: readonly Scope[]): Scope[] | undefined {
  if (body.scope === undefined) return undefined;
  if (typeof body.scope !== 'string') throw invalidScope('scope must be a space-separated list of scope names.');
  const { scopes, unknown } = parseScope(body.scope);
  if (unknown.length) throw invalidScope(`Unknown scope ${unknown.join(', ')}.`);
  const outside = scopes.filter((scope) => !allowed.includes(scope));
  if (outside.length) throw invalidScope(`Scope ${outside.join(' ')} is beyond what may be granted here (${allowed.join(' ') || 'nothing'}).`);
  return scopes;
}
