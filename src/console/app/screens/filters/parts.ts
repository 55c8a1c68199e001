/**
 * Small parts the Filters screen's sections share: a delete button that asks first.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
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
