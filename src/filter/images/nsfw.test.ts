import { describe, expect, it } from 'vitest';
import { compile, evaluate, type FilterSet } from '../engine.ts';
import { setRuleProblems } from '../rules.ts';
import { hasUnscreened, nsfwRule, nsfwScore, withNsfw, withoutScores } from './nsfw.ts';

const scores = (porn: number, hentai = 0, sexy = 0) => ({ drawing: 0, hentai, neutral: 1 - porn - hentai - sexy, porn, sexy });
const image = (url: string, moderation?: object) => ({ type: 'image' as const, url, ...(moderation ? { moderation } : {}) });
const embed = { type: 'embed' as const, embed: '<iframe></iframe>' };

describe('media.nsfw (docs/filters.md#image-screening)', () => {
  it.each([
    ['no media', null, undefined, false],
    ['an embed only', [embed], undefined, false],
    ['one unscreened image', [image('a')], undefined, true],
    ['one scored image: porn + hentai + sexy', [image('a', scores(0.2, 0.1, 0.05))], 0.35, false],
    ['the highest of two images', [image('a', scores(0.1)), image('b', scores(0, 0, 0.7))], 0.7, false],
    ['one of two images unscreened: no score yet', [image('a', scores(0.1)), image('b')], undefined, true],
    ['scores that are not numbers count as unscreened', [image('a', { porn: '0', hentai: 0, sexy: 0 })], undefined, true],
    ['media that is not an array (a dry-run item may be anything)', 'pictures', undefined, false],
    ['media entries that are not objects', [null, 3, 'x'], undefined, false],
  ])('%s', (_name, media, score, unscreened) => {
    expect(nsfwScore({ media })).toBe(score);
    expect(hasUnscreened({ media })).toBe(unscreened);
  });

  it('the judged copy carries the highest score on every image, so gt and lt both compare the highest', () => {
    const item = { id: 'x_1', media: [image('a', scores(0.1)), embed, image('b', scores(0.8))] };
    const judged = withNsfw(item);
    expect(judged.media.map((m) => (m as { nsfw?: number }).nsfw)).toEqual([0.8, undefined, 0.8]);
    expect(item.media[0]).not.toHaveProperty('nsfw');
    const set = (operator: string, value: number): FilterSet => ({ id: 's', name: 's', rules: [{ operator, field: 'media.nsfw', value, not: false }], active: true });
    const decide = (operator: string, value: number) => evaluate(compile({ kind: 'set', set: set(operator, value) }, []), judged, 0).accepted;
    expect(decide('gt', 0.5)).toBe(false);
    // "lt 0.5" must not hold through the low-scored image: the highest is 0.8.
    expect(decide('lt', 0.5)).toBe(true);
    expect(decide('gt', 0.9)).toBe(true);
    // Unscreened: the field is missing, the rule false.
    expect(evaluate(compile({ kind: 'set', set: set('gt', 0) }, []), withNsfw({ media: [image('a')] }), 0).accepted).toBe(true);
  });

  it('drops the scores a source sent, keeping the rest of each medium', () => {
    const sent = { media: [{ ...image('a', scores(0)), width: 10 }, embed] };
    expect(withoutScores(sent as never)).toEqual({ media: [{ type: 'image', url: 'a', width: 10 }, embed] });
  });

  it('finds the first active set reading media.nsfw in a set or chain, its rules or preCondition', () => {
    const rule = { operator: 'gt', field: 'media.nsfw', value: 0.5, not: false };
    const other = { operator: 'exists', field: 'id', not: false };
    const a: FilterSet = { id: 'a', name: 'A', rules: [other], active: true };
    const b: FilterSet = { id: 'b', name: 'B', rules: [other, rule], active: true };
    const c: FilterSet = { id: 'c', name: 'C', rules: [other], preCondition: rule, active: true };
    expect(nsfwRule({ kind: 'set', set: a })).toBeUndefined();
    expect(nsfwRule({ kind: 'set', set: b })).toEqual({ set: { id: 'b', name: 'B' }, rule: 1 });
    expect(nsfwRule({ kind: 'set', set: { ...b, active: false } })).toBeUndefined();
    expect(nsfwRule({ kind: 'chain', chain: { id: 'k', name: 'K', sets: ['a', 'c', 'b'], active: true }, sets: [a, b, c] })).toEqual({ set: { id: 'c', name: 'C' }, rule: -1 });
    expect(nsfwRule({ kind: 'chain', chain: { id: 'k', name: 'K', sets: ['a', 'b'], active: false }, sets: [a, b] })).toBeUndefined();
  });

  it('is a number field: a number compares, a string is refused naming the value', () => {
    expect(setRuleProblems([[{ operator: 'gte', field: 'media.nsfw', value: 0.5, not: false }, 'rules[0]']])).toEqual([]);
    expect(setRuleProblems([[{ operator: 'gt', field: 'media.nsfw', value: 'high', not: false }, 'rules[0]']])).toMatchObject([{ path: 'rules[0].value' }]);
  });
});
