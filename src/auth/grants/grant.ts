/**
 * The shape every grant module shares (as in panva/node-oidc-provider's lib/actions/grants):
 * its `grantType`, whether public clients (no secret) may use it, and a handler that turns the
 * authenticated client and the request body into tokens or throws an OAuth error.
 */
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import type { ConsumerRow } from '../../store/tables.ts';
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
