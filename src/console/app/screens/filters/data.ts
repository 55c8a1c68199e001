/**
 * The Filters screen's data: what it loads from the API (the rule table of
 * `GET /collection/filters/operators`, the contract's lists, sets, chains, collections and
 * inputs; docs/api.md), and the pure conversions between a rule as the rule builder edits it
 * (every value as text) and a rule as the API takes it (docs/filters.md, rules).
 *
 * Pure (no DOM, no requests), so it is unit-tested (data.test.ts).
 * The operators and fields offered are those the API serves: nothing of the rule table is
 * written again here, only how each kind of `value` is typed into a control.
 */
import type { ErrorEntry } from '../../api.ts';
import type { ApiRule, Input, RuleTable } from '../../resources.ts';

/** What an operator's `value` is (docs/api.md, filter operators). */
export type ValueKind = RuleTable['operators'][number]['value'];

/** A rule as the builder edits it: `value` as typed (one entry a line for arrays), `listId` '' for none. */
export interface DraftRule {
  field: string;
  operator: string;
  value: string;
  listId: string;
  not: boolean;
}

/** The preCondition of a new set: true for every item (docs/filters.md, examples). */
export const EVERY_ITEM: DraftRule = { field: 'id', operator: 'exists', value: '', listId: '', not: false };
export const NEW_RULE: DraftRule = { field: 'text', operator: 'pattern', value: '', listId: '', not: false };

const NUMBER = /^-?\d+(\.\d+)?$/;

/** Seconds in a day: a `seconds` value (`datediff`) is typed in days in the builder, sent in seconds. */
export const DAY_S = 86_400;

/** The entries of a multi-line value: one a line, blank lines left out. */
export function lines(text: string): string[] {
  return text.split('\n').map((line) => line.trim()).filter(Boolean);
}

/**
 * The API rule of a draft, `kind` being its operator's value kind (undefined: an operator the
 * API does not know, sent as typed so that the API names it). An empty value is left out, so
 * the API says it is required; a number is sent as a number where the kind takes one; a
 * `seconds` value is typed in days (`DAY_S`).
 */
export function toApiRule(draft: DraftRule, kind: ValueKind | undefined): ApiRule {
  const rule: ApiRule = { operator: draft.operator, field: draft.field, not: draft.not };
  if (kind === 'none') return rule;
  if ((kind === 'values' || kind === 'patterns') && draft.listId) return { ...rule, listId: draft.listId };
  const text = kind === 'pattern' ? draft.value : draft.value.trim();
  if (text.trim() === '') return rule;
  if (kind === 'values') return { ...rule, value: lines(text) };
  if (kind === 'patterns') return { ...rule, value: lines(text) };
  if (kind === 'seconds' && NUMBER.test(text)) return { ...rule, value: Math.round(Number(text) * DAY_S) };
  if (kind === 'numberOrDate' && NUMBER.test(text)) return { ...rule, value: Number(text) };
  return { ...rule, value: text };
}

/** The draft of a stored rule (for editing a set), `kind` its operator's value kind (seconds are shown in days). */
export function toDraftRule(rule: ApiRule, kind?: ValueKind): DraftRule {
  const days = kind === 'seconds' && typeof rule.value === 'number' ? String(Math.round((rule.value / DAY_S) * 1000) / 1000) : undefined;
  const value = days ?? (Array.isArray(rule.value) ? rule.value.map(String).join('\n') : rule.value === undefined ? '' : String(rule.value));
  return { field: rule.field, operator: rule.operator, value, listId: rule.listId ?? '', not: rule.not === true };
}

/**
 * The entries of a dry run's error with the paths of its unsaved set (`set.rules[0].value`)
 * named as the set's own (`rules[0].value`), so the builder shows them at the same controls as
 * a save's errors.
 */
export function withoutSetPrefix(errors: readonly ErrorEntry[]): ErrorEntry[] {
  return errors.map((entry) => (entry.propertyName?.startsWith('set.') ? { ...entry, propertyName: entry.propertyName.slice(4) } : entry));
}

/** A refused list entry: its index in `entries`, the line it was typed on (from 1), the position of the fault. */
export interface RefusedEntry {
  index: number;
  line: number;
  entry: string;
  position: number | undefined;
  reason: string;
}

/**
 * The entries of an API error's `errors` that refuse a list entry (`entries[i]`, the position in
 * `reason`: `position 7: why`), with the line of the textarea each was typed on (`text`, blank
 * lines counted).
 */
export function refusedEntries(errors: readonly ErrorEntry[], text: string): RefusedEntry[] {
  const typed = text.split('\n').flatMap((line, i) => (line.trim() ? [i + 1] : []));
  const entries = lines(text);
  return errors.flatMap((entry) => {
    const match = /^entries\[(\d+)\]$/.exec(entry.propertyName ?? '');
    if (!match) return [];
    const index = Number(match[1]);
    const position = /^position (\d+): (.*)$/.exec(entry.reason ?? '');
    return [{ index, line: typed[index] ?? index + 1, entry: entries[index] ?? String(entry.propertyValue ?? ''), position: position ? Number(position[1]) : undefined, reason: position ? position[2]! : entry.message }];
  });
}

/** How an input is named on screen (inputs have no name): `rss feed: https://…`. */
export function inputLabel(input: Input): string {
  return `${input.service} ${input.type}: ${input.input}`;
}
