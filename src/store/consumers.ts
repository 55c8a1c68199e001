/**
 * Consumers (decisions §3): users, who log in with a username and password, and machine
 * clients, who authenticate with a client id and secret. Secrets are stored as argon2id hashes
 * only (`auth/secrets.ts`).
 */
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import type { Db } from './db.ts';
import type { ConsumerRow } from './tables.ts';

export type NewConsumer = Omit<ConsumerRow, 'id' | 'created' | 'redirectUris'> & { redirectUris?: string[] };

/** Inserts a consumer; throws on a duplicate username, e-mail or client id (unique constraints). */
export async function createConsumer(db: Db, fields: NewConsumer): Promise<ConsumerRow> {
  const row: ConsumerRow = { ...fields, id: newId(), created: iso(), redirectUris: JSON.stringify(fields.redirectUris ?? []) };
  await db.insertInto('consumers').values(row).execute();
  return row;
}

export async function findConsumer(db: Db, id: string): Promise<ConsumerRow | undefined> {
  return db.selectFrom('consumers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findClient(db: Db, clientId: string): Promise<ConsumerRow | undefined> {
  return db.selectFrom('consumers').selectAll().where('type', '=', 'client').where('clientId', '=', clientId).executeTakeFirst();
}

export async function findUser(db: Db, username: string): Promise<ConsumerRow | undefined> {
  return db.selectFrom('consumers').selectAll().where('type', '=', 'user').where('username', '=', username).executeTakeFirst();
}
