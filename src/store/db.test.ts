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
import { claimDueInputs } from './inputs.ts';

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
      const claims = await Promise.all([db, other, db, other].map((d) => claimDueInputs(d, now, 50, 60_000)));
      const ids = claims.flat().map((input) => input.id);
      expect(ids.length).toBe(30);
      expect(new Set(ids).size).toBe(30);
      expect(claims.flat().every((input) => input.nextRunAt === now + 60_000)).toBe(true);
      expect(await claimDueInputs(db, now + 59_999, 50, 60_000)).toEqual([]);
      expect((await claimDueInputs(other, now + 60_000, 50, 60_000)).length).toBe(30);
    } finally {
      await close();
    }
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
