/**
 * The Blocked authors screen (`/console/contracts/<contract id>/blocked`), for the contract's
 * admins and owners (roles.ts; docs/api.md#erasure, issue 34 point 3):
 *
 * - the contract's blocked authors (`GET /collection/blocked-authors?contract_id=`), newest
 *   first: service, which author field and its value, when blocked; each with **Unblock**, which
 *   asks in a modal dialog naming the author first (`DELETE /collection/blocked-authors/{id}`).
 * - **Erase an author** (`POST /collection/erasures`): the service (from `GET
 *   /collection/services`), which author field names them (id, user name, or display name — the
 *   API takes the display name only for services whose items carry no author id and answers 400
 *   naming `author.name` otherwise, shown beside the value), and the value. A modal dialog says
 *   that it deletes every item of that author in the contract and cannot be undone; then the
 *   screen says "Removed n items." and the list shows the author.
 *
 * Uses the Team screen's table and dialog styles (team.css). An answer the API refuses is shown
 * where it happened (ErrorBanner, or beside the field it names).
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner, Field, useForm } from '../forms.ts';
import { html } from '../html.ts';
import type { Answer, ServiceEntry } from '../resources.ts';
import { Screen } from '../screen.ts';
import { useContractId } from '../session.ts';
import { absolute } from './sources-text.ts';

/** A blocked author of the contract (docs/api.md#erasure). */
type Blocked = Answer<'/collection/blocked-authors', 'get'>[number];
/** The answer of an erasure. */
type Erased = Answer<'/collection/erasures', 'post', '201'>;
type AuthorField = Blocked['field'];

/** The author fields in plain words (the content item's `author`, docs/api.md#content-item). */
const FIELD_WORDS: Record<AuthorField, string> = { userid: 'id', username: 'user name', name: 'display name' };

/** How an author is named in the screen's words, e.g. "rss display name Mallory". */
const describe = (author: { service: string; field: AuthorField; value: string }) => `${author.value} (${author.service} ${FIELD_WORDS[author.field]})`;

/** A modal confirmation (native `<dialog>`: focus kept inside, Escape cancels); shown while `open`. */
function Confirm(props: { open: boolean; id: string; title: string; text: string; action: string; onClose: (confirmed: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const element = dialog.current;
    if (props.open && element && !element.open) element.showModal();
    if (!props.open && element?.open) element.close();
  }, [props.open]);
  return html`<dialog ref=${dialog} class="team__dialog" aria-labelledby=${`${props.id}-dialog-title`} aria-describedby=${`${props.id}-dialog-text`} onCancel=${(event: Event) => {
    event.preventDefault();
    props.onClose(false);
  }}>
    ${props.open
      ? html`<h2 id=${`${props.id}-dialog-title`}>${props.title}</h2>
          <p id=${`${props.id}-dialog-text`}>${props.text}</p>
          <div class="buttons">
            <button type="button" class="danger" onClick=${() => props.onClose(true)}>${props.action}</button>
            <button type="button" class="secondary" autofocus onClick=${() => props.onClose(false)}>Cancel</button>
          </div>`
      : null}
  </dialog>`;
}

/** The Erase an author form; `onErased` gets the sentence to announce. */
function EraseForm({ contractId, onErased }: { contractId: string; onErased: (said: string) => void }) {
  const [services, setServices] = useState<ServiceEntry[]>([]);
  const [asking, setAsking] = useState(false);
  const form = useForm(`erase:${contractId}`, { service: '', field: 'userid', value: '' }, ['service', 'author.userid', 'author.username', 'author.name']);
  useEffect(() => {
    void api.get<ServiceEntry[]>('/collection/services').then(setServices, () => setServices([]));
  }, []);
  const service = form.values.service || services[0]?.service || '';
  const field = form.values.field as AuthorField;
  const erase = form.submit(async (values) => {
    const answer = await api.post<Erased>('/collection/erasures', { contractId, service, author: { [field]: values.value } });
    onErased(`Removed ${answer.removed} ${answer.removed === 1 ? 'item' : 'items'} of ${describe({ service, field, value: values.value })}; the author is blocked.`);
  });
  return html`<form class="card" aria-labelledby="erase-title" onSubmit=${(event: Event) => {
    event.preventDefault();
    if (form.values.value.trim()) setAsking(true);
  }}>
    <h2 id="erase-title">Erase an author</h2>
    <p class="muted">When a person asks for their posts to be removed: every item of theirs in every collection of this contract is deleted, and their new items are no longer collected.</p>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Service" name="service" value=${service} onInput=${form.set('service')} error=${form.error}
        options=${services.map((entry) => [entry.service, entry.service] as [string, string])} />
      <${Field} label="Author named by" name="field" value=${field} onInput=${form.set('field')}
        hint="Display name only for services whose items have no author id (feeds)."
        options=${(Object.keys(FIELD_WORDS) as AuthorField[]).map((key) => [key, FIELD_WORDS[key]] as [string, string])} />
      <${Field} label=${`Author's ${FIELD_WORDS[field]}`} name=${`author.${field}`} required value=${form.values.value} onInput=${form.set('value')} error=${form.error} />
    </div>
    <button type="submit" class="danger" disabled=${form.busy || !service}>Erase…</button>
    <${Confirm} open=${asking} id="erase" title=${`Erase ${form.values.value}?`} action="Erase every item"
      text=${`This deletes every item of ${describe({ service, field, value: form.values.value })} in every collection of this contract and blocks the author. It cannot be undone.`}
      onClose=${(confirmed: boolean) => {
        setAsking(false);
        if (confirmed) void erase();
      }} />
  </form>`;
}

/** The screen of the module's description, for the contract of the address. */
export default function BlockedAuthors() {
  const contractId = useContractId()!;
  const [blocked, setBlocked] = useState<Blocked[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [unblocking, setUnblocking] = useState<Blocked | undefined>(undefined);
  const [message, setMessage] = useState('');
  const said = useRef<HTMLParagraphElement>(null);

  const load = useCallback(async () => {
    try {
      setBlocked(await api.get<Blocked[]>(`/collection/blocked-authors?contract_id=${encodeURIComponent(contractId)}`));
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  }, [contractId]);
  useEffect(() => {
    setBlocked(undefined);
    void load();
  }, [load]);

  const announce = async (sentence: string) => {
    await load();
    setMessage(sentence);
    said.current?.focus();
  };
  const unblock = async (confirmed: boolean) => {
    const author = unblocking;
    setUnblocking(undefined);
    if (!confirmed || !author) return;
    setActionError(undefined);
    try {
      await api.del(`/collection/blocked-authors/${encodeURIComponent(author.id)}`);
      await announce(`${describe(author)} is no longer blocked: their new items are collected again.`);
    } catch (caught) {
      setActionError(caught);
    }
  };

  return html`<${Screen} title="Blocked authors">
    <${ErrorBanner} error=${error} />
    <p ref=${said} tabindex="-1" role="status" class="team__said">${message}</p>
    <${ErrorBanner} error=${actionError} />
    ${blocked === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${blocked
      ? html`<table class="team__table" aria-labelledby="blocked-title">
          <caption id="blocked-title">Blocked authors</caption>
          <thead><tr><th scope="col">Author</th><th scope="col">Service</th><th scope="col">Blocked</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${blocked.length === 0 ? html`<tr><td colspan="4" class="muted">No author is blocked.</td></tr>` : null}
            ${blocked.map((author) => html`<tr key=${author.id}>
              <th scope="row"><span class="team__label" aria-hidden="true">Author</span><span class="team__name">${author.value}</span> <span class="muted">(${FIELD_WORDS[author.field]})</span></th>
              <td><span class="team__label" aria-hidden="true">Service</span>${author.service}</td>
              <td><span class="team__label" aria-hidden="true">Blocked</span><time datetime=${author.created}>${absolute.format(new Date(author.created))}</time></td>
              <td><button type="button" class="secondary" aria-label=${`Unblock ${author.value}`} onClick=${() => setUnblocking(author)}>Unblock</button></td>
            </tr>`)}
          </tbody>
        </table>`
      : null}
    <${EraseForm} contractId=${contractId} onErased=${(sentence: string) => void announce(sentence)} />
    <${Confirm} open=${unblocking !== undefined} id="unblock" title=${`Unblock ${unblocking?.value ?? ''}?`} action="Unblock"
      text=${unblocking ? `The items of ${describe(unblocking)} are collected again from the next poll; what was erased is not restored.` : ''}
      onClose=${unblock} />
  <//>`;
}
