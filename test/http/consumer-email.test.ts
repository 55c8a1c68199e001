/**
 * `consumer_email` is always a string (issue 14 item 3; docs/api.md#consumer-details): a machine
 * client registered without an address gets `<consumer id>@clients.sluice.invalid`, stable and
 * unique, and migration 2026-11-26-client-emails gives one to the consumers created before,
 * the console's first-party client included.
 */
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { CONSOLE_CLIENT_ID } from '../../src/first-party.ts';
import { CLIENT_EMAIL_DOMAIN, createConsumer, findClient } from '../../src/store/consumers.ts';
import { MIGRATIONS, migrateToLatest } from '../../src/store/migrate.ts';
import * as clientEmails from '../../src/store/migrations/2026-11-26-client-emails.ts';
import { build, buildClient, buildUser } from '../helper.ts';

const me = async (app: Awaited<ReturnType<typeof build>>['app'], token: string) => {
  const res = await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(token)}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { consumer_id: string; consumer_email: string };
};

describe('consumer_email', () => {
  it('is <consumer id>@clients.sluice.invalid for a client created without one: stable, and unique per client', async () => {
    const { app, db } = await build();
    const one = await buildClient(db, 'one');
    const two = await buildClient(db, 'two');
    const first = await me(app, one.token);
    expect(first.consumer_email).toBe(`${one.consumer.id}@${CLIENT_EMAIL_DOMAIN}`);
    expect(CLIENT_EMAIL_DOMAIN.endsWith('.invalid')).toBe(true);
    // The same on every request, and with a new token.
    const { access_token: again } = await issueTokens(db, one.consumer.id, { ttlSeconds: 60, withRefresh: false });
    expect((await me(app, again)).consumer_email).toBe(first.consumer_email);
    expect((await me(app, two.token)).consumer_email).toBe(`${two.consumer.id}@${CLIENT_EMAIL_DOMAIN}`);
  });

  it("keeps a client's and a user's own address", async () => {
    const { app, db } = await build();
    const consumer = await createConsumer(db, { type: 'client', name: 'own', email: 'robot@example.com', language: null, username: null, passwordHash: null, clientId: 'own-client', secretHash: null });
    const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 60, withRefresh: false });
    expect((await me(app, token)).consumer_email).toBe('robot@example.com');
    const user = await buildUser(db, { username: 'erika' });
    expect((await me(app, user.token)).consumer_email).toBe('erika@example.com');
  });

  it('is given by the migration to the consumers created before it, the console client included; running it again changes nothing', async () => {
    const { app, db } = await build();
    const old = await buildClient(db, 'old');
    const user = await buildUser(db, { username: 'kept' });
    // As the previous version left them: clients without an address.
    await db.updateTable('consumers').set({ email: null }).where('type', '=', 'client').execute();
    // The migrations after it did not run either (they are idempotent, so they run again).
    await db.deleteFrom('schema_migrations' as never).where('name' as never, '>=', '2026-11-26-client-emails' as never).execute();
    expect(MIGRATIONS).toContain('2026-11-26-client-emails');
    expect(await migrateToLatest(db)).toEqual(MIGRATIONS.filter((name) => name >= '2026-11-26-client-emails'));
    const console = await findClient(db, CONSOLE_CLIENT_ID);
    expect(console!.email).toBe(`${console!.id}@${CLIENT_EMAIL_DOMAIN}`);
    expect((await me(app, old.token)).consumer_email).toBe(`${old.consumer.id}@${CLIENT_EMAIL_DOMAIN}`);
    expect((await me(app, user.token)).consumer_email).toBe('kept@example.com');
    const before = await db.selectFrom('consumers').select(['id', 'email']).orderBy('id').execute();
    await clientEmails.up(db);
    expect(await db.selectFrom('consumers').select(['id', 'email']).orderBy('id').execute()).toEqual(before);
  });
});
