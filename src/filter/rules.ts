/**
 * Validation of one filter-set rule (or `preCondition`) against the operator table of
 * decisions §6, when the set is saved: known operator, `field` a content-item path, `value` of
 * the type the operator takes (patterns compiled on re2js), `exists` without value, `listId`
 * only with `in`/`patternin`. Whether a `listId` names a list of the right type in the same
 * contract needs the store and is checked by the caller (`listType` tells which type).
 *
 * Each problem names its property as a path under `at` (`rules[2].operator`,
 * `preCondition.value[1]`).
 */
import { type Invalid, VALIDATION_CODES } from '../errors.ts';
import { DATE_FIELDS, fieldPath, OPERATORS } from './rule-kinds.ts';
import { compilePattern } from './patterns.ts';

/** A rule as saved (interface §2.5). */
export interface Rule {
  operator: string;
  field: string;
  value?: string | number | (string | number)[];
  listId?: string;
  not: boolean;
}

function patternProblem(entry: unknown, propertyName: string): Invalid | undefined {
  if (typeof entry !== 'string') return { propertyName, message: `${propertyName} must be a pattern string /body/flags`, propertyValue: entry, code: VALIDATION_CODES.type };
  const compiled = compilePattern(entry);
  if (compiled.ok) return undefined;
  const { message, position } = compiled.problem;
  return { propertyName, message: `${propertyName}: ${message} (at position ${position})`, propertyValue: entry, reason: `position ${position}: ${message}`, code: VALIDATION_CODES.pattern };
}

/** The problems of `rule` (schema-valid) at path `at`; empty when it may be saved. */
export function ruleProblems(rule: Rule, at: string): Invalid[] {
  const name = (property: string) => `${at}.${property}`;
  const operator = OPERATORS[rule.operator];
  const invalid: Invalid[] = [];
  if (!operator) {
    return [{ propertyName: name('operator'), message: `${name('operator')} must be one of ${Object.keys(OPERATORS).join(', ')}`, propertyValue: rule.operator, code: VALIDATION_CODES.enum }];
  }
  const field = fieldPath(rule.field);
  if (!field) invalid.push({ propertyName: name('field'), message: `${name('field')} is not a content item field (text, title, tags, author.username, kudos.score, …)`, propertyValue: rule.field, code: VALIDATION_CODES.enum });
  const { value, listId } = rule;
  if (listId !== undefined && !operator.listType) {
    invalid.push({ propertyName: name('listId'), message: `${name('listId')} is only allowed with operators in and patternin`, propertyValue: listId, code: VALIDATION_CODES.type });
  }
  if (operator.value === 'none') {
    if (value !== undefined) invalid.push({ propertyName: name('value'), message: `${name('value')} is not allowed with operator ${rule.operator}`, propertyValue: value, code: VALIDATION_CODES.type });
    return invalid;
  }
  if (operator.listType && listId !== undefined) {
    if (value !== undefined) invalid.push({ propertyName: name('value'), message: `send either ${name('value')} or ${name('listId')}, not both`, propertyValue: value, code: VALIDATION_CODES.type });
    return invalid;
  }
  if (value === undefined) {
    invalid.push({ propertyName: name('value'), message: `${name('value')} is required with operator ${rule.operator}${operator.listType ? ' (or a listId)' : ''}`, code: VALIDATION_CODES.required });
    return invalid;
  }
  const wrong = (expected: string) => invalid.push({ propertyName: name('value'), message: `${name('value')} must be ${expected} for operator ${rule.operator}`, propertyValue: value, code: VALIDATION_CODES.type });
  switch (operator.value) {
    case 'scalar':
      if (Array.isArray(value)) wrong('a string or a number');
      break;
    case 'ordered':
      if (typeof value === 'string') {
        if (!field || !DATE_FIELDS.includes(field)) wrong('a number (a date only on date fields)');
        else if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value))) wrong('an ISO 8601 date');
      } else if (typeof value !== 'number') wrong('a number or an ISO 8601 date');
      break;
    case 'seconds':
      if (typeof value !== 'number' || value < 0) wrong('a number of seconds, at least 0');
      break;
    case 'pattern': {
      const problem = patternProblem(value, name('value'));
      if (problem) invalid.push(problem);
      break;
    }
    case 'strings':
      if (!Array.isArray(value) || value.length === 0) wrong('a non-empty array of strings or numbers');
      break;
    case 'patterns':
      if (!Array.isArray(value) || value.length === 0) wrong('a non-empty array of patterns');
      else value.forEach((entry, j) => {
        const problem = patternProblem(entry, `${name('value')}[${j}]`);
        if (problem) invalid.push(problem);
      });
      break;
  }
  return invalid;
}
