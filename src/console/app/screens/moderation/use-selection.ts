/**
 * The selection of the Moderation screen (../moderation.ts) for bulk moderation: item ids,
 * emptied whenever `resetKey` changes (a new read of the list). `selectedIds`: the selected items
 * still shown, in the list's order.
 */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import type { Item } from '../../resources.ts';

/** The selection of the module's description: `selected` ids, `selectedIds`, `toggle(id)`, `clear()`, `selectAll()`. */
export function useSelection(items: Item[] | undefined, resetKey: unknown) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  useEffect(() => {
    setSelected(new Set());
  }, [resetKey]);
  const toggle = useCallback((id: string) => {
    setSelected((before) => {
      const after = new Set(before);
      if (!after.delete(id)) after.add(id);
      return after;
    });
  }, []);
  const clear = useCallback(() => setSelected(new Set()), []);
  const selectedIds = useMemo(() => (items ?? []).filter((item) => selected.has(item.id)).map((item) => item.id), [items, selected]);
  return { selected, selectedIds, toggle, clear, selectAll: () => setSelected(new Set((items ?? []).map((i) => i.id))) };
}
