/**
 * Filter lists (`/collection/lists`, docs/api.md): the contract's lists, and a form to create one
 * or edit one's entries (one a line). A pattern the API refuses is shown at its entry: the line
 * it was typed on, the pattern with the character at the fault's position marked, and why
 * (the API names `entries[i]` with `position N: why` in `reason`, docs/filters.md, patterns).
 */
import { useId, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.ts';
import { ErrorBanner, errorsFor, Field, SubmitOrCancel, useForm } from '../../forms.ts';
import { html } from '../../html.ts';
import type { FilterList } from '../../resources.ts';
import { lines, refusedEntries, type RefusedEntry } from './data.ts';
import { RecordItem } from './parts.ts';

const TYPES: [string, string][] = [
  ['strings', 'strings (values compared as text)'],
  ['patterns', 'patterns (/body/flags)'],
];

/** A refused pattern with the character at `position` marked. */
function Refused({ refused }: { refused: RefusedEntry }) {
  const { entry, position } = refused;
  const at = position !== undefined && position <= entry.length ? position : undefined;
  return html`<li>
    <span>Entry ${refused.index + 1}, line ${refused.line}${at !== undefined ? `, position ${at}` : ''}: ${refused.reason}</span>
    <code class="filters-refused">${at === undefined ? entry : html`${entry.slice(0, at)}<mark>${entry.slice(at, at + 1) || ' '}</mark>${entry.slice(at + 1)}`}</code>
  </li>`;
}

function ListForm({ contractId, list, onDone }: { contractId: string; list?: FilterList; onDone: (saved?: FilterList) => void }) {
  const form = useForm(`list:${list?._id ?? 'new'}`, { name: list?.name ?? '', type: list?.type ?? 'patterns', entries: list?.entries.join('\n') ?? '', active: list?.active ?? true }, ['name', 'type', 'entries']);
  const id = useId();
  const refused = refusedEntries(form.error instanceof ApiError ? form.error.errors : [], form.values.entries);
  const other = errorsFor(form.error, 'entries').filter((entry) => !/^entries\[\d+\]$/.test(entry.propertyName ?? ''));
  const save = form.submit(async (values) => {
    const body = { name: values.name, entries: lines(values.entries), active: values.active };
    onDone(list ? await api.patch<FilterList>(`/collection/lists/${list._id}`, body) : await api.post<FilterList>('/collection/lists', { ...body, type: values.type, contractId }));
  });
  const title = list ? `Edit list ${list.name}` : 'New list';
  return html`<form class="card filters-form" aria-labelledby=${`${id}-title`} onSubmit=${save}>
    <h3 id=${`${id}-title`}>${title}</h3>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="List name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
      ${list
        ? html`<p class="field"><span class="filters-label">Type</span> ${list.type}</p>`
        : html`<${Field} label="Type" name="type" value=${form.values.type} onInput=${form.set('type') as (v: string) => void} options=${TYPES} error=${form.error} />`}
    </div>
    <div class="field">
      <label for=${`${id}-entries`}>Entries, one a line</label>
      <p class="hint" id=${`${id}-hint`}>${form.values.type === 'patterns' ? 'Patterns written /body/flags, e.g. /free money/i' : 'Values compared as text, case-insensitively'}</p>
      <textarea id=${`${id}-entries`} name="entries" rows="6" value=${form.values.entries}
        aria-invalid=${refused.length || other.length ? 'true' : undefined}
        aria-describedby=${[`${id}-hint`, refused.length || other.length ? `${id}-error` : ''].filter(Boolean).join(' ')}
        onInput=${(event: Event) => form.set('entries')((event.currentTarget as HTMLTextAreaElement).value)}></textarea>
      ${refused.length || other.length
        ? html`<div class="field__error" id=${`${id}-error`}>
            ${other.map((entry) => html`<p>${entry.message}</p>`)}
            ${refused.length ? html`<ul aria-label="Refused entries" class="filters-refused-list">${refused.map((r) => html`<${Refused} refused=${r} />`)}</ul>` : null}
          </div>`
        : null}
    </div>
    <label class="filters-check"><input type="checkbox" checked=${form.values.active} onChange=${(event: Event) => form.set('active')((event.currentTarget as HTMLInputElement).checked)} /> active</label>
    <${SubmitOrCancel} form=${form} label="Save list" onCancel=${onDone} />
  </form>`;
}

/** The part of the Filters screen the module describes; `onChange` after a list was saved or deleted. */
export function Lists({ contractId, lists, onChange }: { contractId: string; lists: FilterList[]; onChange: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const current = lists.find((list) => list._id === editing);
  const done = (saved?: FilterList) => {
    setEditing(null);
    if (saved) onChange();
  };
  return html`<section aria-labelledby="filters-lists-title">
    <h2 id="filters-lists-title">Lists</h2>
    <p class="muted">A list holds values (strings) or patterns that rules name by list, so a long list of words is kept in one place.</p>
    <${ErrorBanner} error=${error} />
    ${lists.length
      ? html`<ul class="filters-items">
          ${lists.map(
            (list) => html`<${RecordItem} key=${list._id} kind="list" record=${list} details=${`${list.type} · ${list.entries.length} ${list.entries.length === 1 ? 'entry' : 'entries'}`} onEdit=${() => setEditing(list._id)} onDeleted=${onChange} onError=${setError} />`,
          )}
        </ul>`
      : html`<p>No lists yet.</p>`}
    ${editing === null
      ? html`<${ListForm} key="new" contractId=${contractId} onDone=${done} />`
      : html`<${ListForm} key=${editing} contractId=${contractId} list=${current} onDone=${done} />`}
  </section>`;
}
