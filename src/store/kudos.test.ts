import { describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant, seedItems } from '../../test/helper.ts';
import { createCollection } from './collections.ts';
import { openDb } from './db.ts';
import { claimKudosDue } from './kudos.ts';

describe('claimKudosDue (docs/services.md#kudos-refresh)', () => {
  it('hands each due item to one claimer, even to two database handles claiming at once (two processes)', async () => {
    const { db, config } = await build();
    const tenant = await buildTenant(db);
    const ranked = await createCollection(db, tenant.contract.id, { name: 'Ranked', type: 'ranked' }, 'test');
    const now = Date.now();
    const items = Array.from({ length: 60 }, (_, i) => buildItem({ id: `twitter_${1000 + i}`, service: 'twitter', type: 'status', date: new Date(now - (i + 1) * 60_000).toISOString() }));
    await seedItems(db, { ...tenant, collection: ranked }, items);
    // A realtime collection's items and a service without a batch lookup are never claimed.
    await seedItems(db, tenant, [buildItem({ id: 'twitter_9', service: 'twitter', type: 'status', date: new Date(now - 60_000).toISOString() })]);
    await seedItems(db, { ...tenant, collection: ranked }, [buildItem({ id: 'rss_9', date: new Date(now - 60_000).toISOString() })]);
    const other = openDb(config.databaseUrl);
    try {
      const later = Date.now() + 2000;
      const options = { refreshS: 1, windowS: 86_400, services: ['twitter'], limit: 40 };
      const [a, b] = await Promise.all([claimKudosDue(db, later, options), claimKudosDue(other, later, options)]);
      const ids = [...a, ...b].map((item) => item.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(items.map((item) => item.id).sort());
      expect(a.every((item) => item.collectionId === ranked.id)).toBe(true);
      // Claimed: not due again before the interval has passed.
      expect(await claimKudosDue(db, later + 500, options)).toEqual([]);
      expect((await claimKudosDue(db, later + 1000, options)).length).toBe(40);
    } finally {
      await other.destroy();
    }
  });
});
