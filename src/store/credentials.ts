/**
 * Service credentials of contracts (docs/api.md#credentials): the lookups the collector makes,
 * their health, the key check at start and the re-encryption of `sluice admin rotate-key`. Create,
 * list, update and delete go through `records.ts` like the other named records. Reads by id
 * return the row whatever its contract: callers check access.
 */
import type { Transaction } from 'kysely';
import { currentSecretKey, keyFilePath, open, readKeyFile, seal, type SecretKey } from '../lib/secret-box.ts';
import { type Db, isPostgres } from './db.ts';
import { type Executor, insertRecord, type RecordRow } from './records.ts';
import type { CredentialRow, Database } from './tables.ts';

/** The contract's credential with this id, or undefined (none, or another contract's). */
export async function findCredential(db: Executor, contractId: string, id: string): Promise<CredentialRow | undefined> {
  return db.selectFrom('credentials').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/** The contract's active default credential for `service`, if any. */
export async function defaultCredential(db: Executor, contractId: string, service: string): Promise<CredentialRow | undefined> {
  return db
    .selectFrom('credentials')
    .selectAll()
    .where('contractId', '=', contractId)
    .where('service', '=', service)
    .where('isDefault', '=', 1)
    .where('active', '=', 1)
    .executeTakeFirst();
}

/** A masked hint of a secret: `…` and its last 4 characters when it has at least 16, else `…` alone. */
export function hintOf(secret: string): string {
  return secret.length >= 16 ? `…${secret.slice(-4)}` : '…';
}

/** The `hints` column of these secret fields: JSON, per field its `hintOf`. */
export function hints(secret: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(secret).map(([name, value]) => [name, hintOf(value)])));
}

/** The columns that hold `secret` (field → value): sealed with `key`, the key's id, the hints. */
export function sealedColumns(key: SecretKey, secret: Record<string, string>): { secret: string; keyId: string; hints: string } {
  return { secret: seal(key, JSON.stringify(secret)), keyId: key.id, hints: hints(secret) };
}

/**
 * Stores a new credential in one transaction: its `isDefault` as given (1, 0) or, when null,
 * 1 for the contract's first of its service; making it the default takes it from the others;
 * then the contract's failed inputs of the service are due at `now` (ms).
 */
export async function insertCredential(
  db: Db,
  row: RecordRow & { service: string; isDefault: number | null } & Record<string, unknown>,
  now: number,
  within?: (trx: Transaction<Database>, id: string) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const isDefault = row.isDefault ?? ((await defaultCredential(trx, row.contractId, row.service)) ? 0 : 1);
    if (isDefault) await clearDefault(trx, row.contractId, row.service, row.id);
    await insertRecord(trx, 'credentials', { ...row, isDefault });
    await wakeInputs(trx, row.contractId, row.service, now);
    await within?.(trx, row.id);
  });
}

/**
 * Replaces the tokens of credential `id` of `contractId` after the account was connected again:
 * the sealed secret and its hints, the non-secret fields merged into its settings, the expiry;
 * its health back to ok. Then the contract's failed inputs of the service are due at `now` (ms).
 * `within` runs in the same transaction with the row before and after (the audit trail's entry).
 * Returns false when the credential no longer exists in that contract.
 */
export async function reconnectCredential(
  db: Db,
  id: string,
  contractId: string,
  changes: { sealed: ReturnType<typeof sealedColumns>; plain: Record<string, string>; expiresAt: string | null; by: string },
  now: number,
  within?: (trx: Transaction<Database>, before: CredentialRow, after: CredentialRow) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('credentials').selectAll().where('id', '=', id).where('contractId', '=', contractId).executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('credentials')
      .set({
        ...changes.sealed,
        settings: JSON.stringify({ ...(JSON.parse(row.settings) as Record<string, string>), ...changes.plain }),
        expiresAt: changes.expiresAt,
        status: 'ok',
        lastError: null,
        lastModified: new Date(now).toISOString(),
        lastModifiedBy: changes.by,
      })
      .where('id', '=', id)
      .execute();
    await wakeInputs(trx, contractId, row.service, now);
    if (within) await within(trx, row, (await trx.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst())!);
    return true;
  });
}

/** Makes no other credential of the contract the default for `service` (before `exceptId` becomes it). */
export async function clearDefault(trx: Executor, contractId: string, service: string, exceptId: string): Promise<void> {
  await trx.updateTable('credentials').set({ isDefault: 0 }).where('contractId', '=', contractId).where('service', '=', service).where('id', '!=', exceptId).execute();
}

/**
 * Makes the contract's inputs of `service` that failed due at `now` (ms) with their failures
 * reset: a credential was connected, changed or removed, so an input parked for want of one
 * (docs/services.md#credentials) tries again.
 */
export async function wakeInputs(db: Executor, contractId: string, service: string, now: number): Promise<void> {
  await db
    .updateTable('inputs')
    .set({ nextRunAt: now, failures: 0 })
    .where('contractId', '=', contractId)
    .where('service', '=', service)
    .where('lastError', 'is not', null)
    .execute();
}

/** Inputs that name one of these credentials (they block its deletion). */
export async function inputsUsingCredentials(db: Executor, contractId: string, ids: string[]) {
  if (!ids.length) return [];
  return db.selectFrom('inputs').select(['id', 'credentialId', 'service', 'input']).where('contractId', '=', contractId).where('credentialId', 'in', ids).execute();
}

/** Records a successful use of the contract's credential `id` at `at` (ISO 8601): status ok, no error. Leaves `lastModified` alone. */
export async function markCredentialUsed(db: Db, contractId: string, id: string, at: string): Promise<void> {
  await db.updateTable('credentials').set({ status: 'ok', lastError: null, lastUsed: at }).where('contractId', '=', contractId).where('id', '=', id).execute();
}

/**
 * Records a permanent failure of the service with the contract's credential `id` (`message` as in the input's
 * status); returns whether it was ok until now (it just failed: `credential.failed`).
 */
export async function markCredentialFailed(db: Executor, contractId: string, id: string, message: string): Promise<boolean> {
  // One conditional update: of two polls failing at once, one sees the change (PostgreSQL re-checks the row).
  const changed = await db.updateTable('credentials').set({ status: 'failed', lastError: message }).where('contractId', '=', contractId).where('id', '=', id).where('status', '!=', 'failed').executeTakeFirst();
  if (Number(changed.numUpdatedRows) > 0) return true;
  await db.updateTable('credentials').set({ lastError: message }).where('contractId', '=', contractId).where('id', '=', id).execute();
  return false;
}

/**
 * Changes the contract's credential `id` as `work` decides while no other process does (the refresh ahead
 * of expiry, docs/api.md#connecting-an-account): on PostgreSQL in a transaction that holds the
 * row's lock (`select … for update`), so a second process waits and then sees the first one's
 * result; on SQLite, where one process owns the database, directly (the caller makes sure it
 * runs once per credential in its process). `work` gets the row as it is once locked and returns
 * the columns to change, or undefined for none. Returns the row after it, or undefined when the
 * credential no longer exists. What `work` throws is thrown (nothing changed).
 */
export async function changeCredentialLocked(db: Db, contractId: string, id: string, work: (row: CredentialRow) => Promise<Partial<CredentialRow> | undefined>): Promise<CredentialRow | undefined> {
  const run = async (trx: Executor, lock: boolean) => {
    let query = trx.selectFrom('credentials').selectAll().where('contractId', '=', contractId).where('id', '=', id);
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    const changes = await work(row);
    if (!changes) return row;
    await trx.updateTable('credentials').set(changes).where('contractId', '=', contractId).where('id', '=', id).execute();
    return { ...row, ...changes };
  };
  return isPostgres(db) ? db.transaction().execute((trx) => run(trx, true)) : run(db, false);
}

/** The tables holding values sealed with the secret key: service credentials, webhook signing secrets, WebSub subscription secrets. */
const SEALED = ['credentials', 'webhooks', 'websubSubscriptions'] as const;
const LABELS: Record<(typeof SEALED)[number], string> = { credentials: 'credential', webhooks: 'webhook', websubSubscriptions: 'WebSub subscription' };

/** The ids of the keys that sealed the stored credentials, webhook secrets, the secrets of the Mastodon apps of the connect flows and the users' TOTP secrets. */
export async function credentialKeyIds(db: Executor): Promise<string[]> {
  const ids = new Set<string>();
  for (const table of SEALED) for (const row of await db.selectFrom(table).select('keyId').distinct().execute()) ids.add(row.keyId);
  for (const row of await db.selectFrom('mastodonApps').select('keyId').distinct().execute()) ids.add(row.keyId);
  for (const row of await db.selectFrom('twoFactor').select('keyId').distinct().execute()) ids.add(row.keyId);
  return [...ids];
}

/**
 * The key this process uses, checked against the database before it starts: SLUICE_SECRET_KEY,
 * else the key file of DATA_DIR, which is created when there is none, unless the database already
 * holds credentials (sealed with a key this process does not have: with several processes on
 * PostgreSQL, SLUICE_SECRET_KEY must be set). Throws Error, saying what to do, when there is no
 * usable key or a stored credential was sealed with another one.
 */
export async function checkSecretKey(db: Executor, settings: { secretKey: string | undefined; dataDir: string }): Promise<SecretKey> {
  const ids = await credentialKeyIds(db);
  if (!settings.secretKey && ids.length && !readKeyFile(settings.dataDir)) {
    throw new Error(
      `The database holds service credentials encrypted with key ${ids.join(', ')}, but SLUICE_SECRET_KEY is not set and there is no key file ${keyFilePath(settings.dataDir)}: set SLUICE_SECRET_KEY to that key (or restore the key file); refusing to create a new key.`,
    );
  }
  const key = currentSecretKey(settings);
  const foreign = ids.filter((id) => id !== key.id);
  if (foreign.length) {
    throw new Error(`The database holds service credentials encrypted with key ${foreign.join(', ')}, not with the current key ${key.id}: set SLUICE_SECRET_KEY to the key they were encrypted with.`);
  }
  return key;
}

/**
 * Re-encrypts every credential, webhook secret, WebSub subscription secret (and Mastodon app and TOTP secret) sealed with `from` with `to`, in one transaction (docs/operations.md).
 * Returns how many were re-encrypted and how many were already sealed with `to`; throws (and
 * changes nothing) when one was sealed with neither key.
 */
export async function resealCredentials(db: Db, from: SecretKey, to: SecretKey): Promise<{ reencrypted: number; unchanged: number }> {
  return db.transaction().execute(async (trx: Transaction<Database>) => {
    let reencrypted = 0;
    let unchanged = 0;
    for (const table of SEALED) {
      const label = LABELS[table];
      const rows = await trx.selectFrom(table).select(['id', 'secret', 'keyId']).execute();
      for (const row of rows) {
        if (row.keyId === to.id) {
          unchanged++;
          continue;
        }
        if (row.keyId !== from.id) throw new Error(`${label} ${row.id} is encrypted with key ${row.keyId}, neither the current nor the new key; nothing was changed`);
        await trx.updateTable(table).set({ secret: seal(to, open(from, row.secret)), keyId: to.id }).where('id', '=', row.id).execute();
        reencrypted++;
      }
    }
    // The Mastodon apps' secrets (connect flows) are sealed with the same key; they are not counted as credentials.
    for (const app of await trx.selectFrom('mastodonApps').selectAll().where('keyId', '!=', to.id).execute()) {
      if (app.keyId !== from.id) throw new Error(`the Mastodon app of ${app.instance} is encrypted with key ${app.keyId}, neither the current nor the new key; nothing was changed`);
      await trx.updateTable('mastodonApps').set({ clientSecret: seal(to, open(from, app.clientSecret)), keyId: to.id }).where('instance', '=', app.instance).where('redirectUri', '=', app.redirectUri).execute();
    }
    // The users' TOTP secrets (two-factor sign-in) too; not counted as credentials either.
    for (const row of await trx.selectFrom('twoFactor').select(['consumerId', 'secret', 'keyId']).where('keyId', '!=', to.id).execute()) {
      if (row.keyId !== from.id) throw new Error(`the two-factor secret of consumer ${row.consumerId} is encrypted with key ${row.keyId}, neither the current nor the new key; nothing was changed`);
      await trx.updateTable('twoFactor').set({ secret: seal(to, open(from, row.secret)), keyId: to.id }).where('consumerId', '=', row.consumerId).execute();
    }
    return { reencrypted, unchanged };
  });
}
