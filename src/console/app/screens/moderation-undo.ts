/**
 * Undo, history and the confirmation of large bulk actions on the Moderation screen
 * (moderation.ts; issue 33 point 3):
 *
 * - `useUndo` / `UndoNotice`: every moderation shows a notice (role=status, polite) "Unpublished
 *   12 items." with an **Undo** button for `UNDO_MS`; the time does not run while the focus is in
 *   the notice (a keyboard user on its way to Undo never loses it) and starts again when it leaves.
 *   Undo reverts the audit entries the moderation's answer named in its `Audit-Id` header, last
 *   first (`POST /collection/audit/{id}/revert`, docs/api.md#moderation, #revert); the notice then
 *   says it was undone, or why not (409: an item changed since, named by its title; already
 *   undone; no access). A moderation whose answer names no entry (nothing was recorded) shows the
 *   notice without Undo.
 * - `ConfirmBulk`: a bulk action over more than `CONFIRM_OVER` items asks first ("Unpublish 25
 *   items?") in a modal `<dialog>` (the browser keeps the focus in it; Escape cancels); the focus
 *   goes back to the button that opened it.
 * - `History`: a disclosure per card ("History of <title>") listing who did what and when to the
 *   item, newest first, from `GET /v1/queue/{contract}/history` (docs/api.md#item-history; the
 *   queue's readers may read it: viewer role, `queue:read` scope).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { ErrorBanner } from '../forms.ts';
import { html } from '../html.ts';
import type { HistoryStep } from '../resources.ts';
import { CONFIRM_OVER, UNDO_MS } from './moderation-limits.ts';

export { CONFIRM_OVER, UNDO_MS };

/** The answer header naming a moderation's audit entries (docs/api.md#moderation). */
export const AUDIT_ID_HEADER = 'audit-id';

/** The audit entry ids of an answer's `Audit-Id` header (comma-separated; none when absent). */
export function auditIdsOf(headers: Headers): string[] {
  return (headers.get(AUDIT_ID_HEADER) ?? '').split(',').map((id) => id.trim()).filter(Boolean);
}

/** What a notice says about one moderation, and what Undo reverts. */
export interface Done {
  /** "Unpublished 12 items." */
  message: string;
  /** Said once undone: "Undone: the 12 items are as before." */
  undone: string;
  /** The audit entries to revert, in the order recorded. */
  auditIds: string[];
}

type Phase = 'open' | 'undoing' | 'undone' | 'failed' | 'expired';
interface Notice extends Done {
  key: number;
  phase: Phase;
  failure?: string;
}

/** Why an undo was refused, in the moderator's words; `nameOf` names an item by its title. */
function whyNot(error: unknown, nameOf: (itemId: string) => string): string {
  if (error instanceof ApiError && error.status === 409) {
    const changed = error.errors.filter((entry) => entry.reason === 'changed since').map((entry) => nameOf(String(entry.propertyValue)));
    if (changed.length) return `Could not undo: ${changed.map((name) => `“${name}”`).join(', ')} ${changed.length === 1 ? 'was' : 'were'} changed since. Nothing was undone.`;
    return 'Could not undo: it was already undone.';
  }
  if (error instanceof ApiError && error.status === 403) return 'Could not undo: you may not moderate this contract.';
  return `Could not undo: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * The notice's state: `show` a moderation just done, `undo` it. `after` runs once an undo
 * succeeded (re-read the list and counts); `nameOf` names items in a refusal.
 */
export function useUndo(after: () => unknown, nameOf: (itemId: string) => string) {
  const [notice, setNotice] = useState<Notice | undefined>(undefined);
  const keys = useRef(0);
  const current = useRef<Notice | undefined>(undefined);
  current.current = notice;
  const show = useCallback((done: Done) => setNotice({ ...done, key: ++keys.current, phase: done.auditIds.length ? 'open' : 'expired' }), []);
  const undo = useCallback(async () => {
    const shown = current.current;
    if (!shown || shown.phase !== 'open') return;
    const update = (change: Partial<Notice>) => setNotice((before) => (before?.key === shown.key ? { ...before, ...change } : before));
    update({ phase: 'undoing' });
    try {
      // Last recorded first: a state change is undone after the pin or edit made with it.
      for (const id of [...shown.auditIds].reverse()) await api.post(`/collection/audit/${encodeURIComponent(id)}/revert`);
      update({ phase: 'undone' });
      after();
    } catch (caught) {
      update({ phase: 'failed', failure: whyNot(caught, nameOf) });
    }
  }, [after, nameOf]);
  const expire = useCallback((key: number) => setNotice((before) => (before?.key === key && before.phase === 'open' ? { ...before, phase: 'expired' } : before)), []);
  return { notice, show, undo, expire, open: notice?.phase === 'open' };
}

/**
 * The notice (role=status, polite; always in the page, so that what appears in it is announced):
 * the message and Undo while it may be undone, then the outcome. The focus stays in the notice
 * when Undo goes away (on its message), so a keyboard user keeps their place.
 */
export function UndoNotice({ state }: { state: ReturnType<typeof useUndo> }) {
  const { notice, undo, expire } = state;
  const [focused, setFocused] = useState(false);
  const message = useRef<HTMLParagraphElement>(null);
  const hadFocus = useRef(false);
  useEffect(() => {
    if (!notice || notice.phase !== 'open' || focused) return;
    const timer = setTimeout(() => expire(notice.key), UNDO_MS);
    return () => clearTimeout(timer);
  }, [notice?.key, notice?.phase, focused, expire]);
  useEffect(() => {
    if (notice && notice.phase !== 'open' && notice.phase !== 'undoing' && hadFocus.current) message.current?.focus();
  }, [notice?.phase]);
  const text = !notice ? '' : notice.phase === 'undone' ? notice.undone : notice.phase === 'failed' ? notice.failure : notice.phase === 'undoing' ? `${notice.message} Undoing…` : notice.message;
  return html`<div class="moderation__notice" role="status" aria-live="polite" data-phase=${notice?.phase}
    onFocusIn=${() => {
      hadFocus.current = true;
      setFocused(true);
    }}
    onFocusOut=${(event: FocusEvent) => {
      if (event.relatedTarget instanceof Node && (event.currentTarget as HTMLElement).contains(event.relatedTarget)) return;
      // Undo leaving the page (after a click) keeps `hadFocus` so the message takes the focus.
      if (event.relatedTarget !== null) hadFocus.current = false;
      setFocused(false);
    }}>
    ${notice
      ? html`<div class=${`moderation__notice-box${notice.phase === 'failed' ? ' is-failed' : ''}`} key=${notice.key}>
          <p ref=${message} tabindex="-1">${text}</p>
          ${notice.phase === 'open' || notice.phase === 'undoing'
            ? html`<button type="button" disabled=${notice.phase === 'undoing'} onClick=${() => void undo()}>Undo</button>`
            : null}
        </div>`
      : null}
  </div>`;
}

/** What a bulk action waiting for confirmation does. */
export interface PendingBulk {
  ids: string[];
  state: 'published' | 'unpublished';
}

/**
 * The confirmation of a bulk action (a modal `<dialog>` named by its question); `onAnswer(true)`
 * to go on. The dialog opens when `pending` is set and gives the focus back to where it was.
 */
export function ConfirmBulk({ pending, onAnswer }: { pending: PendingBulk | undefined; onAnswer: (go: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (pending && !element.open) {
      opener.current = document.activeElement as HTMLElement | null;
      element.showModal();
    } else if (!pending && element.open) element.close();
  }, [pending]);
  const verb = pending?.state === 'published' ? 'Publish' : 'Unpublish';
  const count = pending?.ids.length ?? 0;
  return html`<dialog ref=${dialog} class="moderation__dialog" aria-labelledby="confirm-bulk-title" aria-describedby="confirm-bulk-text"
    onClose=${() => {
      onAnswer(dialog.current?.returnValue === 'go');
      if (dialog.current) dialog.current.returnValue = '';
      opener.current?.focus();
    }}>
    <h2 id="confirm-bulk-title">${verb} ${count} items?</h2>
    <p id="confirm-bulk-text">${verb === 'Publish' ? 'They will show on the wall.' : 'They will leave the wall.'} You can undo it for ${UNDO_MS / 1000} seconds afterwards.</p>
    <form method="dialog" class="buttons">
      <button type="submit" value="go">${verb} ${count} items</button>
      <button type="submit" value="cancel" class="secondary" autofocus>Cancel</button>
    </form>
  </dialog>`;
}

/** The words of a history step: who did what ("unpublished it"), as the moderator says it. */
function stepWords(step: HistoryStep): string {
  const state = (s: string) => (s === 'published' ? 'published' : 'unpublished');
  switch (step.action) {
    case 'moderate':
      return step.before === step.after ? `${state(step.after)} it (it already was)` : `${state(step.after)} it`;
    case 'apply':
      return 'unpublished it by applying a filter';
    case 'publish-anyway':
      return 'published it though a filter rejected it';
    case 'revert':
      return `undid a change (${state(step.after)} now)`;
    case 'pin':
      return 'pinned it (or moved its pin)';
    case 'unpin':
      return 'unpinned it';
    case 'edit':
      return 'edited it';
    default:
      return step.action;
  }
}

/**
 * A card's history behind a disclosure button ("History of <title>"): read when opened, again
 * when the item changes while it is open.
 */
export function History({ base, q, item, label, when }: { base: string; q: string; item: { id: string }; label: string; when: (date: string) => string }) {
  const [open, setOpen] = useState(false);
  const [steps, setSteps] = useState<HistoryStep[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!open) return;
    let stale = false;
    setError(undefined);
    api.get<HistoryStep[]>(`${base}/history`, { q, id: item.id }).then(
      (read) => !stale && setSteps(read),
      (caught) => !stale && setError(caught),
    );
    return () => {
      stale = true;
    };
  }, [open, item, base, q]);
  const listId = `history-${item.id}`;
  return html`<div class="moderation__history">
    <button type="button" class="secondary moderation__disclosure" aria-expanded=${open ? 'true' : 'false'} aria-controls=${listId} onClick=${() => setOpen(!open)}>
      History<span class="visually-hidden"> of ${label}</span>
    </button>
    <div id=${listId} hidden=${!open}>
      ${open ? html`<${ErrorBanner} error=${error} />` : null}
      ${open && steps === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
      ${open && steps && !steps.length ? html`<p class="muted">Not moderated yet.</p>` : null}
      ${steps?.length
        ? html`<ol aria-label=${`History of ${label}`}>
            ${steps.map(
              (step) => html`<li key=${step._id}>
                <strong>${step.consumer.name}</strong> ${stepWords(step)}${step.revertedBy ? ' (undone since)' : ''}
                <br /><time class="muted" datetime=${step.date}>${when(step.date)}</time>
              </li>`,
            )}
          </ol>`
        : null}
    </div>
  </div>`;
}
