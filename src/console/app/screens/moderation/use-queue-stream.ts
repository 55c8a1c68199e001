/**
 * The live stream of the Moderation screen (../moderation.ts): `GET /v1/queue/{contract}/stream
 * ?q=<slug>&access_token=…` as an EventSource (it cannot send headers; docs/api.md, "Queue and
 * content API"), opened once `started` and closed on unmount. Events:
 * - `item`: an item arrived or was moderated; one on screen is replaced in place, a new one that
 *   `matches` the applied filters is only added to `fresh` (announced, not shown: the list does
 *   not move under the moderator);
 * - `remove`: removed at the source (docs/api.md#removed-at-the-source): the card turns `removed`
 *   and loses its actions, the item stays; erased (`removedReason: "erased"`, docs/api.md#erasure)
 *   or deleted by retention (`"expired"`, docs/api.md#retention): the item left the queue, and its
 *   card goes;
 * - `reload`: the counts are read again (as after every event).
 * A closed stream (token expired, server gone) is opened again after `REOPEN_MS`, once the counts'
 * request has renewed the token.
 */
import { useEffect } from 'preact/hooks';
import { accessToken } from '../../auth.ts';
import type { Item } from '../../resources.ts';
import { matches } from './query.ts';
import type { useQueueRead } from './use-queue-read.ts';

/** How long (ms) a closed stream waits before it is opened again. */
export const REOPEN_MS = 3000;

type Read = ReturnType<typeof useQueueRead>;

/** The stream of the module's description; it updates `read`'s items and fresh ids and calls `loadCounts`. Returns nothing. */
export function useQueueStream(options: { base: string; q: string; read: Pick<Read, 'started' | 'latest' | 'setItems' | 'setFresh'>; loadCounts: () => Promise<void> }) {
  const { base, q, loadCounts } = options;
  const { started, latest, setItems, setFresh } = options.read;
  useEffect(() => {
    if (!started) return;
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const open = () => {
      const token = accessToken();
      if (stopped || !token) return;
      source = new EventSource(`${base}/stream?q=${encodeURIComponent(q)}&access_token=${encodeURIComponent(token)}`);
      source.addEventListener('item', (event) => {
        const item = JSON.parse((event as MessageEvent<string>).data) as Item;
        const { items: shown, applied: now } = latest.current;
        if (shown?.some((i) => i.id === item.id)) setItems((before) => before?.map((i) => (i.id === item.id ? item : i)));
        else if (matches(item, now)) setFresh((before) => new Set(before).add(item.id));
        void loadCounts();
      });
      source.addEventListener('remove', (event) => {
        const { id, removedAt, removedReason } = JSON.parse((event as MessageEvent<string>).data) as Pick<Item, 'id' | 'removedAt'> & { removedReason?: Item['removedReason'] | 'erased' | 'expired' };
        if (removedReason === 'erased' || removedReason === 'expired') {
          setItems((before) => before?.filter((i) => i.id !== id));
          setFresh((before) => (before.has(id) ? new Set([...before].filter((fresh) => fresh !== id)) : before));
        } else setItems((before) => before?.map((i) => (i.id === id ? { ...i, state: 'removed' as const, removedAt, removedReason } : i)));
        void loadCounts();
      });
      source.addEventListener('reload', () => void loadCounts());
      source.onerror = () => {
        if (source?.readyState !== EventSource.CLOSED) return;
        retry = setTimeout(() => void loadCounts().then(open), REOPEN_MS);
      };
    };
    open();
    return () => {
      stopped = true;
      source?.close();
      clearTimeout(retry);
    };
  }, [base, q, loadCounts, started]);
}
