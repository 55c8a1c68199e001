/**
 * What a moderator changes on an item (docs/api.md, "Queue and content API", #moderation,
 * #pin-and-spotlight, #edit-an-item) and how the Undo notice says it was done (moderation-undo.ts
 * `Done`: `message`, and `undone` once reverted). Pure functions, no DOM.
 */
import type { Item } from '../../resources.ts';
import { labelOf } from './text.ts';

/** The states a moderator sets: an item removed at the source (docs/api.md#removed-at-the-source) is not moderated. */
export type State = Exclude<Item['state'], 'removed'>;

/** What a moderator sets on one item beside its state (`PATCH …&id=`). */
export type ItemChange = { pinned?: boolean; position?: number; spotlight?: boolean; edit?: { title?: string; text?: string; media?: ({ alt?: string } | null)[] } | null };

/** The notice after a pin, move, spotlight or edit of `item` (as it was) answered by `changed`. */
export function changeMessage(item: Pick<Item, 'pinned'>, body: ItemChange, changed: Item): string {
  const name = `“${labelOf(changed)}”`;
  if (body.pinned !== undefined) {
    if (!changed.pinned) return `Unpinned ${name}.`;
    return body.position !== undefined && item.pinned ? `Moved ${name} to ${changed.position}.` : `Pinned ${name} at ${changed.position}.`;
  }
  if (body.spotlight !== undefined) return `${changed.spotlight ? 'Put' : 'Took'} ${name} ${changed.spotlight ? 'in' : 'out of'} the spotlight.`;
  return body.edit ? `Edited ${name}.` : `Restored the original of ${name}.`;
}

/** The notice after `state` was set on the items `changed` (as answered): one named by its label, several counted. */
export function moderationNotice(state: State, changed: Item[]): { message: string; undone: string } {
  const verb = state === 'published' ? 'Published' : 'Unpublished';
  return changed.length === 1
    ? { message: `${verb} “${labelOf(changed[0]!)}”.`, undone: `Undone: “${labelOf(changed[0]!)}” is as before.` }
    : { message: `${verb} ${changed.length} items.`, undone: `Undone: the ${changed.length} items are as before.` };
}
