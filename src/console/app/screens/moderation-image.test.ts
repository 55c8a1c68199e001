/**
 * Which Moderation pictures the console blurs (src/console/app/screens/moderation-image.ts,
 * docs/filters.md#the-model): `porn + hentai + sexy` above `BLUR_ABOVE`, or a held item's picture
 * not classified yet. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { BLUR_ABOVE, nsfwScore, veilOf } from './moderation-image.ts';

const scores = (porn: number, hentai: number, sexy: number, drawing = 0) => ({ porn, hentai, sexy, drawing, neutral: Math.max(0, 1 - porn - hentai - sexy - drawing) });

describe('veilOf', () => {
  it('the threshold is one documented constant', () => expect(BLUR_ABOVE).toBe(0.5));

  it.each([
    ['a neutral photo', scores(0.01, 0.01, 0.02), false, undefined],
    ['a drawing', scores(0.02, 0.05, 0.01, 0.9), false, undefined],
    ['exactly at the threshold: not above it', scores(0.25, 0, 0.25), false, undefined],
    ['just above, made of three classes together', scores(0.2, 0.16, 0.15), false, 'explicit'],
    ['porn alone', scores(0.93, 0, 0.02), false, 'explicit'],
    ['hentai alone', scores(0, 0.8, 0), false, 'explicit'],
    ['sexy alone', scores(0, 0, 0.7), false, 'explicit'],
    ['held, scored low: held for another reason, shown', scores(0.01, 0, 0.01), true, undefined],
    ['held, scored high', scores(0.9, 0, 0), true, 'explicit'],
    ['held, not classified yet', undefined, true, 'unscreened'],
    ['not held, not classified (a collection that does not screen)', undefined, false, undefined],
  ] as const)('%s', (_name, moderation, held, reason) => {
    const veil = veilOf(moderation, held);
    expect(veil?.reason).toBe(reason);
    if (veil?.reason === 'explicit') expect(veil.score).toBeCloseTo(nsfwScore(moderation!), 10);
  });
});
