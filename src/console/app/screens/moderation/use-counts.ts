/**
 * The queue's counts on the Moderation screen (../moderation.ts): `GET /v1/queue/{contract}/count
 * ?q=<slug>&since=0` → `{published, unpublished}` (docs/api.md, "Queue and content API"), read
 * once `started` (the first page is shown) and again by `loadCounts()` after a moderation or a
 * stream event. A failed read keeps the last counts (the list shows the error); never throws.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { QueueCount } from '../../resources.ts';

/** The counts of the module's description for the queue at `base` (the queue API's URL of the contract) and collection slug `q`. */
export function useCounts(base: string, q: string, started: boolean) {
  const [counts, setCounts] = useState<QueueCount | undefined>(undefined);
  const loadCounts = useCallback(async () => {
    try {
      setCounts(await api.get<QueueCount>(`${base}/count`, { q, since: 0 }));
    } catch {
      // The list shows the error; the counts keep their last value.
    }
  }, [base, q]);
  useEffect(() => {
    if (started) void loadCounts();
  }, [loadCounts, started]);
  return { counts, loadCounts };
}
