/**
 * A rule that saves is exactly a rule that runs (issue 13; docs/filters.md): over every
 * operator × field kind × value kind, a rule the filter engine compiles is accepted by
 * POST /collection/sets, and a rule the API refuses does not compile. The API side is the real
 * HTTP route on a real database, lists included; the engine side is `compile` on the same lists.
 */
import { describe, expect, it } from 'vitest';
import { compile, FilterError, type FilterList, type Rule } from '../../src/filter/engine.ts';
import { OPERATORS } from '../../src/filter/rules.ts';
import { setupRecords } from './records.ts';

const operators = [...Object.keys(OPERATORS), 'contains', 'toString'];

/** One field of each kind, the alias, a per-service counter, and two that are no field. */
const fields = ['text', 'tags', 'kudos.score', 'kudos.twitter_likes', 'date', 'media', 'user', 'author.foo', 'updated', 'author..name', 'constructor'];

/** Value kinds; `list:strings` and `list:patterns` stand for a listId of such a list. */
const values: Record<string, unknown> = {
  none: undefined,
  string: 'news',
  empty: '',
  number: 5,
  zero: 0,
  negative: -1,
  fraction: 1.5,
  date: '2024-01-01',
  dateTime: '2024-01-01T10:00:00.000Z',
  dateTimeNoOffset: '2024-01-01T10:00',
  dateTimeOffset: '2024-01-01T10:00+02:00',
  dateWithSpace: '2024-01-01 10:00Z',
  dateLowercase: '2024-01-01t10:00z',
  impossibleDate: '2024-02-31',
  pattern: '/spam/i',
  badPattern: '/(spam/',
  badFlag: '/spam/g',
  strings: ['spam', 'ham'],
  mixed: ['spam', 42],
  emptyArray: [],
  patterns: ['/spam/i', '/^ham$/m'],
  badPatterns: ['/spam/', '/(?=ham)/'],
  'list:strings': 'list:strings',
  'list:patterns': 'list:patterns',
  'list:strings+value': 'list:strings+value',
};

function rules(ids: { strings: string; patterns: string }): { name: string; rule: Rule }[] {
  return operators.flatMap((operator) =>
    fields.flatMap((field) =>
      Object.entries(values).map(([kind, value]) => {
        const rule: Rule = { operator, field, not: false };
        if (kind === 'list:strings') rule.listId = ids.strings;
        else if (kind === 'list:patterns') rule.listId = ids.patterns;
        else if (kind === 'list:strings+value') Object.assign(rule, { listId: ids.strings, value: ['spam'] });
        else if (value !== undefined) rule.value = value;
        return { name: `${operator} ${field} ${kind}`, rule };
      }),
    ),
  );
}

describe('the rule table', () => {
  it('the engine compiles exactly the rules the API accepts, over operator × field × value kinds', async () => {
    const { call, create, bodies } = await setupRecords();
    const strings = await create('/collection/lists', bodies.list({ name: 'S', entries: ['spam', 'Ham'] }));
    const patterns = await create('/collection/lists', bodies.list({ name: 'P', type: 'patterns', entries: ['/spam/i'] }));
    const lists: FilterList[] = [strings, patterns].map((list) => ({ id: list._id, type: list.type, entries: list.entries, active: true }));
    const cases = rules({ strings: strings._id, patterns: patterns._id });

    const compiles = cases.map(({ rule }) => {
      try {
        compile({ kind: 'set', set: { id: 's', name: 's', rules: [rule], active: true } }, lists);
        return true;
      } catch (error) {
        if (!(error instanceof FilterError)) throw error;
        return false;
      }
    });

    // The API answers a whole set: 400 naming every refused rule (rules[i].…), or, once the rules
    // pass, 400 naming the rules whose list does not fit, or 201. So each batch is sent again
    // without the rules it named until it is created; a rule is accepted when never named.
    const accepted = cases.map(() => true);
    const BATCH = 100;
    for (let start = 0; start < cases.length; start += BATCH) {
      let batch = cases.slice(start, start + BATCH).map((_, i) => start + i);
      for (let round = 0; round < 4 && batch.length > 0; round++) {
        const res = await call('POST', '/collection/sets', bodies.set({ name: `batch ${start} ${round}`, rules: batch.map((index) => cases[index]!.rule) }));
        if (res.statusCode === 201) {
          batch = [];
          break;
        }
        expect(res.statusCode, res.body).toBe(400);
        const named = new Set((res.json().errors as { propertyName: string }[]).map((error) => Number(/^rules\[(\d+)\]/.exec(error.propertyName)?.[1])));
        expect(named.has(NaN), res.body).toBe(false);
        for (const position of named) accepted[batch[position]!] = false;
        batch = batch.filter((_, position) => !named.has(position));
      }
      expect(batch, 'every batch ends created').toEqual([]);
    }

    const disagreements = cases.flatMap(({ name }, i) => (compiles[i] === accepted[i] ? [] : [`${name}: engine ${compiles[i] ? 'compiles' : 'refuses'}, API ${accepted[i] ? 'accepts' : 'refuses'}`]));
    expect(disagreements).toEqual([]);

    // The table is not vacuous: each real operator takes some rules and refuses others, and the
    // rules the two copies used to disagree on are refused.
    const verdict = (name: string) => accepted[cases.findIndex((c) => c.name === name)];
    for (const operator of Object.keys(OPERATORS)) {
      const mine = cases.map((c, i) => [c.rule.operator === operator, accepted[i]]).filter(([is]) => is);
      expect(mine.some(([, ok]) => ok), operator).toBe(true);
      expect(mine.some(([, ok]) => !ok), operator).toBe(true);
    }
    expect(cases.filter((c, i) => ['contains', 'toString'].includes(c.rule.operator) && accepted[i])).toEqual([]);
    expect(
      ['datediff date negative', 'in user emptyArray', 'gt text date', 'equals author.foo string', 'gt date dateWithSpace', 'lt date impossibleDate'].map(verdict),
    ).toEqual([false, false, false, false, false, false]);
    expect(
      ['datediff date zero', 'in user strings', 'gt date date', 'lte date dateTimeOffset', 'equals kudos.twitter_likes number', 'exists media none', 'in user list:strings', 'patternin text list:patterns'].map(verdict),
    ).toEqual([true, true, true, true, true, true, true, true]);
  });
});
