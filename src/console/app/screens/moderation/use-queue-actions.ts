/**
 * What a moderator does on the Moderation screen (../moderation.ts; docs/api.md, "Queue and
 * content API", #moderation, #pin-and-spotlight, #edit-an-item, #split-a-duplicate), each
 * answered with an Undo notice where the API names audit entries (`Audit-Id`):
 * - `moderate(ids, state)`: `PATCH /v1/queue/{contract}?q=<slug>&id=<id>` `{state}` for one item,
 *   `PATCH …?q=<slug>` `{state, ids}` for several (all or none; the selection is then emptied);
 * - `moderateSelected(ids, state)`: the same, but over `CONFIRM_OVER` items it first sets
 *   `pending` for the confirmation dialog; `answer(go)` is the dialog's answer;
 * - `change(item, body)`: pin, move, spotlight or edit one item; a pin or move re-reads the list
 *   (other pins moved) and focuses the item's card. Resolves to true, or the error (for the edit form);
 * - `split(card, duplicate)`: `POST …/split?q=<slug>&id=<card id>` `{duplicateId}` → `[card, item]`;
 *   the card is replaced, the item shown right after it and focused, the change said in `said`.
 * `busy` holds the ids of items with a request under way; a failure goes to `actionError`
 * (nothing is thrown).
 */
import { useCallback, useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import type { Duplicate, Item } from '../../resources.ts';
import { auditIdsOf, CONFIRM_OVER, type PendingBulk, type useUndo } from '../moderation-undo.ts';
import { changeMessage, type ItemChange, moderationNotice, type State } from './changes.ts';
import { duplicateLabel, labelOf } from './text.ts';
import type { useCardOnceShown } from './use-current-card.ts';
import type { useQueueRead } from './use-queue-read.ts';

/** The actions of the module's description on the queue at `base` and collection slug `q`. */
export function useQueueActions(options: {
  base: string;
  q: string;
  read: Pick<ReturnType<typeof useQueueRead>, 'setItems' | 'setFresh' | 'load'>;
  loadCounts: () => Promise<void>;
  undo: Pick<ReturnType<typeof useUndo>, 'show'>;
  onceShown: Pick<ReturnType<typeof useCardOnceShown>, 'focus'>;
  clearSelection: () => void;
}) {
  const { base, q, loadCounts, clearSelection } = options;
  const { setItems, setFresh, load } = options.read;
  const { show } = options.undo;
  const { focus } = options.onceShown;
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [said, setSaid] = useState('');
  const [pending, setPending] = useState<PendingBulk | undefined>(undefined);
  const start = (ids: string[]) => {
    setActionError(undefined);
    setBusy((before) => new Set([...before, ...ids]));
  };
  const end = (ids: string[]) => setBusy((before) => new Set([...before].filter((id) => !ids.includes(id))));

  const moderate = useCallback(
    async (ids: string[], state: State) => {
      if (!ids.length) return;
      start(ids);
      try {
        let auditIds: string[] = [];
        const onHeaders = (headers: Headers) => (auditIds = auditIdsOf(headers));
        const changed =
          ids.length === 1
            ? [await request<Item>('PATCH', base, { body: { state }, query: { q, id: ids[0] }, onHeaders })]
            : await request<Item[]>('PATCH', base, { body: { state, ids }, query: { q }, onHeaders });
        const byId = new Map(changed.map((item) => [item.id, item]));
        setItems((before) => before?.map((item) => byId.get(item.id) ?? item));
        show({ ...moderationNotice(state, changed), auditIds });
        if (ids.length > 1) clearSelection();
        void loadCounts();
      } catch (caught) {
        setActionError(caught);
      } finally {
        end(ids);
      }
    },
    [base, q, loadCounts, show],
  );
  const moderateSelected = (ids: string[], state: State) => (ids.length > CONFIRM_OVER ? setPending({ ids, state }) : void moderate(ids, state));
  const answer = (go: boolean) => {
    const asked = pending;
    setPending(undefined);
    if (go && asked) void moderate(asked.ids, asked.state);
  };

  const change = useCallback(
    async (item: Item, body: ItemChange): Promise<unknown> => {
      start([item.id]);
      try {
        let auditIds: string[] = [];
        const changed = await request<Item>('PATCH', base, { body, query: { q, id: item.id }, onHeaders: (headers) => (auditIds = auditIdsOf(headers)) });
        if (body.pinned !== undefined) {
          await load();
          focus(item.id);
        } else setItems((before) => before?.map((one) => (one.id === item.id ? changed : one)));
        show({ message: changeMessage(item, body, changed), undone: `Undone: “${labelOf(changed)}” is as before.`, auditIds });
        return true;
      } catch (caught) {
        setActionError(caught);
        return caught;
      } finally {
        end([item.id]);
      }
    },
    [base, q, load, show],
  );

  const split = useCallback(
    async (card: Item, duplicate: Duplicate) => {
      start([card.id]);
      try {
        const [kept, own] = await api.post<[Item, Item]>(`${base}/split`, { duplicateId: duplicate.id }, { q, id: card.id });
        setItems((before) => before?.flatMap((item) => (item.id === card.id ? [kept, own] : item.id === own.id ? [] : [item])));
        setFresh((before) => {
          const after = new Set(before);
          after.delete(own.id);
          return after;
        });
        setSaid(`${duplicateLabel(duplicate)} split off ${labelOf(kept)}: now an item of its own.`);
        focus(own.id);
        void loadCounts();
      } catch (caught) {
        setActionError(caught);
      } finally {
        end([card.id]);
      }
    },
    [base, q, loadCounts],
  );

  return { busy, actionError, said, pending, moderate, moderateSelected, answer, change, split };
}
