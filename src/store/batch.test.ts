import { describe, expect, it } from 'vitest';
import { build, buildTenant } from '../../test/helper.ts';
import { newId } from '../lib/ids.ts';
import { newRecordFields } from '../lib/time.ts';
import { MAX_PARAMETERS } from './batch.ts';
import { insertInputs } from './inputs.ts';
import type { NewInput } from './tables.ts';

describe('insertInputs', () => {
  it('stores more inputs than one statement may bind (1 400 × every column), all in one transaction', async () => {
    const { db } = await build();
    const tenant = await buildTenant(db);
    const now = Date.now();
    const rows: NewInput[] = Array.from({ length: 1400 }, (_, i) => ({
      id: newId(now), contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed',
      input: `https://example.org/${i}.xml`, filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1,
      ...newRecordFields('test', now), sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null, nextRunAt: now, failures: 0, collected: 0, rejected: 0,
    }));
    // The case the chunking exists for: one statement would bind more than SQLite allows.
    expect(rows.length * Object.keys(rows[0]!).length).toBeGreaterThan(MAX_PARAMETERS);
    await db.transaction().execute((trx) => insertInputs(trx, rows));
    const { n } = await db.selectFrom('inputs').select((eb) => eb.fn.countAll<number>().as('n')).where('contractId', '=', tenant.contract.id).executeTakeFirstOrThrow();
    expect(Number(n)).toBe(1400);
  });
});
