/**
 * The console's OAuth client (issue 12), present in every installation: a public client (no
 * secret; PKCE) with client id `sluice-console` and the registered redirect URI `/console/`.
 * A registered redirect URI that is a path is relative to API_URL (`first-party.ts`), so the
 * console follows API_URL without a migration when the address changes.
 * Frozen; named after the 2026-11-23 topics so that it runs after them (Kysely orders by name).
 */
import type { Kysely } from 'kysely';
import { newId } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // Idempotent: an installation that already has the client keeps it (and its id).
  const present = await db.selectFrom('consumers').select('id').where('clientId', '=', 'sluice-console').executeTakeFirst();
  if (present) return;
  await db
    .insertInto('consumers')
    .values({
      id: newId(),
      type: 'client',
      name: 'Sluice console',
      email: null,
      language: null,
      username: null,
      passwordHash: null,
      clientId: 'sluice-console',
      secretHash: null,
      redirectUris: JSON.stringify(['/console/']),
      created: new Date().toISOString(),
      disabled: 0,
    })
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('consumers').where('clientId', '=', 'sluice-console').execute();
}
