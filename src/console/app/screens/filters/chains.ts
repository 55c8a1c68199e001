/**
 * Filter chains (`/collection/chains`, docs/api.md): an ordered list of the contract's sets,
 * run in that order (docs/filters.md, evaluation). The order is changed with Move up and Move
 * down buttons (keyboard alone suffices; focus stays on the moved set's button).
 */
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorBanner, errorsFor, Field, SubmitOrCancel, useForm } from '../../forms.ts';
import { html } from '../../html.ts';
import type { FilterChain, FilterSet } from '../../resources.ts';
import { RecordItem } from './parts.ts';

function ChainForm({ contractId, chain, sets, onDone }: { contractId: string; chain?: FilterChain; sets: FilterSet[]; onDone: (saved?: FilterChain) => void }) {
  const form = useForm(`chain:${chain?._id ?? 'new'}`, { name: chain?.name ?? '', sets: chain?.sets ?? ([] as string[]), active: chain?.active ?? true }, ['name', 'sets']);
  const id = useId();
  const [adding, setAdding] = useState('');
  const [focus, setFocus] = useState<string | null>(null);
  const order = useRef<HTMLOListElement>(null);
  useEffect(() => {
    if (!focus) return;
    const [wanted, other] = [order.current?.querySelector<HTMLButtonElement>(`[data-focus="${focus}"]`), order.current?.querySelector<HTMLButtonElement>(`[data-focus="${focus.replace(/:up$/, ':down').replace(/:down$/, ':up')}"]`)];
    (wanted && !wanted.disabled ? wanted : other)?.focus();
    setFocus(null);
  }, [focus]);
  const nameOf = (setId: string) => sets.find((set) => set._id === setId)?.name ?? setId;
  const ids = form.values.sets;
  const move = (i: number, by: number) => {
    const next = [...ids];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    form.set('sets')(next);
    setFocus(`${ids[i]}:${by < 0 ? 'up' : 'down'}`);
  };
  const addable = sets.filter((set) => !ids.includes(set._id));
  const save = form.submit(async (values) => {
    const body = { name: values.name, sets: values.sets, active: values.active };
    onDone(chain ? await api.patch<FilterChain>(`/collection/chains/${chain._id}`, body) : await api.post<FilterChain>('/collection/chains', { ...body, contractId }));
  });
  return html`<form class="card filters-form" aria-labelledby=${`${id}-title`} onSubmit=${save}>
    <h3 id=${`${id}-title`}>${chain ? `Edit chain ${chain.name}` : 'New chain'}</h3>
    <${ErrorBanner} error=${form.formError} />
    <${Field} label="Chain name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
    <h4 id=${`${id}-order`}>Sets, in the order they run</h4>
    ${ids.length ? null : html`<p class="muted">No sets yet: an empty chain accepts everything.</p>`}
    <ol class="filters-order" aria-labelledby=${`${id}-order`} ref=${order}>
      ${ids.map((setId, i) => {
        const name = nameOf(setId);
        const problems = errorsFor(form.error, `sets[${i}]`);
        return html`<li key=${setId}>
          <span class="filters-name"><span aria-hidden="true">${i + 1}. </span>${name}</span>
          ${problems.length ? html`<span class="field__error">${problems.map((p) => p.message).join(' ')}</span>` : null}
          <span class="buttons">
            <button type="button" class="secondary" data-focus=${`${setId}:up`} aria-label=${`Move ${name} up`} disabled=${i === 0} onClick=${() => move(i, -1)}>Up</button>
            <button type="button" class="secondary" data-focus=${`${setId}:down`} aria-label=${`Move ${name} down`} disabled=${i === ids.length - 1} onClick=${() => move(i, 1)}>Down</button>
            <button type="button" class="secondary" aria-label=${`Remove ${name} from the chain`} onClick=${() => form.set('sets')(ids.filter((x) => x !== setId))}>Remove</button>
          </span>
        </li>`;
      })}
    </ol>
    ${addable.length
      ? html`<div class="row filters-add">
          <${Field} label="Set to add" name="add" value=${adding || addable[0]!._id} options=${addable.map((set): [string, string] => [set._id, set.name])} onInput=${setAdding} />
          <button type="button" class="secondary" onClick=${() => {
            form.set('sets')([...ids, adding && addable.some((s) => s._id === adding) ? adding : addable[0]!._id]);
            setAdding('');
          }}>Add to the chain</button>
        </div>`
      : null}
    <label class="filters-check"><input type="checkbox" checked=${form.values.active} onChange=${(event: Event) => form.set('active')((event.currentTarget as HTMLInputElement).checked)} /> active</label>
    <${SubmitOrCancel} form=${form} label="Save chain" onCancel=${onDone} />
  </form>`;
}

/** The part of the Filters screen the module describes; `onChange` after a chain was saved or deleted. */
export function Chains({ contractId, chains, sets, onChange }: { contractId: string; chains: FilterChain[]; sets: FilterSet[]; onChange: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const nameOf = (setId: string) => sets.find((set) => set._id === setId)?.name ?? setId;
  const done = (saved?: FilterChain) => {
    setEditing(null);
    if (saved) onChange();
  };
  return html`<section aria-labelledby="filters-chains-title">
    <h2 id="filters-chains-title">Chains</h2>
    <p class="muted">A chain runs its sets in order; the first set that rejects an item rejects it.</p>
    <${ErrorBanner} error=${error} />
    ${chains.length
      ? html`<ul class="filters-items">
          ${chains.map(
            (chain) => html`<${RecordItem} key=${chain._id} kind="chain" record=${chain} details=${chain.sets.length ? chain.sets.map(nameOf).join(' → ') : 'no sets'} onEdit=${() => setEditing(chain._id)} onDeleted=${onChange} onError=${setError} />`,
          )}
        </ul>`
      : html`<p>No chains yet.</p>`}
    <${ChainForm} key=${editing ?? 'new'} contractId=${contractId} chain=${chains.find((chain) => chain._id === editing)} sets=${sets} onDone=${done} />
  </section>`;
}
