/**
 * Undo on the Moderation screen (../moderation.ts, ../moderation-undo.ts): the notice's state
 * (`useUndo`), wired to the queue. After a revert the list and counts are read again (pins may
 * have moved; the stream also sends the items) and the current card stays current, from the step
 * the new list is set (a key pressed right after acts on it: use-current-card.ts); a refusal
 * names items by their label on screen, else by id.
 */
import { useCallback } from 'preact/hooks';
import { useUndo } from '../moderation-undo.ts';
import { labelOf } from './text.ts';
import type { useCurrentCard } from './use-current-card.ts';
import type { useQueueRead } from './use-queue-read.ts';

/** The Undo notice's state (`useUndo`'s) for the queue of the module's description. */
export function useQueueUndo(options: {
  read: Pick<ReturnType<typeof useQueueRead>, 'latest' | 'load'>;
  loadCounts: () => Promise<void>;
  card: Pick<ReturnType<typeof useCurrentCard>, 'currentRef'>;
}) {
  const { loadCounts } = options;
  const { latest, load } = options.read;
  const { currentRef } = options.card;
  const nameOf = useCallback((id: string) => {
    const item = latest.current.items?.find((one) => one.id === id);
    return item ? labelOf(item) : id;
  }, []);
  const undone = useCallback(async () => {
    const id = latest.current.items?.[currentRef.current]?.id;
    void loadCounts();
    await load(0, id);
  }, [load, loadCounts]);
  return useUndo(undone, nameOf);
}
