/** The rule builder's conversions (data.ts): a draft rule as typed → the API's rule, and refused list entries → their lines. */
import { describe, expect, it } from 'vitest';
import { type DraftRule, refusedEntries, toApiRule, toDraftRule, type ValueKind, withoutSetPrefix } from './data.ts';

const draft = (over: Partial<DraftRule>): DraftRule => ({ field: 'text', operator: 'equals', value: '', listId: '', not: false, ...over });

describe('toApiRule', () => {
  const cases: [string, Partial<DraftRule>, ValueKind | undefined, object][] = [
    ['scalar as typed', { value: ' News ' }, 'scalar', { value: 'News' }],
    ['a number for numberOrDate', { operator: 'gt', field: 'kudos.score', value: '10' }, 'numberOrDate', { value: 10 }],
    ['a date stays text', { operator: 'lt', field: 'date', value: '2026-11-22' }, 'numberOrDate', { value: '2026-11-22' }],
    ['seconds typed as days', { operator: 'datediff', value: '7' }, 'seconds', { value: 604800 }],
    ['half a day', { operator: 'datediff', value: '0.5' }, 'seconds', { value: 43200 }],
    ['a pattern keeps its spaces', { operator: 'pattern', value: '/ a /' }, 'pattern', { value: '/ a /' }],
    ['values one a line, blank lines left out', { operator: 'in', value: 'a\n\n b \n' }, 'values', { value: ['a', 'b'] }],
    ['a list instead of values', { operator: 'patternin', value: '/x/', listId: 'l1' }, 'patterns', { listId: 'l1' }],
    ['no value for none', { operator: 'exists', value: 'x' }, 'none', {}],
    ['empty value left out for the API to name', { value: '  ' }, 'scalar', {}],
    ['unknown operator sent as typed', { operator: 'like', value: 'x' }, undefined, { value: 'x' }],
  ];
  for (const [name, over, kind, extra] of cases) {
    it(name, () => {
      const rule = draft(over);
      expect(toApiRule(rule, kind)).toEqual({ operator: rule.operator, field: rule.field, not: false, ...extra });
    });
  }
  it('shows seconds as days', () => {
    expect(toDraftRule({ operator: 'datediff', field: 'date', value: 604800, not: false }, 'seconds').value).toBe('7');
    expect(toDraftRule({ operator: 'datediff', field: 'date', value: 3600, not: false }, 'seconds').value).toBe('0.042');
  });
  it('round-trips a stored rule', () => {
    expect(toDraftRule({ operator: 'in', field: 'tags', value: ['a', 2], not: true })).toEqual({ operator: 'in', field: 'tags', value: 'a\n2', listId: '', not: true });
  });
});

describe('refusedEntries', () => {
  it('names the entry, its line (blank lines counted) and the position', () => {
    const errors = [
      { name: 'ValidationError', message: 'entries[1]: …', propertyName: 'entries[1]', reason: 'position 7: missing closing )', code: 1006 },
      { name: 'ValidationError', message: 'name is required', propertyName: 'name', code: 1001 },
    ];
    expect(refusedEntries(errors, '/ok/\n\n/casino(/i')).toEqual([{ index: 1, line: 3, entry: '/casino(/i', position: 7, reason: 'missing closing )' }]);
    expect(refusedEntries([], 'a')).toEqual([]);
  });
});

describe('withoutSetPrefix', () => {
  it('names the dry run’s set.rules[i] as the set’s rules[i]', () => {
    const errors = withoutSetPrefix([{ name: 'ValidationError', message: 'm', propertyName: 'set.rules[0].value', code: 1002 }, { name: 'ValidationError', message: 'm', propertyName: 'collectionId', code: 1005 }]);
    expect(errors.map((entry) => entry.propertyName)).toEqual(['rules[0].value', 'collectionId']);
  });
});
