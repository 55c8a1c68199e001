/**
 * Small parts the Filters screen's sections share: a delete button that asks first.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { html } from '../../html.ts';

/**
 * A button named `label` (`Delete list Spam words`) that asks `question` with Delete and Cancel
 * before `onConfirm`; focus goes to the question's Delete, and back to the button on Cancel.
 */
export function Confirm({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => Promise<void> | void }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  const ask = useRef<HTMLButtonElement>(null);
  const was = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (was.current) ask.current?.focus();
    was.current = asking;
  }, [asking]);
  if (!asking) return html`<button type="button" class="danger" ref=${ask} aria-label=${label} onClick=${() => setAsking(true)}>Delete</button>`;
  return html`<span class="filters-confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" ref=${yes} onClick=${async () => {
      await onConfirm();
      setAsking(false);
    }}>Delete</button>
    <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

/**
 * One saved list, set or chain in its screen's listing: its name and `details`, an Edit button and
 * a confirmed Delete (`DELETE /collection/<kind>s/{id}`, docs/api.md#deleting); a refused delete
 * (409: still used) goes to `onError`.
 */
export function RecordItem(props: {
  kind: 'list' | 'set' | 'chain';
  record: { _id: string; name: string; active: boolean };
  details: string;
  onEdit: () => void;
  onDeleted: () => void;
  onError: (error: unknown) => void;
}) {
  const { kind, record } = props;
  return html`<li>
    <div><span class="filters-name">${record.name}</span> <span class="muted">· ${props.details}${record.active ? '' : ' · inactive'}</span></div>
    <div class="buttons">
      <button type="button" class="secondary" aria-label=${`Edit ${kind} ${record.name}`} onClick=${props.onEdit}>Edit</button>
      <${Confirm} label=${`Delete ${kind} ${record.name}`} question=${`Delete ${kind} ${record.name}?`} onConfirm=${async () => {
        props.onError(undefined);
        try {
          await api.del(`/collection/${kind}s/${record._id}`);
          props.onDeleted();
        } catch (caught) {
          props.onError(caught);
        }
      }} />
    </div>
  </li>`;
}
