/**
 * Every consumer has an e-mail address (docs/api.md#consumer-details: `consumer_email` is always a
 * string): the consumers created without one, machine clients and the console's first-party
 * client among them, get `<consumer id>@clients.sluice.invalid` (`.invalid` is reserved by
 * RFC 2606 and RFC 6761 §6.4), the address `createConsumer` now gives at creation. Frozen: the
 * domain is written here, not imported. Idempotent: only consumers still without an address change.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('consumers')
    .set({ email: sql`id || '@clients.sluice.invalid'` })
    .where('email', 'is', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.updateTable('consumers').set({ email: null }).where('email', 'like', '%@clients.sluice.invalid').execute();
}
