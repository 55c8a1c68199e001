/** The rule builder's words (words.ts): each field and operator said as the editor says it, `not` included. */
import { describe, expect, it } from 'vitest';
import type { FilterList } from '../../resources.ts';
import type { DraftRule } from './data.ts';
import { choiceOf, fromChoice, operatorChoices, ruleNumber, ruleSentence } from './words.ts';

const lists = [{ _id: 'l1', name: 'Spam words' }] as FilterList[];
const rule = (over: Partial<DraftRule>): DraftRule => ({ field: 'text', operator: 'equals', value: '', listId: '', not: false, ...over });

describe('ruleSentence', () => {
  const cases: [Partial<DraftRule>, string][] = [
    [{ operator: 'patternin', listId: 'l1' }, 'Text contains a pattern from list “Spam words”'],
    [{ operator: 'patternin', listId: 'l1', not: true }, 'Text contains no pattern from list “Spam words”'],
    [{ operator: 'patternin', value: '/a/i\n\n/b/' }, 'Text contains a pattern from /a/i, /b/'],
    [{ field: 'user', operator: 'in', value: 'spambot\nbot2' }, 'Author is one of “spambot”, “bot2”'],
    [{ field: 'user', operator: 'in', value: 'spambot', not: true }, 'Author is none of “spambot”'],
    [{ field: 'date', operator: 'datediff', value: '7' }, 'Posted more than 7 days ago'],
    [{ field: 'date', operator: 'lt', value: '2026-11-22' }, 'Posted before 2026-11-22'],
    [{ field: 'date', operator: 'exists' }, 'Date is present'],
    [{ field: 'title', operator: 'pattern', value: '/live!/' }, 'Title contains the pattern /live!/'],
    [{ field: 'kudos.score', operator: 'gte', value: '10' }, 'Score is at least 10'],
    [{ field: 'tags', operator: 'equals', value: 'sport', not: true }, 'A tag is not “sport”'],
    [{ field: 'id', operator: 'exists' }, 'Id is present'],
    [{ field: 'kudos.twitter_likes', operator: 'like', value: 'x' }, 'kudos.twitter_likes like “x”'],
    [{ operator: 'patternin', listId: 'gone' }, 'Text contains a pattern from list “unknown”'],
    [{ operator: 'pattern' }, 'Text contains the pattern …'],
  ];
  for (const [over, words] of cases) it(words, () => expect(ruleSentence(rule(over), lists)).toBe(words));
});

describe('operator choices', () => {
  it('offers each operator said and negated, in the field’s words, and round-trips not', () => {
    expect(operatorChoices('date', ['datediff', 'in'])).toEqual([
      ['datediff', 'more than … days ago'],
      ['datediff:not', 'not more than … days ago'],
      ['in', 'is one of …'],
      ['in:not', 'is none of …'],
    ]);
    for (const not of [true, false]) expect(fromChoice(choiceOf({ operator: 'patternin', not }))).toEqual({ operator: 'patternin', not });
  });
  it('numbers rules from 1', () => expect(ruleNumber(0)).toBe('Rule 1'));
});
