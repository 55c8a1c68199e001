/**
 * The queue read of the Moderation screen (../moderation.ts): `GET /v1/queue/{contract}?q=<slug>
 * &since=0&count=PAGE&offset=…` with the applied filters (docs/api.md, "Queue and content API"),
 * read again whenever they change; `load(offset, keepId)` reads the first page (replacing the list
 * and forgetting the `fresh` items the stream announced; the card of `keepId` stays current) or the
 * next one (appended). `more`: the last page was full. `started` turns true once the first page
 * is shown and stays: the counts and the stream wait for it, so the cards come first. An error is
 * kept in `error` (the list is then empty); nothing is thrown. `latest` holds the newest items and filters for handlers that outlive
 * a render (the stream, the keyboard).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Item } from '../../resources.ts';
import { type Filters, filterQuery, PAGE } from './query.ts';

/**
 * `onFirstPage` (stable) runs in the step that sets a first page read, with the page and the id
 * of the card to keep current (none: no card is current).
 */
export function useQueueRead(base: string, q: string, applied: Filters, onFirstPage: (page: Item[], keepId: string | undefined) => void) {
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const latest = useRef({ items, applied });
  latest.current = { items, applied };

  const load = useCallback(
    async (offset = 0, keepId?: string) => {
      setError(undefined);
      try {
        const page = await api.get<Item[]>(base, { q, since: 0, count: PAGE, offset, ...filterQuery(applied) });
        setItems((before) => (offset ? [...(before ?? []), ...page] : page));
        setMore(page.length === PAGE);
        if (!offset) {
          setFresh(new Set());
          onFirstPage(page, keepId);
        }
      } catch (caught) {
        setError(caught);
        if (!offset) setItems([]);
      }
    },
    [base, q, applied, onFirstPage],
  );

  useEffect(() => {
    setItems(undefined);
    void load();
  }, [load]);

  const [started, setStarted] = useState(false);
  useEffect(() => {
    if (items !== undefined) setStarted(true);
  }, [items]);

  return { items, setItems, more, error, fresh, setFresh, load, started, latest };
}
