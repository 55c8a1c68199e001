/**
 * Consumers (docs/api.md#authentication): users, who log in with a username and password, and
 * machine clients, who authenticate with a client id and secret. Secrets are stored as argon2id
 * hashes only (`auth/secrets.ts`).
 */
import { sql, type Transaction } from 'kysely';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { type Actor, recordAudit } from './audit.ts';
import { type Db, preparedLookup } from './db.ts';
import type { ConsumerRow, Database } from './tables.ts';
import { formatScope, parseScope, type Scope, SCOPES } from './tokens.ts';

/**
 * A consumer to create; `scopes`: the scopes a client may ask for (RFC 6749 §3.3), default all
 * (`SCOPES`); ignored for users.
 */
export type NewConsumer = Omit<ConsumerRow, 'id' | 'created' | 'redirectUris' | 'disabled' | 'scopes' | 'lastSignInAt'> & { redirectUris?: string[]; scopes?: readonly Scope[] };

/**
 * The domain of the addresses given to consumers created without an e-mail address
 * (docs/api.md#consumer-details): `.invalid` is reserved by RFC 2606 and RFC 6761 §6.4, so such
 * an address is unique, stable and can never reach anyone.
 */
export const CLIENT_EMAIL_DOMAIN = 'clients.sluice.invalid';

/** The address of a consumer created without one: `<consumer id>@clients.sluice.invalid`. */
export function derivedEmail(consumerId: string): string {
  return `${consumerId}@${CLIENT_EMAIL_DOMAIN}`;
}

/** The consumer's e-mail address as `/v1/oauth/me` gives it: its own, else the derived one; always a string. */
export function consumerEmail(consumer: Pick<ConsumerRow, 'id' | 'email'>): string {
  return consumer.email ?? derivedEmail(consumer.id);
}

/**
 * Inserts a consumer, with the derived address (`derivedEmail`) when `email` is null; throws on
 * a duplicate username, e-mail or client id (unique constraints).
 */
export async function createConsumer(db: Db, fields: NewConsumer): Promise<ConsumerRow> {
  const id = newId();
  const { scopes, ...rest } = fields;
  const row: ConsumerRow = {
    ...rest,
    email: fields.email ?? derivedEmail(id),
    id,
    created: iso(),
    redirectUris: JSON.stringify(fields.redirectUris ?? []),
    disabled: 0,
    scopes: fields.type === 'client' ? formatScope(scopes ?? SCOPES) : null,
    lastSignInAt: null,
  };
  await db.insertInto('consumers').values(row).execute();
  return row;
}

/** The consumer with this id, or undefined (prepared: every token-bearing request asks). */
export const findConsumer: (db: Db, id: string) => Promise<ConsumerRow | undefined> = preparedLookup((db, id: string) =>
  db.selectFrom('consumers').selectAll().where('id', '=', id),
);

/** The client (consumer of type `client`) with this client id, disabled or not, or undefined. */
export async function findClient(db: Db, clientId: string): Promise<ConsumerRow | undefined> {
  return db.selectFrom('consumers').selectAll().where('type', '=', 'client').where('clientId', '=', clientId).executeTakeFirst();
}

/** The user (consumer of type `user`) with this username, disabled or not, or undefined. */
export async function findUser(db: Db, username: string): Promise<ConsumerRow | undefined> {
  return db.selectFrom('consumers').selectAll().where('type', '=', 'user').where('username', '=', username).executeTakeFirst();
}

/** The consumer whose id, client id or username is `ref`, or undefined. */
export async function findConsumerByRef(db: Db, ref: string): Promise<ConsumerRow | undefined> {
  return db
    .selectFrom('consumers')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', ref), eb('username', '=', ref), eb('clientId', '=', ref)]))
    .executeTakeFirst();
}

/** Whether a consumer (user or client, disabled or not) has exactly this e-mail address: addresses are unique among consumers (docs/api.md#consumer-details). */
export async function emailTaken(db: Db, email: string): Promise<boolean> {
  return (await db.selectFrom('consumers').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;
}

/**
 * The scopes a client was registered with (docs/api.md#roles-and-scopes): what a token issued to
 * it may carry at most. [] for a user or a client registered with none.
 */
export function clientScopes(consumer: Pick<ConsumerRow, 'scopes'>): Scope[] {
  return parseScope(consumer.scopes).scopes;
}

/** Records that the consumer signed in at `now` (ms): a password or OpenID Connect sign-in, an accepted invitation, a client_credentials token (docs/api.md#team). */
export async function recordSignIn(db: Db, id: string, now = Date.now()): Promise<void> {
  await db.updateTable('consumers').set({ lastSignInAt: now }).where('id', '=', id).execute();
}

/**
 * The users whose e-mail address is `email` compared case-insensitively (lower-cased on both
 * sides), disabled ones included: the OpenID Connect sign-in's match (docs/api.md#browser-sign-in).
 */
export async function findUsersByEmail(db: Db, email: string): Promise<ConsumerRow[]> {
  return db.selectFrom('consumers').selectAll().where('type', '=', 'user').where(sql<string>`lower(email)`, '=', email.toLowerCase()).limit(2).execute();
}

/** The registered redirect URIs of a client (exact strings, RFC 6749 §3.1.2). */
export function redirectUrisOf(consumer: ConsumerRow): string[] {
  return JSON.parse(consumer.redirectUris) as string[];
}

/**
 * Disables a consumer and, in the same transaction, revokes all its tokens (as consumer or as the
 * client they were issued to) and ends its login sessions. Returns whether it was enabled before.
 */
export async function disableConsumer(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.updateTable('consumers').set({ disabled: 1 }).where('id', '=', id).where('disabled', '=', 0).executeTakeFirst();
    await trx
      .updateTable('tokens')
      .set({ revoked: 1 })
      .where((eb) => eb.or([eb('consumerId', '=', id), eb('clientId', '=', id)]))
      .execute();
    await trx.deleteFrom('loginSessions').where('consumerId', '=', id).execute();
    return Number(result.numUpdatedRows) > 0;
  });
}

/** What ending a consumer's sign-ins did: login sessions deleted, access and refresh tokens revoked. */
export interface SignInsEnded {
  sessions: number;
  tokens: number;
}

/**
 * Ends, inside `trx`, every login session of consumer `id`, revokes its unrevoked tokens (those
 * of family `keepFamily` excepted, when given) and uses up its unexchanged authorization codes,
 * so that none of them yields a token later.
 */
async function endSignIns(trx: Transaction<Database>, id: string, keepFamily?: string): Promise<SignInsEnded> {
  const sessions = await trx.deleteFrom('loginSessions').where('consumerId', '=', id).executeTakeFirst();
  let revoke = trx.updateTable('tokens').set({ revoked: 1 }).where('consumerId', '=', id).where('revoked', '=', 0);
  if (keepFamily !== undefined) revoke = revoke.where('family', '!=', keepFamily);
  const tokens = await revoke.executeTakeFirst();
  await trx.updateTable('authorizationCodes').set({ used: 1 }).where('consumerId', '=', id).where('used', '=', 0).execute();
  return { sessions: Number(sessions.numDeletedRows), tokens: Number(tokens.numUpdatedRows) };
}

/**
 * Records an account change of consumer `id` (resource `account`, docs/api.md#audit-trail) in
 * every contract it holds a grant to, inside `trx`: that is where the contract's admins look.
 * `after` must hold no secret (counts and flags only).
 */
export async function auditAccount(trx: Transaction<Database>, id: string, actor: Actor, action: string, after: Record<string, unknown>, now: number): Promise<void> {
  const grants = await trx.selectFrom('grants').select('contractId').where('consumerId', '=', id).orderBy('contractId').execute();
  for (const { contractId } of grants) await recordAudit(trx, { contractId, actor, resource: 'account', resourceId: id, action, after }, now);
}

const endedEntry = (ended: SignInsEnded) => ({ sessionsEnded: ended.sessions, revoked: ended.tokens });

/**
 * Sets a user's password hash and, in the same transaction, ends every login session and revokes
 * every token of the user (a password change must lock out whoever knew the old one), the tokens
 * of family `keepFamily` excepted (the signed-in request that changed it, docs/api.md#change-password).
 * With `actor`, the change is audited (action `password`) in each contract the user holds.
 * Returns the number of sessions ended and tokens revoked.
 */
export async function setPasswordHash(db: Db, id: string, passwordHash: string, options: { keepFamily?: string; actor?: Actor; now?: number } = {}): Promise<SignInsEnded> {
  return db.transaction().execute((trx) => writePasswordHash(trx, id, passwordHash, options));
}

/**
 * `setPasswordHash` inside the caller's transaction `trx` (a password-reset link sets the password
 * in the transaction that uses the link up: store/password-resets.ts).
 */
export async function writePasswordHash(trx: Transaction<Database>, id: string, passwordHash: string, options: { keepFamily?: string; actor?: Actor; now?: number } = {}): Promise<SignInsEnded> {
  await trx.updateTable('consumers').set({ passwordHash }).where('id', '=', id).where('type', '=', 'user').execute();
  const ended = await endSignIns(trx, id, options.keepFamily);
  if (options.actor) await auditAccount(trx, id, options.actor, 'password', endedEntry(ended), options.now ?? Date.now());
  return ended;
}

/**
 * Sign out everywhere (docs/api.md#sign-out-everywhere): ends every login session of consumer
 * `id` and revokes every token issued to it (as its consumer: a client's own tokens, not those of
 * the users it signed in), the request's own included; audited (action `logout-all`) in each
 * contract it holds, as `actor`.
 */
export async function signOutEverywhere(db: Db, id: string, actor: Actor, now = Date.now()): Promise<SignInsEnded> {
  return db.transaction().execute(async (trx) => {
    const ended = await endSignIns(trx, id);
    await auditAccount(trx, id, actor, 'logout-all', endedEntry(ended), now);
    return ended;
  });
}
