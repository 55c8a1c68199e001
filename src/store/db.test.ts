/**
 * The storage layer's behaviour under concurrency, the same on SQLite and PostgreSQL. The
 * PostgreSQL run opens a second connection pool on the same schema, as a second process would;
 * SQLite is one process's database (a second synchronous connection in the same thread could
 * only wait on itself), so there both sides share the one connection.
 */
import { describe, expect, it } from 'vitest';
import { build, buildTenant } from '../../test/helper.ts';
import { createCollection } from './collections.ts';
import { createContract, findContract } from './contracts.ts';
import { type Db, isPostgres, openDb, preparedLookup } from './db.ts';
import { newRecordFields } from '../lib/time.ts';
import { newId } from '../lib/ids.ts';
import { politenessKey } from '../lib/politeness.ts';
import { claimDueInputs, insertInputs, politenessKeySql, releaseClaims, releaseSlot, updateInput } from './inputs.ts';
import type { NewInput } from './tables.ts';

function secondSide(db: Db, databaseUrl: string): { other: Db; close: () => Promise<void> } {
  if (!isPostgres(db)) return { other: db, close: async () => {} };
  const other = openDb(databaseUrl);
  return { other, close: () => other.destroy() };
}

describe('store under concurrency', () => {
  it('gives concurrent creates with one name distinct slugs', async () => {
    const { db, config } = await build();
    const { other, close } = secondSide(db, config.databaseUrl);
    try {
      const contracts = await Promise.all(Array.from({ length: 6 }, (_, i) => createContract(i % 2 ? other : db, 'Same Name', 'test')));
      expect(new Set(contracts.map((c) => c.slug)).size).toBe(6);
      const collections = await Promise.all(
        Array.from({ length: 4 }, (_, i) => createCollection(i % 2 ? other : db, contracts[0]!.id, { name: `Feed ${i}` }, 'test')),
      );
      expect(new Set(collections.map((c) => c.slug)).size).toBe(4);
    } finally {
      await close();
    }
  });

  it('hands each due input to one claimer only, until its lease runs out', async () => {
    const { app, db, config } = await build();
    const tenant = await buildTenant(db);
    const body = Array.from({ length: 30 }, (_, i) => ({
      service: 'rss',
      type: 'feed',
      input: `http://127.0.0.1:9/feed/${i}`,
      contractId: tenant.contract.id,
      collectionId: tenant.collection.id,
    }));
    const created = await app.inject({ method: 'POST', url: `/collection/inputs?access_token=${tenant.token}`, payload: body });
    expect(created.statusCode).toBe(201);
    const { other, close } = secondSide(db, config.databaseUrl);
    try {
      const now = Date.now() + 1000;
      // One host: slots enough for all (politeness is the next test's).
      const claims = await Promise.all([db, other, db, other].map((d) => claimDueInputs(d, now, 50, 60_000, 64)));
      const ids = claims.flat().map((input) => input.id);
      expect(ids.length).toBe(30);
      expect(new Set(ids).size).toBe(30);
      expect(claims.flat().every((input) => input.claimedUntil === now + 60_000)).toBe(true);
      expect(await claimDueInputs(db, now + 59_999, 50, 60_000, 64)).toEqual([]);
      expect((await claimDueInputs(other, now + 60_000, 50, 60_000, 64)).length).toBe(30);
    } finally {
      await close();
    }
  });
});

/** An input row of `tenant` due at `nextRunAt` (ms), straight into the store. */
function dueRow(tenant: { contract: { id: string }; collection: { id: string } }, service: string, input: string, nextRunAt: number, credentialId: string | null = null): NewInput {
  return {
    id: newId(), contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type: service === 'rss' ? 'feed' : 'user', input,
    filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
    nextRunAt, failures: 0, collected: 0, rejected: 0, credentialId, ...newRecordFields('test'),
  };
}

describe('politeness across claimers (issue 31 point 5)', () => {
  it('claims only inputs whose politeness key has a free slot, counting every claimer’s, and frees a slot when a poll ends', async () => {
    const { db, config } = await build();
    const acme = await buildTenant(db);
    const globex = await buildTenant(db, 'Globex');
    const t0 = Date.now() - 60_000;
    // 12 feeds on one busy host (due first), 3 on another, 3 API inputs of each contract's account.
    const rows = [
      ...Array.from({ length: 12 }, (_, i) => dueRow(acme, 'rss', `http://busy.example/feed/${i}`, t0 + i)),
      ...Array.from({ length: 3 }, (_, i) => dueRow(acme, 'rss', `https://Quiet.Example:8443/feed/${i}`, t0 + 100 + i)),
      ...Array.from({ length: 3 }, (_, i) => dueRow(acme, 'twitter', `acme${i}`, t0 + 200 + i)),
      ...Array.from({ length: 3 }, (_, i) => dueRow(globex, 'twitter', `globex${i}`, t0 + 300 + i)),
    ];
    await db.transaction().execute((trx) => insertInputs(trx, rows));
    const { other, close } = secondSide(db, config.databaseUrl);
    try {
      const now = Date.now();
      // Four processes claim at once, each with room for 50: two of each key in all, not two each.
      const claims = await Promise.all([db, other, db, other].map((d) => claimDueInputs(d, now, 50, 60_000, 2)));
      const byKey = Map.groupBy(claims.flat(), (input) => politenessKey(input));
      expect(Object.fromEntries([...byKey].map(([key, inputs]) => [key, inputs.length]))).toEqual({
        'busy.example': 2,
        'quiet.example': 2,
        [`twitter:${acme.contract.id}:default`]: 2,
        [`twitter:${globex.contract.id}:default`]: 2,
      });
      // The busy host's soonest due were taken; nothing more can start until a slot frees.
      expect(byKey.get('busy.example')!.map((input) => input.input).sort()).toEqual(['http://busy.example/feed/0', 'http://busy.example/feed/1']);
      expect(await claimDueInputs(other, now + 10, 50, 60_000, 2)).toEqual([]);
      // A poll ends: its slot is free for any process, for the next due input of that host only.
      const [done] = byKey.get('busy.example')!;
      await updateInput(db, done!.contractId, done!.id, { nextRunAt: now + 3000 }); // its outcome, as refresh.ts records it
      await releaseSlot(db, done!);
      const next = await claimDueInputs(other, now + 20, 50, 60_000, 2);
      expect(next.map((input) => input.input)).toEqual(['http://busy.example/feed/2']);
      // A process stops: the claims it gives back are due again at once.
      await releaseClaims(db, byKey.get('quiet.example')!);
      expect((await claimDueInputs(db, now + 30, 50, 60_000, 2)).map((input) => input.input).sort()).toEqual(['https://Quiet.Example:8443/feed/0', 'https://Quiet.Example:8443/feed/1']);
      // A claimer that died: its claims run out with the lease, and their slots with them.
      expect((await claimDueInputs(other, now + 120_000, 50, 60_000, 2)).length).toBe(8);
    } finally {
      await close();
    }
  });

  it.each([
    { service: 'rss', input: 'https://Feeds.Example.com:8443/a.xml', key: 'feeds.example.com' },
    { service: 'rss', input: 'HTTP://user:pw@feeds.example.com/a.xml?x=1#f', key: 'feeds.example.com' },
    { service: 'rss', input: 'http://127.0.0.2:8080/feed', key: '127.0.0.2' },
    { service: 'rss', input: 'http://[::1]:8080/feed', key: '[::1]' },
    { service: 'youtube', input: 'https://www.youtube.com/channel/UC123', key: 'www.youtube.com' },
    { service: 'twitter', input: 'nasa', key: 'twitter:<contract>:default' },
    { service: 'mastodon', input: 'tag@mastodon.social', key: 'mastodon:<contract>:cred-1', credentialId: 'cred-1' },
  ])('the politeness key of $service $input is $key, in JS and in SQL', async ({ service, input, key, credentialId }) => {
    const { db } = await build();
    const tenant = await buildTenant(db);
    const row = dueRow(tenant, service, input, 0, credentialId ?? null);
    const expected = key.replace('<contract>', tenant.contract.id);
    expect(politenessKey({ service, input, contractId: tenant.contract.id, credentialId: credentialId ?? null })).toBe(expected);
    await db.transaction().execute((trx) => insertInputs(trx, [row]));
    const found = await db.selectFrom('inputs').select(politenessKeySql(db).as('key')).where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(found.key).toBe(expected);
  });
});

describe('preparedLookup', () => {
  // Built once per dialect: the same function serves every database of that dialect.
  const byNameAndSlug = preparedLookup((db, name: string, slug: string) =>
    db.selectFrom('contracts').select(['id', 'name']).where('active', '=', 1).where('name', '=', name).where('slug', '=', slug),
  );

  it('answers as the query built anew does, each value in its place, constants kept', async () => {
    const { db } = await build();
    const a = await createContract(db, 'Alpha', 'test');
    const b = await createContract(db, 'Beta', 'test');
    const cases: [name: string, slug: string, expected: string | undefined][] = [
      ['Alpha', a.slug, a.id],
      ['Beta', b.slug, b.id],
      ['Alpha', b.slug, undefined],
      // Values that look like the stand-ins (less their NUL, which PostgreSQL refuses in text) are values like any other.
      ['stand-in 0', 'stand-in 1', undefined],
      ["Alpha' or '1'='1", a.slug, undefined],
    ];
    for (const [name, slug, expected] of cases) expect((await byNameAndSlug(db, name, slug))?.id).toBe(expected);
    // One value in two places (`id = ? or slug = ?`).
    expect((await findContract(db, a.slug))?.id).toBe(a.id);
    expect((await findContract(db, b.id))?.slug).toBe(b.slug);
    expect(await findContract(db, 'nobody')).toBeUndefined();
  });

  it('refuses a query whose value does not reach it as a parameter', async () => {
    const { db } = await build();
    const computed = preparedLookup((db, name: string) => db.selectFrom('contracts').select('id').where('name', '=', name.toUpperCase()));
    await expect(computed(db, 'Alpha')).rejects.toThrow(/does not reach/);
  });
});
