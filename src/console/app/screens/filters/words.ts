/**
 * The rule builder's words (issue 33 point 4): how the console says a rule in the editor's
 * language ("Text contains a pattern from list “Spam words”", "Posted more than 7 days ago")
 * while the API keeps its names (`patternin`, `datediff`; docs/filters.md#rules). This is the one
 * table of the console that maps each field and operator to its phrase; what fields and operators
 * exist still comes from the API's rule table (`GET /collection/filters/operators`), and a field
 * or operator this table does not know is shown by its API name.
 *
 * A rule's `not` is said by the phrase itself ("is none of", "contains no pattern from"), so the
 * builder offers each operator twice, as a choice `operator` or `operator:not` (`choiceOf`).
 * `datediff` counts seconds in the API and days in the console (data.ts, `DAY_S`).
 *
 * Pure (no DOM, no requests): unit-tested in words.test.ts.
 */
import type { FilterList, FilterSet, RuleTable } from '../../resources.ts';
import { type DraftRule, toDraftRule } from './data.ts';

/** The fields in words; the subject of a rule's sentence. */
const FIELD_WORDS: Record<string, string> = {
  id: 'Id',
  service: 'Service',
  type: 'Type',
  state: 'State',
  title: 'Title',
  text: 'Text',
  url: 'Link',
  language: 'Language',
  tags: 'A tag',
  date: 'Date',
  user: 'Author',
  'author.name': "Author's name",
  'author.username': "Author's username",
  'author.userid': "Author's id",
  'author.url': "Author's link",
  'media.type': "A medium's type",
  'media.url': "A medium's link",
  'media.embed': "A medium's embed code",
  'media.duration': "A medium's duration",
  'kudos.score': 'Score',
  'location.name': 'Place',
  'location.latitude': 'Latitude',
  'location.longitude': 'Longitude',
};

/** What follows the subject, when the rule holds (`yes`) and with `not` (`no`); `…` stands for the value. */
interface Phrase {
  yes: string;
  no: string;
}

/** The operators in words, for every field but the date. */
const OPERATOR_WORDS: Record<string, Phrase> = {
  equals: { yes: 'is …', no: 'is not …' },
  gt: { yes: 'is more than …', no: 'is not more than …' },
  gte: { yes: 'is at least …', no: 'is not at least …' },
  lt: { yes: 'is less than …', no: 'is not less than …' },
  lte: { yes: 'is at most …', no: 'is not at most …' },
  pattern: { yes: 'contains the pattern …', no: 'does not contain the pattern …' },
  in: { yes: 'is one of …', no: 'is none of …' },
  patternin: { yes: 'contains a pattern from …', no: 'contains no pattern from …' },
  datediff: { yes: 'is more than … days ago', no: 'is not more than … days ago' },
  exists: { yes: 'is present', no: 'is missing' },
  profane: { yes: 'contains English profanity', no: 'contains no English profanity' },
};

/** The date's own words: the subject "Posted" and when. */
const DATE_SUBJECT = 'Posted';
const DATE_WORDS: Record<string, Phrase> = {
  equals: { yes: 'on …', no: 'not on …' },
  gt: { yes: 'after …', no: 'not after …' },
  gte: { yes: 'on or after …', no: 'not on or after …' },
  lt: { yes: 'before …', no: 'not before …' },
  lte: { yes: 'on or before …', no: 'not on or before …' },
  datediff: { yes: 'more than … days ago', no: 'not more than … days ago' },
};

/** The field in words (its API name when the table does not know it). */
export function fieldWords(field: string): string {
  return FIELD_WORDS[field] ?? field;
}

/** The subject and phrase of `field` with `operator` (its API name when unknown). */
function phraseOf(field: string, operator: string): { subject: string; phrase: Phrase } {
  if (field === 'date' && DATE_WORDS[operator]) return { subject: DATE_SUBJECT, phrase: DATE_WORDS[operator] };
  return { subject: fieldWords(field), phrase: OPERATOR_WORDS[operator] ?? { yes: `${operator} …`, no: `not ${operator} …` } };
}

/** A choice of the builder's operator control: the operator, and whether it is said with `not`. */
export function choiceOf(rule: Pick<DraftRule, 'operator' | 'not'>): string {
  return rule.not ? `${rule.operator}:not` : rule.operator;
}

/** The operator and `not` of a choice (`choiceOf`'s inverse). */
export function fromChoice(choice: string): { operator: string; not: boolean } {
  return choice.endsWith(':not') ? { operator: choice.slice(0, -4), not: true } : { operator: choice, not: false };
}

/** The choices of the operator control for `field`: `[choice, words]`, each operator said and then negated. */
export function operatorChoices(field: string, operators: readonly string[]): [string, string][] {
  return operators.flatMap((operator): [string, string][] => {
    const { phrase } = phraseOf(field, operator);
    return [
      [operator, phrase.yes],
      [`${operator}:not`, phrase.no],
    ];
  });
}

/** The subject the operator control follows for `field` ("Text", "Posted" for date phrases). */
export function subjectOf(field: string, operator: string): string {
  return phraseOf(field, operator).subject;
}

/** A rule's value in words: a list by name, typed values quoted, `datediff`'s days. */
function valueWords(rule: DraftRule, lists: readonly FilterList[]): string {
  if (rule.listId) return `list “${lists.find((list) => list._id === rule.listId)?.name ?? 'unknown'}”`;
  const entries = rule.value.split('\n').map((line) => line.trim()).filter(Boolean);
  // Patterns, numbers and dates as written; words in quotes.
  if (['datediff', 'gt', 'gte', 'lt', 'lte', 'pattern', 'patternin'].includes(rule.operator) || rule.field === 'date') return entries.join(', ') || '…';
  return entries.map((entry) => `“${entry}”`).join(', ') || '…';
}

/**
 * The rule as a sentence: "Text contains a pattern from list “Spam words”", "Posted more than 7
 * days ago", "Author is none of “spambot”". `rule.value` is as the builder holds it (days for
 * `datediff`).
 */
export function ruleSentence(rule: DraftRule, lists: readonly FilterList[]): string {
  const { subject, phrase } = phraseOf(rule.field, rule.operator);
  return `${subject} ${(rule.not ? phrase.no : phrase.yes).replace('…', valueWords(rule, lists))}`;
}

/** How the `or` switch reads (docs/filters.md#evaluation: rules, `or: true`). */
export const EVERY_RULE_LABEL = 'Reject only when every rule matches';
/** What a set does with its rules, either way. */
export function setRuleWords(or: boolean): string {
  return or ? 'Rejects an item only when every rule matches it.' : 'Rejects an item when any rule matches it (the first that matches names the rejection).';
}

/** "Rule 1" for the API's rule index 0: the builder's numbering, everywhere. */
export function ruleNumber(index: number): string {
  return `Rule ${index + 1}`;
}

/**
 * Rule `index` (the API's, from 0) of `rules` as the builder names it: "Rule 2: Title contains
 * the pattern /live!/"; with `or` every rule had to match, so "Every rule matched". Undefined
 * rules (a set changed since) → "Rule 3".
 */
export function ruleWords(rules: readonly DraftRule[], or: boolean, index: number | null, lists: readonly FilterList[]): string {
  if (index === null) return '';
  if (or) return 'Every rule matched';
  const rule = rules[index];
  return rule ? `${ruleNumber(index)}: ${ruleSentence(rule, lists)}` : ruleNumber(index);
}

/** The draft rules of a saved set (seconds as days), for `ruleWords`. */
export function draftRulesOf(set: Pick<FilterSet, 'rules'>, table: RuleTable): DraftRule[] {
  return set.rules.map((rule) => toDraftRule(rule, table.operators.find((entry) => entry.operator === rule.operator)?.value));
}
