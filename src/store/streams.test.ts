import { describe, expect, it } from 'vitest';
import { build } from '../../test/helper.ts';
import { holdStream, releaseStream, saveStreamCursor } from './streams.ts';

describe('stream leases (docs/services.md#push-and-streams)', () => {
  it('one holder at a time; renewal, expiry, release and the cursor', async () => {
    const { db } = await build();
    const t = 1_000_000;
    expect(await holdStream(db, 'jetstream', 'a', 10_000, t)).toEqual({ held: true, cursor: null });
    // Another process cannot take it while the lease runs, even at its last millisecond.
    expect((await holdStream(db, 'jetstream', 'b', 10_000, t + 10_000)).held).toBe(false);
    // The holder renews it.
    expect((await holdStream(db, 'jetstream', 'a', 10_000, t + 5_000)).held).toBe(true);
    expect(await saveStreamCursor(db, 'jetstream', 'a', '1700000000000001', t + 6_000)).toBe(true);
    // A process that does not hold it cannot move the cursor.
    expect(await saveStreamCursor(db, 'jetstream', 'b', '99', t + 6_000)).toBe(false);
    // Once the lease has run out another takes it over, with the cursor the last holder saved.
    expect(await holdStream(db, 'jetstream', 'b', 10_000, t + 15_001)).toEqual({ held: true, cursor: '1700000000000001' });
    // The old holder has lost it: no renewal, no cursor.
    expect((await holdStream(db, 'jetstream', 'a', 10_000, t + 15_002)).held).toBe(false);
    expect(await saveStreamCursor(db, 'jetstream', 'a', '5', t + 15_002)).toBe(false);
    // Released: taken at once.
    await releaseStream(db, 'jetstream', 'b');
    expect((await holdStream(db, 'jetstream', 'a', 10_000, t + 15_003)).held).toBe(true);
    // Streams are independent.
    expect((await holdStream(db, 'mastodon:example.social', 'b', 10_000, t + 15_003)).held).toBe(true);
  });

  it('concurrent takers: exactly one wins', async () => {
    const { db } = await build();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => holdStream(db, 'race', `p${i}`, 10_000, 5_000)));
    expect(results.filter((r) => r.held)).toHaveLength(1);
  });
});
