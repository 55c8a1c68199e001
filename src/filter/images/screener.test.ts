/**
 * The screener with its real worker threads (nsfwjs, sharp): a flat image gets five scores; one
 * contract's flood is refused past its share (`busy`: back-pressure) and does not delay another
 * contract's image by more than the image running; an image past the time limit is
 * `unscreenable` and the screener goes on.
 */
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { createScreener, type ScreenOutcome } from './screener.ts';

const flat = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 40, b: 40 } } }).png().toBuffer();
const screener = createScreener({ threads: 1, queuedPerContract: 4 });
afterAll(() => screener.close());

describe('image screener', () => {
  it('scores a flat image in the five classes', async () => {
    const outcome = await screener.screen('c1', flat);
    expect('moderation' in outcome && Object.keys(outcome.moderation).sort()).toEqual(['drawing', 'hentai', 'neutral', 'porn', 'sexy']);
  });

  it("refuses a contract's images past its share and serves another contract's in the next turn", async () => {
    const done: string[] = [];
    const flood = Array.from({ length: 12 }, (_, i) => screener.screen('flood', flat).then((outcome: ScreenOutcome) => ('busy' in outcome || done.push(`flood${i}`), outcome)));
    const other = screener.screen('other', flat).then((outcome) => (done.push('other'), outcome));
    const outcomes = await Promise.all(flood);
    // One running and four waiting: the other seven are refused at once.
    expect(outcomes.filter((outcome) => 'busy' in outcome)).toHaveLength(7);
    expect('moderation' in (await other)).toBe(true);
    // Served right after the flood's image that was running, before the four waiting.
    expect(done.indexOf('other')).toBeLessThanOrEqual(1);
  });

  it('an image past the time limit is unscreenable; the next one is screened', async () => {
    const hasty = createScreener({ threads: 1, timeoutMs: 1 });
    try {
      expect(await hasty.screen('c', flat)).toEqual({ unscreenable: 'took longer than 1 ms' });
    } finally {
      await hasty.close();
    }
    expect('moderation' in (await screener.screen('c', flat))).toBe(true);
  });
});
