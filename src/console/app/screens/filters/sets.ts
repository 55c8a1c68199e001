/**
 * Filter sets (`/collection/sets`, docs/api.md) and the rule builder, in the editor's words
 * (words.ts, issue 33 point 4): a set's name, "Apply this set only when …" (its preCondition),
 * its rules "Rule 1", "Rule 2" … each a part of the item and a condition said as a phrase ("Text
 * contains a pattern from …", "Posted more than … days ago"; `not` is part of the phrase) with
 * its value or list, "Reject only when every rule matches" (`or`), "When a rule matches" (its
 * `action`: reject, or hold for review, docs/filters.md#hold-for-review) and active. Fields and
 * operators are the API's (`GET /collection/filters/operators`); what the value control is
 * depends on the operator's value kind. Before saving, Preview runs the dry run with the unsaved
 * set over a collection's stored items (`POST /collection/filters/test` with `set`) and lists the
 * stories it would reject: title, source (the input), date and the rule as the builder numbers
 * and says it. API errors show at the rule's control (`rules[2].value`, `preCondition.listId`).
 */
import { useId, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.ts';
import { ErrorBanner, Field, SubmitOrCancel, useForm } from '../../forms.ts';
import { html } from '../../html.ts';
import type { ApiRule, Collection, DryRun, FilterList, FilterSet, Input, RuleTable } from '../../resources.ts';
import { absolute } from '../sources-text.ts';
import { type DraftRule, EVERY_ITEM, inputLabel, NEW_RULE, toApiRule, toDraftRule, type ValueKind, withoutSetPrefix } from './data.ts';
import { RecordItem } from './parts.ts';
import { choiceOf, EVERY_RULE_LABEL, fieldWords, fromChoice, operatorChoices, ruleNumber, ruleSentence, ruleWords, setRuleWords } from './words.ts';

const VALUE_LABELS: Record<ValueKind, [label: string, hint: string]> = {
  scalar: ['Value', 'text or a number, compared as text'],
  numberOrDate: ['Value', 'a number, or an ISO 8601 date (2026-11-22) on date'],
  pattern: ['Pattern', '/body/flags, e.g. /free money/i'],
  values: ['Values, one a line', 'or choose a list'],
  patterns: ['Patterns, one a line', '/body/flags each, or choose a list'],
  seconds: ['Days', 'at least 0; 0.5 is twelve hours'],
  none: ['', ''],
};

interface RuleEditorProps {
  legend: string;
  /** The API's path of this rule: `rules[2]` or `preCondition`. */
  path: string;
  rule: DraftRule;
  table: RuleTable;
  lists: FilterList[];
  error: unknown;
  onChange: (rule: DraftRule) => void;
  onRemove?: () => void;
  /** What the rule reads as, beside the legend: "every item" for a preCondition always true. */
  reads?: string;
}

function RuleEditor({ legend, path, rule, table, lists, error, onChange, onRemove, reads }: RuleEditorProps) {
  const operator = table.operators.find((entry) => entry.operator === rule.operator);
  const kind = operator?.value;
  const fields: [string, string][] = table.fields.map((entry) => [entry.field, fieldWords(entry.field)]);
  if (!table.fields.some((entry) => entry.field === rule.field)) fields.unshift([rule.field, fieldWords(rule.field)]);
  const operators = operatorChoices(rule.field, table.operators.map((entry) => entry.operator));
  if (!operator) operators.unshift(...operatorChoices(rule.field, [rule.operator]));
  const change = (part: Partial<DraftRule>) => onChange({ ...rule, ...part });
  const usable = operator?.list ? lists.filter((list) => list.type === operator.list) : [];
  const [valueLabel, valueHint] = kind ? VALUE_LABELS[kind] : ['Value', ''];
  return html`<fieldset class="filters-rule">
    <legend>${legend}</legend>
    <div class="row">
      <${Field} label="Part of the item" name=${`${path}.field`} value=${rule.field} options=${fields} error=${error} onInput=${(field: string) => change({ field })} />
      <${Field} label="Condition" name=${`${path}.operator`} value=${choiceOf(rule)} options=${operators} error=${error}
        onInput=${(choice: string) => {
          const next = fromChoice(choice);
          change(next.operator === rule.operator ? next : { ...next, listId: '' });
        }} />
      ${operator?.list
        ? html`<${Field} label="List" name=${`${path}.listId`} value=${rule.listId} error=${error}
            options=${[['', 'none: values typed here'], ...usable.map((list): [string, string] => [list._id, list.name])]} onInput=${(listId: string) => change({ listId })} />`
        : null}
    </div>
    ${kind !== 'none' && !(operator?.list && rule.listId)
      ? html`<${Field} label=${valueLabel} hint=${valueHint} name=${`${path}.value`} value=${rule.value} error=${error}
          multiline=${kind === 'values' || kind === 'patterns'} type=${kind === 'seconds' ? 'number' : 'text'} onInput=${(value: string) => change({ value })} />`
      : null}
    <p class="filters-reads"><span class="muted">Reads: </span>${reads ?? ruleSentence(rule, lists)}</p>
    ${onRemove ? html`<div class="buttons"><button type="button" class="secondary" aria-label=${`Remove ${legend.toLowerCase()}`} onClick=${onRemove}>Remove</button></div>` : null}
  </fieldset>`;
}

interface Draft {
  [key: string]: unknown;
  name: string;
  preCondition: DraftRule;
  rules: DraftRule[];
  or: boolean;
  action: 'reject' | 'hold';
  active: boolean;
}

/** The set's action as the builder says it. */
const ACTIONS: [string, string][] = [['reject', 'Reject the item'], ['hold', 'Hold it for review (unpublished, in the Held view)']];

/** The preCondition that makes a set apply to every item (docs/filters.md#examples). */
function everyItem(rule: DraftRule): boolean {
  return rule.field === 'id' && rule.operator === 'exists' && !rule.not;
}

/** Stories shown in the preview; the rest are counted. */
const STORIES_SHOWN = 50;

function Preview({ result, draft, lists, inputs, collection }: { result: DryRun; draft: Draft; lists: FilterList[]; inputs: Input[]; collection: string }) {
  const rejected = result.results.filter((r) => !r.accepted);
  const verb = draft.action === 'hold' ? 'held for review' : 'rejected';
  const sourceOf = (inputId: string | null) => {
    const input = inputId ? inputs.find((i) => i._id === inputId) : undefined;
    return input ? inputLabel(input) : 'an input since removed';
  };
  return html`<div class="filters-preview">
    <p><strong>${rejected.length}</strong> of ${result.results.length} stored items in ${collection} would be ${verb}.</p>
    ${result.hits.length
      ? html`<table class="filters-hits">
          <caption>${draft.action === 'hold' ? 'Holds' : 'Rejections'} by rule</caption>
          <thead><tr><th scope="col">Rule</th><th scope="col">${draft.action === 'hold' ? 'Held' : 'Rejected'}</th></tr></thead>
          <tbody>
            ${result.hits.map((hit) => html`<tr><th scope="row">${ruleWords(draft.rules, draft.or, hit.rule, lists)}</th><td data-label=${draft.action === 'hold' ? 'Held: ' : 'Rejected: '}>${hit.count}</td></tr>`)}
          </tbody>
        </table>`
      : null}
    ${rejected.length
      ? html`<table class="filters-hits filters-stories">
          <caption>Stories it would ${draft.action === 'hold' ? 'hold' : 'reject'}</caption>
          <thead><tr><th scope="col">Story</th><th scope="col">Source</th><th scope="col">Date</th><th scope="col">Rule</th></tr></thead>
          <tbody>
            ${rejected.slice(0, STORIES_SHOWN).map(
              (r) => html`<tr key=${r.id}>
                <th scope="row">${r.title ?? html`<span class="muted">untitled (${r.id})</span>`}</th>
                <td data-label="Source: ">${sourceOf(r.inputId)}</td>
                <td data-label="Date: ">${r.date ? absolute.format(new Date(r.date)) : ''}</td>
                <td data-label="Rule: ">${ruleWords(draft.rules, draft.or, r.rule, lists)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
        ${rejected.length > STORIES_SHOWN ? html`<p class="muted">And ${rejected.length - STORIES_SHOWN} more.</p>` : null}`
      : null}
  </div>`;
}

/** Errors of `error` that no control of the builder shows (for the banner). */
function unplaced(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const rest = error.errors.filter((entry) => !/^(name|rules|preCondition|or|action)\b/.test(entry.propertyName ?? ''));
  return rest.length ? new ApiError(error.status, rest, error.requestId) : undefined;
}

function SetForm({ contractId, set, table, lists, collections, inputs, onDone }: { contractId: string; set?: FilterSet; table: RuleTable; lists: FilterList[]; collections: Collection[]; inputs: Input[]; onDone: (saved?: FilterSet) => void }) {
  const kindOfApi = (rule: ApiRule) => table.operators.find((entry) => entry.operator === rule.operator)?.value;
  const initial: Draft = set
    ? { name: set.name, preCondition: toDraftRule(set.preCondition, kindOfApi(set.preCondition)), rules: set.rules.map((rule) => toDraftRule(rule, kindOfApi(rule))), or: set.or, action: set.action ?? 'reject', active: set.active }
    : { name: '', preCondition: EVERY_ITEM, rules: [NEW_RULE], or: false, action: 'reject', active: true };
  const form = useForm<Draft>(`set:${set?._id ?? 'new'}`, initial, ['name', 'rules', 'preCondition', 'or', 'action']);
  const id = useId();
  const [collectionId, setCollectionId] = useState(collections[0]?._id ?? '');
  const [preview, setPreview] = useState<{ result?: DryRun; error?: unknown; busy?: boolean }>({});
  const draft = form.values;
  const kindOf = (rule: DraftRule) => table.operators.find((entry) => entry.operator === rule.operator)?.value;
  const body = () => ({ name: draft.name || undefined, preCondition: toApiRule(draft.preCondition, kindOf(draft.preCondition)), rules: draft.rules.map((rule) => toApiRule(rule, kindOf(rule))) as ApiRule[], or: draft.or, action: draft.action });
  /** Changes one part of the draft; a preview of the previous draft no longer holds. */
  const update = (part: Partial<Draft>) => {
    const [name, value] = Object.entries(part)[0]!;
    form.set(name)(value);
    setPreview({});
  };
  const fieldError = form.error ?? preview.error;

  const runPreview = async () => {
    setPreview({ busy: true });
    try {
      setPreview({ result: await api.post<DryRun>('/collection/filters/test', { contractId, set: body(), collectionId }) });
    } catch (caught) {
      setPreview({ error: caught instanceof ApiError ? new ApiError(caught.status, withoutSetPrefix(caught.errors), caught.requestId) : caught });
    }
  };
  const save = form.submit(async () => {
    const { name: _name, ...rest } = body();
    const sent = { ...rest, name: draft.name, active: draft.active };
    onDone(set ? await api.patch<FilterSet>(`/collection/sets/${set._id}`, sent) : await api.post<FilterSet>('/collection/sets', { ...sent, contractId }));
  });
  const collection = collections.find((c) => c._id === collectionId);

  return html`<form class="card filters-form" aria-labelledby=${`${id}-title`} onSubmit=${save}>
    <h3 id=${`${id}-title`}>${set ? `Edit set ${set.name}` : 'New set'}</h3>
    <${ErrorBanner} error=${form.formError} />
    <${Field} label="Set name" name="name" required value=${draft.name} error=${form.error} onInput=${(name: string) => update({ name })} />
    <${RuleEditor} legend="Apply this set only when …" path="preCondition" rule=${draft.preCondition} table=${table} lists=${lists} error=${fieldError}
      reads=${everyItem(draft.preCondition) ? 'Id is present: the set applies to every item' : undefined}
      onChange=${(preCondition: DraftRule) => update({ preCondition })} />
    <fieldset class="filters-rules">
      <legend>Rules</legend>
      <p class="muted">${setRuleWords(draft.or)}</p>
      ${draft.rules.length ? null : html`<p class="muted">No rules: this set rejects nothing.</p>`}
      ${draft.rules.map(
        (rule, i) => html`<${RuleEditor} key=${i} legend=${ruleNumber(i)} path=${`rules[${i}]`} rule=${rule} table=${table} lists=${lists} error=${fieldError}
          onChange=${(next: DraftRule) => update({ rules: draft.rules.map((r, j) => (j === i ? next : r)) })}
          onRemove=${() => update({ rules: draft.rules.filter((_, j) => j !== i) })} />`,
      )}
      <button type="button" class="secondary" onClick=${() => update({ rules: [...draft.rules, NEW_RULE] })}>Add rule</button>
    </fieldset>
    <label class="filters-check"><input type="checkbox" checked=${draft.or} onChange=${(event: Event) => update({ or: (event.currentTarget as HTMLInputElement).checked })} /> ${EVERY_RULE_LABEL}</label>
    <${Field} label="When a rule matches" name="action" value=${draft.action} options=${ACTIONS} error=${fieldError} onInput=${(action: string) => update({ action: action === 'hold' ? 'hold' : 'reject' })} />
    <label class="filters-check"><input type="checkbox" checked=${draft.active} onChange=${(event: Event) => update({ active: (event.currentTarget as HTMLInputElement).checked })} /> active</label>

    <fieldset class="filters-rules">
      <legend>Preview before saving</legend>
      ${collections.length
        ? html`<div class="row">
            <${Field} label="Collection to preview over" name="collectionId" value=${collectionId} options=${collections.map((c): [string, string] => [c._id, c.name])} onInput=${setCollectionId} error=${preview.error} />
          </div>
          <button type="button" class="secondary" disabled=${preview.busy} onClick=${runPreview}>Preview</button>`
        : html`<p class="muted">No collection to preview over yet.</p>`}
      <div role="status" class="filters-status">
        ${preview.busy ? html`<p class="muted">Judging the stored items…</p>` : null}
        ${preview.result ? html`<${Preview} result=${preview.result} draft=${draft} lists=${lists} inputs=${inputs} collection=${collection?.name ?? ''} />` : null}
      </div>
      <${ErrorBanner} error=${unplaced(preview.error)} />
    </fieldset>
    <${SubmitOrCancel} form=${form} label="Save set" onCancel=${onDone} />
  </form>`;
}

/** The part of the Filters screen the module describes; `onChange` after a set was saved or deleted. */
export function Sets(props: { contractId: string; sets: FilterSet[]; table: RuleTable; lists: FilterList[]; collections: Collection[]; inputs: Input[]; onChange: () => void }) {
  const { sets, onChange } = props;
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const done = (saved?: FilterSet) => {
    setEditing(null);
    if (saved) onChange();
  };
  return html`<section aria-labelledby="filters-sets-title">
    <h2 id="filters-sets-title">Sets</h2>
    <p class="muted">A set rejects an item when one of its rules matches it; or, if it says “${EVERY_RULE_LABEL.toLowerCase()}”, when every rule does.</p>
    <${ErrorBanner} error=${error} />
    ${sets.length
      ? html`<ul class="filters-items">
          ${sets.map(
            (set) => html`<${RecordItem} key=${set._id} kind="set" record=${set} details=${`${set.rules.length} ${set.rules.length === 1 ? 'rule' : 'rules'}${set.or ? ' · only when every rule matches' : ''}${set.action === 'hold' ? ' · holds for review' : ''}`} onEdit=${() => setEditing(set._id)} onDeleted=${onChange} onError=${setError} />`,
          )}
        </ul>`
      : html`<p>No sets yet.</p>`}
    <${SetForm} key=${editing ?? 'new'} ...${props} set=${sets.find((set) => set._id === editing)} onDone=${done} />
  </section>`;
}
