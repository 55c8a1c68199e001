/**
 * The current card of the Moderation screen (../moderation.ts), the one `j`/`k`, `p`/`u`/`x` act
 * on (a tap or focus makes a card current too): its index in the list (-1: none), also in
 * `currentRef`, because keys pressed in quick succession (j then u) must see the card j chose
 * before a re-render. `reset()`: none current (a new first page). `focusCard(index)` makes a card current, focuses and scrolls it into view.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../resources.ts';

/** The current card of the module's description; `list` is the queue's `<ol>`. */
export function useCurrentCard(list: { current: HTMLOListElement | null }) {
  const [current, setCurrentState] = useState(-1);
  const currentRef = useRef(-1);
  const setCurrent = useCallback((index: number) => {
    currentRef.current = index;
    setCurrentState(index);
  }, []);
  const reset = useCallback(() => setCurrent(-1), [setCurrent]);
  const focusCard = useCallback(
    (index: number) => {
      const card = list.current?.querySelectorAll<HTMLElement>('.moderation__card')[index];
      if (!card) return;
      setCurrent(index);
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: 'nearest' });
    },
    [setCurrent],
  );
  return { current, currentRef, setCurrent, reset, focusCard };
}

/**
 * A card chosen by item id before the list that holds it is rendered (after a re-read): `focus(id)`
 * (after a split or a pin) focuses it once shown; `keep(id)` (after an undo) makes it current
 * without moving the focus. An id no longer in the list is forgotten.
 */
export function useCardOnceShown(items: Item[] | undefined, card: ReturnType<typeof useCurrentCard>) {
  const { setCurrent, focusCard } = card;
  const [keepId, keep] = useState<string | undefined>(undefined);
  const [focusId, focus] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (keepId === undefined) return;
    const index = (items ?? []).findIndex((item) => item.id === keepId);
    if (index >= 0) setCurrent(index);
    keep(undefined);
  }, [keepId, items, setCurrent]);
  useEffect(() => {
    if (!focusId) return;
    const index = (items ?? []).findIndex((item) => item.id === focusId);
    if (index >= 0) focusCard(index);
    focus(undefined);
  }, [focusId, items, focusCard]);
  return { keep, focus };
}
