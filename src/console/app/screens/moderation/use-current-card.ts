/**
 * The current card of the Moderation screen (../moderation.ts), the one `j`/`k`, `p`/`u`/`x` act
 * on (a tap or focus makes a card current too): its index in the list (-1: none), also in
 * `currentRef`, because keys pressed in quick succession (j then u) must see the card j chose
 * before a re-render. `firstPage(page, keepId)`: a new first page was read; the card of `keepId`
 * is current in it (after an undo), else none. It is called in the same step as the page is set, so
 * a key pressed before the page's effects run acts on that card. `focusCard(index)` makes a card
 * current, focuses and scrolls it into view.
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
  const firstPage = useCallback((page: Item[], keepId: string | undefined) => setCurrent(keepId === undefined ? -1 : page.findIndex((item) => item.id === keepId)), [setCurrent]);
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
  return { current, currentRef, setCurrent, firstPage, focusCard };
}

/**
 * A card chosen by item id before the list that holds it is rendered (after a re-read): `focus(id)`
 * (after a split or a pin) focuses it once shown. An id no longer in the list is forgotten.
 */
export function useCardOnceShown(items: Item[] | undefined, card: ReturnType<typeof useCurrentCard>) {
  const { focusCard } = card;
  const [focusId, focus] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!focusId) return;
    const index = (items ?? []).findIndex((item) => item.id === focusId);
    if (index >= 0) focusCard(index);
    focus(undefined);
  }, [focusId, items, focusCard]);
  return { focus };
}
