/**
 * Attaching a filter (docs/filters.md, governing filter): the filter set or chain that judges
 * the items of an input, else of its collection, else of the contract. The contract's with
 * `PATCH /collection/contracts/{id}`, a collection's with `PATCH /collection/collections/{id}`,
 * an input's with `PUT /collection/inputs/{id}` (the input as it is, with the new `filterId`).
 * Once a filter is attached to a collection, the row offers to apply it to the items the
 * collection already holds (apply-offer.ts).
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorBanner, Field } from '../../forms.ts';
import { html } from '../../html.ts';
import type { Collection, FilterChain, FilterSet, Input } from '../../resources.ts';
import { ApplyOffer } from './apply-offer.ts';
import { inputLabel } from './data.ts';

interface Target {
  key: string;
  /** `the contract Acme News`, `collection World News`, `input rss feed: https://…`. */
  label: string;
  filterId: string | undefined;
  save: (filterId: string | null) => Promise<unknown>;
  /** A collection's row: the collection, to offer applying its new filter to what it holds. */
  collection?: { _id: string; name: string };
}

function TargetRow({ contractId, target, options }: { contractId: string; target: Target; options: [string, string][] }) {
  const [value, setValue] = useState(target.filterId ?? '');
  const [state, setState] = useState<{ busy?: boolean; error?: unknown; saved?: boolean }>({});
  const changed = value !== (target.filterId ?? '');
  return html`<li>
    <form class="filters-attach" onSubmit=${async (event: Event) => {
      event.preventDefault();
      setState({ busy: true });
      try {
        await target.save(value || null);
        setState({ saved: true });
      } catch (error) {
        setState({ error });
      }
    }}>
      <${Field} label=${`Filter of ${target.label}`} name="filterId" value=${value} options=${options} error=${state.error} onInput=${(next: string) => {
        setValue(next);
        setState({});
      }} />
      <button type="submit" disabled=${state.busy || !changed} aria-label=${`Attach to ${target.label}`}>Attach</button>
      <span role="status" class="muted">${state.saved && !changed ? 'Saved.' : ''}</span>
    </form>
    <${ErrorBanner} error=${state.error && !(state.error as { errors?: { propertyName?: string }[] }).errors?.some((e) => e.propertyName === 'filterId') ? state.error : undefined} />
    ${state.saved && !changed && value && target.collection ? html`<${ApplyOffer} contractId=${contractId} filterId=${value} collection=${target.collection} />` : null}
  </li>`;
}

/** The part of the Filters screen the module describes. */
export function Attach(props: { contract: { _id: string; name: string; filterId?: string }; collections: Collection[]; inputs: Input[]; sets: FilterSet[]; chains: FilterChain[]; onChange: () => Promise<void> | void }) {
  const { contract, collections, inputs, sets, chains, onChange } = props;
  const options: [string, string][] = [['', 'none'], ...sets.map((set): [string, string] => [set._id, `set ${set.name}`]), ...chains.map((chain): [string, string] => [chain._id, `chain ${chain.name}`])];
  const collectionName = (id: string) => collections.find((c) => c._id === id)?.name ?? id;
  const done = async <T,>(result: Promise<T>) => {
    const value = await result;
    await onChange();
    return value;
  };
  const targets: Target[] = [
    ...inputs.map((input): Target => ({
      key: input._id,
      label: `input ${inputLabel(input)} (${collectionName(input.collectionId)})`,
      filterId: input.filterId,
      save: (filterId) => {
        const { _id, service, type, input: what, contractId, collectionId, latitude, longitude, radius, display, active } = input;
        const location = latitude !== undefined ? { latitude, longitude, radius } : {};
        return done(api.put(`/collection/inputs/${_id}`, { service, type, input: what, contractId, collectionId, ...location, display, active, ...(filterId ? { filterId } : {}) }));
      },
    })),
    ...collections.map((collection): Target => ({
      key: collection._id,
      label: `collection ${collection.name}`,
      filterId: collection.filterId,
      collection,
      save: (filterId) => done(api.patch(`/collection/collections/${collection._id}`, { filterId })),
    })),
    { key: contract._id, label: `the contract ${contract.name}`, filterId: contract.filterId, save: (filterId) => done(api.patch(`/collection/contracts/${contract._id}`, { filterId })) },
  ];
  return html`<section aria-labelledby="filters-attach-title">
    <h2 id="filters-attach-title">Attach a filter</h2>
    <p class="muted">An item is judged by its input's filter; else by its collection's; else by the contract's; else it is accepted.</p>
    <ul class="filters-items">
      ${targets.map((target) => html`<${TargetRow} key=${target.key} contractId=${contract._id} target=${target} options=${options} />`)}
    </ul>
  </section>`;
}
