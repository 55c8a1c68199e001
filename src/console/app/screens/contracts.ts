/**
 * Contracts and collections (`/console/contracts/<contract id>`): the user's contracts
 * (`GET /v1/customer/contracts/me`) to switch between, and the chosen contract's collections
 * (`GET /collection/collections?contract_id=`), with create (`POST /collection/collections`)
 * rename and retention (`PATCH /collection/collections/{id}`, docs/api.md#retention), those for
 * editors and above only (roles.ts). A contract the user was not granted shows the API's 403 as
 * "no access", and nothing of it. A contract without sources (`GET /collection/inputs?contract_id=`
 * is empty) opens with a lead to the first one: Add the first source, or who may add one.
 */
import { useRoute } from 'preact-iso/router';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { hasDraft } from '../drafts.ts';
import { ErrorBanner, Field, SubmitOrCancel, useForm } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { ABILITIES, may, type Role, useRole } from '../roles.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';

import type { Collection } from '../resources.ts';

const TYPES: [string, string][] = [
  ['realtime', 'Realtime (newest first)'],
  ['ranked', 'Ranked (by kudos)'],
];

function CreateCollection({ contractId, onCreated }: { contractId: string; onCreated: (collection: Collection) => void }) {
  const form = useForm(`create-collection`, { name: '', type: 'realtime' });
  return html`<form class="card" aria-labelledby="create-title" onSubmit=${form.submit(async (values) => onCreated(await api.post<Collection>('/collection/collections', { ...values, contractId })))}>
    <h2 id="create-title">New collection</h2>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
      <${Field} label="Order" name="type" value=${form.values.type} onInput=${form.set('type')} options=${TYPES} error=${form.error} />
    </div>
    <button type="submit" disabled=${form.busy}>Create collection</button>
  </form>`;
}

function RenameForm({ collection, onDone }: { collection: Collection; onDone: (renamed?: Collection) => void }) {
  const form = useForm(`rename:${collection._id}`, { name: collection.name });
  return html`<form class="inline" onSubmit=${form.submit(async (values) => onDone(await api.patch<Collection>(`/collection/collections/${collection._id}`, values)))}>
    <${ErrorBanner} error=${form.formError} />
    <${Field} label=${`New name for ${collection.name}`} name="name" required autoFocus value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
    <${SubmitOrCancel} form=${form} label="Save" onCancel=${() => onDone()} />
  </form>`;
}

/** What a collection's retention keeps, in words. */
export function retentionText(retention: Collection['retention']): string {
  const parts = [];
  if (retention?.days) parts.push(`items kept ${retention.days} day${retention.days === 1 ? '' : 's'}`);
  if (retention?.maxItems) parts.push(`at most ${retention.maxItems} items`);
  return parts.length ? parts.join(', ') : 'keeps every item';
}

/** A whole number from a field, or undefined when empty (sent as is otherwise: the API names what is wrong). */
const whole = (text: string): number | string | undefined => (text.trim() === '' ? undefined : /^\d+$/.test(text.trim()) ? Number(text.trim()) : text);

function RetentionForm({ collection, onDone }: { collection: Collection; onDone: (changed?: Collection) => void }) {
  const form = useForm(`retention:${collection._id}`, { days: String(collection.retention?.days ?? ''), maxItems: String(collection.retention?.maxItems ?? '') });
  const save = form.submit(async (values) => {
    const [days, maxItems] = [whole(values.days), whole(values.maxItems)];
    const retention = { ...(days !== undefined ? { days } : {}), ...(maxItems !== undefined ? { maxItems } : {}) };
    onDone(await api.patch<Collection>(`/collection/collections/${collection._id}`, { retention }));
  });
  return html`<form class="inline" aria-label=${`Retention of ${collection.name}`} onSubmit=${save}>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Retention (days)" name="retention.days" type="number" hint="Empty: no age limit. Items a moderator published in the last day are kept." autoFocus value=${form.values.days} onInput=${form.set('days')} error=${form.error} />
      <${Field} label="Maximum items" name="retention.maxItems" type="number" hint="Empty: no limit. The newest items are kept." value=${form.values.maxItems} onInput=${form.set('maxItems')} error=${form.error} />
    </div>
    <${SubmitOrCancel} form=${form} label="Save retention" onCancel=${() => onDone()} />
  </form>`;
}

function CollectionRow({ collection, contractId, role, onRenamed }: { collection: Collection; contractId: string; role: Role | undefined; onRenamed: (c: Collection) => void }) {
  // A rename interrupted by a re-sign-in or a reload reopens with its draft.
  const [editing, setEditing] = useState(() => hasDraft(`rename:${collection._id}`));
  const [keeping, setKeeping] = useState(() => hasDraft(`retention:${collection._id}`));
  // Focus goes back to the Rename button when the form closes (saved or cancelled).
  const rename = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    if (wasEditing.current && !editing) rename.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  return html`<li class="collection">
    ${editing
      ? html`<${RenameForm} collection=${collection} onDone=${(renamed?: Collection) => {
          setEditing(false);
          if (renamed) onRenamed(renamed);
        }} />`
      : keeping
        ? html`<${RetentionForm} collection=${collection} onDone=${(changed?: Collection) => {
            setKeeping(false);
            if (changed) onRenamed(changed);
          }} />`
      : html`<div class="collection__main">
          <span class="collection__name">${collection.name}</span>
          <span class="muted"> · ${collection.slug} · ${collection.type}${collection.active ? '' : ' · inactive'} · ${retentionText(collection.retention)}</span>
        </div>
        <div class="buttons">
          ${may(role, 'edit') ? html`<a href=${`${screenPath(contractId, 'sources')}?collection=${encodeURIComponent(collection._id)}`}>Sources<span class="visually-hidden"> of ${collection.name}</span></a>` : null}
          <a href=${`${screenPath(contractId, 'moderation')}?collection=${encodeURIComponent(collection._id)}`}>Moderation<span class="visually-hidden"> of ${collection.name}</span></a>
          ${may(role, 'edit')
            ? html`<button type="button" class="secondary" ref=${rename} aria-label=${`Rename ${collection.name}`} onClick=${() => setEditing(true)}>Rename</button>
                <button type="button" class="secondary" aria-label=${`Retention of ${collection.name}`} onClick=${() => setKeeping(true)}>Retention</button>`
            : null}
        </div>`}
  </li>`;
}

/**
 * The lead of a contract without sources: Add the first source (the Sources screen with its add
 * form open, `?add=source`), or, for a role that may not add one, who can.
 */
function FirstSource({ contractId, contractName, collection, role }: { contractId: string; contractName: string; collection: Collection; role: Role | undefined }) {
  return html`<section class="card lead" aria-labelledby="lead-title">
    <h2 id="lead-title">Add the first source</h2>
    <p>${contractName || 'This contract'} collects nothing yet: a source (a feed, an account, a hashtag) brings its items into ${collection.name}, where you moderate them and the wall shows them.</p>
    ${may(role, 'edit')
      ? html`<p><a class="button" href=${`${screenPath(contractId, 'sources')}?collection=${encodeURIComponent(collection._id)}&add=source`}>Add the first source<span class="visually-hidden"> to ${collection.name}</span></a></p>`
      : html`<p>Adding sources needs the role ${ABILITIES.edit} or higher; your role is ${role ?? 'unknown'}. Ask an editor, admin or owner of ${contractName || 'this contract'} (the Team screen of an admin lists them) to add one.</p>`}
  </section>`;
}

/** The screen of the module's description, for the contract of the address. */
export default function Contracts() {
  const contractId = useContractId()!;
  const { params } = useRoute();
  const { contracts } = useSession();
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const contract = contracts?.find((c) => c._id === contractId);
  const role = useRole();

  // Whether the contract has any source yet: without one, the screen leads to the first.
  const [hasSources, setHasSources] = useState<boolean | undefined>(undefined);

  const load = useCallback(async () => {
    setError(undefined);
    setHasSources(undefined);
    try {
      // Each shown as it comes: the collections do not wait for the sources' read.
      await Promise.all([
        api.get<Collection[]>('/collection/collections', { contract_id: contractId }).then(setCollections),
        api.get<unknown[]>('/collection/inputs', { contract_id: contractId }).then((inputs) => setHasSources(inputs.length > 0)),
      ]);
    } catch (caught) {
      setCollections(undefined);
      setError(caught);
    }
  }, [contractId]);
  useEffect(() => {
    setCollections(undefined);
    void load();
  }, [load, params.contract]);

  return html`<${Screen} title="Contracts and collections">
    ${hasSources === false && collections?.length ? html`<${FirstSource} contractId=${contractId} contractName=${contract?.name ?? ''} collection=${collections[0]!} role=${role} />` : null}
    <section aria-labelledby="contracts-title">
      <h2 id="contracts-title">Your contracts</h2>
      ${contracts
        ? html`<ul class="contracts">
            ${contracts.map((c) => html`<li><a href=${screenPath(c._id, '')} aria-current=${c._id === contractId ? 'page' : undefined}>${c.name}</a> <span class="muted">${c.slug} · ${c.role}</span></li>`)}
          </ul>`
        : html`<p class="muted">Loading…</p>`}
    </section>
    <section aria-labelledby="collections-title">
      <h2 id="collections-title">Collections${contract ? html` of ${contract.name}` : null}</h2>
      <${ErrorBanner} error=${error} />
      ${collections === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
      ${collections
        ? html`${collections.length
              ? html`<ul class="collections">
                  ${collections.map((c) => html`<${CollectionRow} key=${c._id} collection=${c} contractId=${contractId} role=${role} onRenamed=${(renamed: Collection) => setCollections(collections.map((x) => (x._id === renamed._id ? renamed : x)))} />`)}
                </ul>`
              : html`<p>No collections yet${may(role, 'edit') ? ': create the first one below' : ''}.</p>`}
            ${may(role, 'edit') ? html`<${CreateCollection} contractId=${contractId} onCreated=${(created: Collection) => setCollections([...collections, created])} />` : null}`
        : null}
    </section>
  <//>`;
}
