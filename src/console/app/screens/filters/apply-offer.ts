/**
 * After a filter is attached to a collection (attach.ts): the offer to apply it to the items the
 * collection already holds (issue 33 point 4). It first asks how many published items the filter
 * would unpublish (`POST /collection/filters/apply` with `dryRun: true`,
 * docs/api.md#apply-a-filter) and says so; **Apply to items already collected** then applies it
 * and shows the moderation screen's undo notice (moderation-undo.ts), whose Undo reverts the
 * application's audit entry (`auditId`, docs/api.md#revert). More than the API applies in one
 * request runs as a job: the offer then says it runs in the background, without Undo.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorBanner } from '../../forms.ts';
import { html } from '../../html.ts';
import type { ApplyAnswer } from '../../resources.ts';
import { UndoNotice, useUndo } from '../moderation-undo.ts';

const items = (n: number) => `${n} ${n === 1 ? 'item' : 'items'}`;

/** The offer for `filterId` newly attached to `collection` of contract `contractId`. */
export function ApplyOffer({ contractId, filterId, collection }: { contractId: string; filterId: string; collection: { _id: string; name: string } }) {
  const [would, setWould] = useState<number | 'job' | undefined>(undefined);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown; background?: boolean }>({});
  const body = { contractId, filterId, collectionId: collection._id };
  const count = useCallback(async () => {
    setWould(undefined);
    try {
      const answer = await api.post<ApplyAnswer>('/collection/filters/apply', { ...body, dryRun: true });
      setWould('judged' in answer ? (answer.wouldUnpublish ?? 0) : 'job');
    } catch (error) {
      setState({ error });
    }
  }, [contractId, filterId, collection._id]);
  useEffect(() => void count(), [count]);
  const undo = useUndo(count, (id) => id);
  const apply = async () => {
    setState({ busy: true });
    try {
      const answer = await api.post<ApplyAnswer>('/collection/filters/apply', body);
      if ('judged' in answer) {
        const n = answer.unpublished;
        undo.show({ message: `Unpublished ${items(n)} already collected in ${collection.name}.`, undone: `Undone: the ${items(n)} are published again.`, auditIds: answer.auditId ? [answer.auditId] : [] });
        setState({});
        void count();
      } else setState({ background: true });
    } catch (error) {
      setState({ error });
    }
  };
  return html`<div class="filters-apply" role="group" aria-label=${`Items already collected in ${collection.name}`}>
    <p>
      ${would === undefined ? 'Counting the items already collected…' : null}
      ${would === 'job' ? `${collection.name} holds more items than can be counted at once; applying runs in the background.` : null}
      ${typeof would === 'number'
        ? would
          ? `Applied to the items already collected, this filter would unpublish ${items(would)} of ${collection.name}.`
          : `Applied to the items already collected, this filter would unpublish nothing in ${collection.name}.`
        : null}
    </p>
    ${would === 'job' || (typeof would === 'number' && would > 0)
      ? html`<button type="button" disabled=${state.busy} onClick=${apply}>Apply to items already collected${typeof would === 'number' ? `: unpublish ${items(would)}` : ''}</button>`
      : null}
    ${state.background ? html`<p role="status">Applying in the background.</p>` : null}
    <${ErrorBanner} error=${state.error} />
    <${UndoNotice} state=${undo} />
  </div>`;
}
