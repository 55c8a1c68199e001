/**
 * The filter form's state on the Moderation screen (../moderation.ts): the values as typed and
 * the ones the list is read with (`applied`). A change applies at once; the text waits for a
 * pause in typing (`TYPING_PAUSE_MS`). `open`: whether the form is unfolded on a narrow screen
 * ("Filters (n active)", moderation.css).
 */
import { useEffect, useState } from 'preact/hooks';
import { type Filters, NO_FILTERS } from './query.ts';

/** How long (ms) the text filter waits after the last key before the list is read again. */
export const TYPING_PAUSE_MS = 300;

/** The filters of the module's description: values as typed, `applied`, `open`, and their handlers. */
export function useFilters() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setApplied(filters), filters.text === applied.text ? 0 : TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [filters]);
  return {
    filters,
    applied,
    open,
    setOpen,
    /** The input handler of one filter. */
    set: (name: keyof Filters) => (value: string) => setFilters((before) => ({ ...before, [name]: value })),
    /** Applies the values as typed now (the form's submit). */
    apply: () => setApplied(filters),
    clear: () => {
      setFilters(NO_FILTERS);
      setApplied(NO_FILTERS);
    },
  };
}
