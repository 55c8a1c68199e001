/**
 * Which walls a customization changes (docs/api.md#customizations, `collectionId`): the words
 * the Publication screen shows for it ("All walls of this contract" or the collection's name),
 * and the "Applies to" select that chooses it ('' = the whole contract, sent as `null` on update
 * and left out on create).
 */
import { Field } from '../../forms.ts';
import { html } from '../../html.ts';
import type { Collection } from '../../resources.ts';

export const ALL_WALLS = 'All walls of this contract';

/** The walls customization `c` changes, in the editor's words. */
export function wallsOf(c: { collectionId?: string }, collections: Collection[]): string {
  if (!c.collectionId) return ALL_WALLS;
  return collections.find((collection) => collection._id === c.collectionId)?.name ?? 'One collection';
}

/** Whether customization `c` reaches the wall of collection `collectionId`. */
export function reaches(c: { collectionId?: string }, collectionId: string | undefined): boolean {
  return !c.collectionId || c.collectionId === collectionId;
}

/** The "Applies to" select: every wall of the contract, or one of its collections. `error` names `collectionId`. */
export function AppliesTo({ value, onInput, collections, error }: { value: string; onInput: (value: string) => void; collections: Collection[]; error: unknown }) {
  const options: [string, string][] = [['', ALL_WALLS], ...collections.map((c) => [c._id, c.name] as [string, string])];
  return html`<${Field} label="Applies to" name="collectionId" value=${value} onInput=${onInput} options=${options} error=${error} hint="The walls this customization changes. A collection's customizations come after the contract's, so they win." />`;
}
