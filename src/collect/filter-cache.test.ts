/**
 * The filter cache against a real database: reused while nothing changed, reloaded under a new key when
 * a list changes through another database handle (another process), and the precedence of
 * input, collection and contract filters with inactive and vanished filters counting as absent.
 */
import { describe, expect, it } from 'vitest';
import { build, buildTenant } from '../../test/helper.ts';
import { compile, evaluate } from '../filter/engine.ts';
import { iso } from '../lib/time.ts';
import { setContractFilter } from '../store/contracts.ts';
import { openDb } from '../store/db.ts';
import { createFilterCache } from './filter-cache.ts';

const always = JSON.stringify({ operator: 'exists', field: 'id', not: false });
const audit = { created: iso(), createdBy: 't', lastModified: iso(1), lastModifiedBy: 't' };

describe('createFilterCache', () => {
  it('reuses the compiled filter until a resource changes, also through another handle', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const contractId = tenant.contract.id;
    await ctx.db.insertInto('filterLists').values({ id: 'a'.repeat(24), contractId, name: 'l', type: 'patterns', entries: '["/spam/"]', active: 1, ...audit }).execute();
    const rules = JSON.stringify([{ operator: 'patternin', field: 'title', listId: 'a'.repeat(24), not: false }]);
    await ctx.db.insertInto('filterSets').values({ id: 'b'.repeat(24), contractId, name: 's', rules, preCondition: always, anyRule: 0, active: 1, ...audit }).execute();
    await ctx.db.insertInto('filterSets').values({ id: 'c'.repeat(24), contractId, name: 'off', rules: '[]', preCondition: always, anyRule: 0, active: 0, ...audit }).execute();
    const cache = createFilterCache(ctx.db);
    const input = { contractId, collectionId: tenant.collection.id, filterId: 'b'.repeat(24) };

    const first = (await cache.governing(input))!;
    expect(first.filterId).toBe('b'.repeat(24));
    expect((await cache.governing(input))!.filter).toBe(first.filter);
    expect((await cache.governing(input))!.key).toBe(first.key);
    expect(evaluate(compile(first.filter, first.lists), { id: 'x', title: 'ham' }, 0).accepted).toBe(true);

    const other = openDb(ctx.config.databaseUrl);
    try {
      await other.updateTable('filterLists').set({ entries: '["/ham/"]', lastModified: iso(2) }).where('id', '=', 'a'.repeat(24)).execute();
    } finally {
      await other.destroy();
    }
    const second = (await cache.governing(input))!;
    expect(second.key).not.toBe(first.key);
    expect(evaluate(compile(second.filter, second.lists), { id: 'x', title: 'ham' }, 0).accepted).toBe(false);

    // Precedence: input → collection → contract; inactive or vanished filters are absent.
    const level = (filterId: string | null) => cache.governing({ ...input, filterId }).then((g) => g?.filterId);
    expect(await level(null)).toBeUndefined();
    await setContractFilter(ctx.db, contractId, 'b'.repeat(24), 't');
    expect(await level(null)).toBe('b'.repeat(24));
    expect(await level('c'.repeat(24))).toBe('b'.repeat(24));
    expect(await level('d'.repeat(24))).toBe('b'.repeat(24));
    await ctx.db.updateTable('collections').set({ filterId: 'c'.repeat(24) }).where('id', '=', tenant.collection.id).execute();
    expect(await level(null)).toBe('b'.repeat(24));
    await ctx.db.updateTable('filterSets').set({ active: 1, lastModified: iso(3) }).where('id', '=', 'c'.repeat(24)).execute();
    expect(await level(null)).toBe('c'.repeat(24));
    expect(await level('b'.repeat(24))).toBe('b'.repeat(24));
  });
});
