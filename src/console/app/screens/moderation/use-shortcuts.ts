/**
 * The Moderation screen's keyboard shortcuts (../moderation.ts, listed in `SHORTCUTS`), on the
 * document while the screen is shown; ignored with Ctrl/Meta/Alt, when already handled, and while
 * a field or an open dialog has the focus. `p`, `u` and `x` act on the current card and only for a
 * moderator (roles.ts); `z` only while the Undo notice offers Undo; `/` focuses the text filter,
 * unfolding the filters first on a narrow screen.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { Item } from '../../resources.ts';
import type { useUndo } from '../moderation-undo.ts';
import type { State } from './changes.ts';

/** Each key and what it does, as the shortcuts dialog lists them. */
export const SHORTCUTS: [string, string][] = [
  ['j', 'next item'],
  ['k', 'previous item'],
  ['p', 'publish the current item'],
  ['u', 'unpublish the current item'],
  ['x', 'select or deselect the current item'],
  ['z', 'undo the last moderation (while its notice offers Undo)'],
  ['/', 'search the text'],
  ['?', 'this list of shortcuts'],
];

/** The keys a viewer has no use for (they moderate or select). */
export const MODERATOR_KEYS = 'pux';

/** Listens for the keys of the module's description on the document while mounted. Returns nothing. */
export function useShortcuts(options: {
  latest: { current: { items: Item[] | undefined } };
  currentRef: { current: number };
  focusCard: (index: number) => void;
  moderate: (ids: string[], state: State) => unknown;
  toggle: (id: string) => void;
  moderator: boolean;
  undo: Pick<ReturnType<typeof useUndo>, 'open' | 'undo'>;
  /** The filter form (its `input[name="text"]`) and a way to unfold it. */
  search: { current: HTMLFormElement | null };
  openFilters: () => void;
  dialog: { current: HTMLDialogElement | null };
}) {
  // The listener reads the options of the last render, not of the render that added it: an
  // effect that re-added it runs after the paint, so a key pressed as soon as the Undo notice
  // shows would otherwise meet the listener of the render before, which knew no Undo.
  const now = useRef(options);
  now.current = options;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const { latest, currentRef, focusCard, moderate, toggle, moderator, undo, search, openFilters, dialog } = now.current;
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"], dialog[open]')) return;
      const shown = latest.current.items ?? [];
      const current = currentRef.current;
      const item = shown[current];
      switch (event.key) {
        case 'j':
          focusCard(Math.min(current + 1, shown.length - 1));
          break;
        case 'k':
          focusCard(Math.max(current - 1, 0));
          break;
        case 'p':
        case 'u':
          if (item && moderator) void moderate([item.id], event.key === 'p' ? 'published' : 'unpublished');
          break;
        case 'x':
          if (item && moderator) toggle(item.id);
          break;
        case 'z':
          if (!undo.open) return;
          void undo.undo();
          break;
        case '/': {
          // Focus at once when the field is shown, so that the next keys typed go into it and not
          // to the shortcuts; folded on a narrow screen, unfold first, then focus once shown.
          const field = search.current?.querySelector<HTMLInputElement>('input[name="text"]');
          if (field && field.offsetParent !== null) field.focus();
          else {
            openFilters();
            requestAnimationFrame(() => search.current?.querySelector<HTMLInputElement>('input[name="text"]')?.focus());
          }
          break;
        }
        case '?':
          dialog.current?.showModal();
          break;
        default:
          return;
      }
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
