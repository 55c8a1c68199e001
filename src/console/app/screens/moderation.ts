/**
 * Moderation (`/console/contracts/<contract id>/moderation?collection=<collection id>`): a
 * collection's queue as cards like the wall's, newest first, to publish and unpublish. Without a
 * collection in the address it opens the one shown last, or the only one; it asks only when the
 * contract has several and none was chosen yet (chosen-collection.ts).
 *
 * API (docs/api.md, "Queue and content API"):
 * - the queue: `GET /v1/queue/{contract}?q=<slug>&since=0&count=50&offset=…` with the filters
 *   `state`, `service`, `type`, `language`, `text`, `held` (the Held view; an empty one is left out);
 * - the counts: `GET /v1/queue/{contract}/count?q=<slug>&since=0` → `{published, unpublished}`,
 *   asked (and the stream below opened) once the first page is shown, so the cards come first;
 * - moderation: `PATCH /v1/queue/{contract}?q=<slug>&id=<id>` `{state}` for one item, and
 *   `PATCH /v1/queue/{contract}?q=<slug>` `{state, ids}` for the selected ones (all or none);
 * - pins and edits (docs/api.md#pin-and-spotlight, #edit-an-item): `PATCH …&id=<id>` with
 *   `{pinned}`, `{pinned: true, position}` (Move up), `{spotlight}` or `{edit}` (`null`: Restore
 *   original). Pinned items come first in the queue as on the wall; a pin or move re-reads the
 *   list (other pins move) and the focus goes back to the item's card. The edit form shows the
 *   item's title, text and each picture's alternative text as shown now; an edited card names
 *   the source's title;
 * - duplicates: a card lists the items merged into it (`duplicates`, docs/api.md#duplicates)
 *   behind a disclosure button; Split off takes one out as an item of its own:
 *   `POST /v1/queue/{contract}/split?q=<slug>&id=<card id>` `{duplicateId}` → `[card, item]`
 *   (docs/api.md#split-a-duplicate); the card is replaced, the item shown right after it, and
 *   the focus goes to it;
 * - live: `GET /v1/queue/{contract}/stream?q=<slug>&access_token=…` (EventSource cannot send
 *   headers), which sends every item that arrives (published or not) or is moderated. An item
 *   already on screen is updated in place; a new one is only counted in the announcement at the
 *   top ("3 new items — show"), which has its own reserved line, so what the moderator is
 *   reading does not move until they ask for the new items.
 *
 * A viewer (roles.ts) reads the queue, its counts and its stream only: no selection, no
 * moderation, pin, edit or split controls, and the `p`, `u`, `x` keys do nothing.
 *
 * Item HTML is never injected: the text (HTML from the source) is reduced to its words by string
 * operations (`plainText`), which Preact renders as text; images
 * are `<img>` of https, `data:image/…` or the queue's media proxy URLs only, links only http(s). The wall shows the
 * source's formatting (sanitized server-side, src/lib/sanitize.ts); the moderator sees
 * the same words and pictures without it.
 *
 * Image screening (moderation-image.ts, docs/filters.md#image-screening): a picture the NSFW
 * model scores above `BLUR_ABOVE` (or a held item's picture not classified yet) is blurred until
 * the moderator presses its "Show image"; the choice is the page's, per card, never stored.
 *
 * Undo and history (moderation-undo.ts, docs/api.md#moderation, #revert, #item-history): every
 * moderation, pin, move, spotlight and edit shows a notice with Undo for `UNDO_MS`, which reverts
 * the audit entries its answer named (`Audit-Id`); each card has its History; a bulk action over
 * `CONFIRM_OVER` items asks for confirmation first.
 *
 * Narrow screens (under 40rem, e.g. 375 px): the filters fold into one disclosure button, "Filters
 * (n active)", so the first card is within the first screen height; every button and the
 * selection box are at least 44 px (2.75rem) targets for touch, and a tap makes a card current
 * as `j`/`k` do.
 *
 * Keyboard (ignored while typing in a field): `j`/`k` next/previous card, `p` publish,
 * `u` unpublish, `x` select, `z` undo the last moderation, `/` search, `?` the shortcuts (a
 * modal `<dialog>`).
 *
 * The screen's state is in hooks of one concern each under ./moderation/ (the filters, the read,
 * the counts, the stream, the selection, the current card, undo, the actions, the keyboard) with
 * the pure logic they share (query.ts, text.ts); this module composes them and holds the markup.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { useChosenCollection } from '../chosen-collection.ts';
import { config } from '../config.ts';
import { ErrorBanner, Field } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { may, useRole } from '../roles.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';
import type { Collection, Duplicate } from '../resources.ts';
import { ConfirmBulk, UndoNotice } from './moderation-undo.ts';
import { Card } from './moderation/card.ts';
import { filterQuery } from './moderation/query.ts';
import { useCounts } from './moderation/use-counts.ts';
import { useCardOnceShown, useCurrentCard } from './moderation/use-current-card.ts';
import { useFilters } from './moderation/use-filters.ts';
import type { ItemChange, State } from './moderation/changes.ts';
import { useQueueActions } from './moderation/use-queue-actions.ts';
import { useQueueRead } from './moderation/use-queue-read.ts';
import { useQueueStream } from './moderation/use-queue-stream.ts';
import { useQueueUndo } from './moderation/use-queue-undo.ts';
import { useSelection } from './moderation/use-selection.ts';
import { MODERATOR_KEYS, SHORTCUTS, useShortcuts } from './moderation/use-shortcuts.ts';

const TYPES = ['video', 'image', 'link', 'status', 'embed', 'comment'];

function Shortcuts({ dialog, moderator }: { dialog: { current: HTMLDialogElement | null }; moderator: boolean }) {
  return html`<dialog ref=${dialog} class="moderation__dialog" aria-labelledby="shortcuts-title">
    <h2 id="shortcuts-title">Keyboard shortcuts</h2>
    <dl class="moderation__keys">
      ${SHORTCUTS.filter(([key]) => moderator || !MODERATOR_KEYS.includes(key)).map(([key, what]) => html`<div><dt><kbd>${key}</kbd></dt><dd>${what}</dd></div>`)}
    </dl>
    <p class="muted">Shortcuts work when no field has the focus; Escape closes this list.</p>
    <form method="dialog"><button type="submit">Close</button></form>
  </dialog>`;
}

/** The collection chooser: every collection of the contract; choosing one opens its queue. */
function Chooser({ collections, chosen, onChoose }: { collections: Collection[]; chosen: string | undefined; onChoose: (id: string) => void }) {
  return html`<div class="field moderation__chooser">
    <label for="moderation-collection">Collection</label>
    <select id="moderation-collection" value=${chosen ?? ''} onChange=${(event: Event) => onChoose((event.currentTarget as HTMLSelectElement).value)}>
      ${chosen ? null : html`<option value="">Choose a collection</option>`}
      ${collections.map((c) => html`<option value=${c._id}>${c.name}</option>`)}
    </select>
  </div>`;
}

/**
 * The filter form (role=search; `form` is its element, for the `/` key) with the disclosure
 * button that unfolds it on a narrow screen; `error`, a 400 of the read, is shown at the property
 * it names.
 */
function FilterForm({ filters, form, error }: { filters: ReturnType<typeof useFilters>; form: { current: HTMLFormElement | null }; error: ApiError | undefined }) {
  const { filters: values, set, open } = filters;
  return html`<button type="button" class="secondary moderation__filters-toggle" aria-expanded=${open ? 'true' : 'false'} aria-controls="moderation-filters" onClick=${() => filters.setOpen(!open)}>
      Filters (${Object.keys(filterQuery(values)).length} active)
    </button>
    <form ref=${form} id="moderation-filters" class=${`card moderation__filters${open ? ' is-open' : ''}`} role="search" aria-label="Filter the queue" onSubmit=${(event: Event) => {
      event.preventDefault();
      filters.apply();
    }}>
      <div class="row">
        <${Field} label="State" name="state" value=${values.state} onInput=${set('state')} error=${error}
          options=${[['', 'all'], ['published', 'published'], ['unpublished', 'unpublished'], ['removed', 'removed at the source']]} />
        <${Field} label="Service" name="service" value=${values.service} onInput=${set('service')} error=${error} hint="e.g. rss,twitter" />
        <${Field} label="Type" name="type" value=${values.type} onInput=${set('type')} error=${error} options=${[['', 'all'], ...TYPES.map((t) => [t, t])]} />
        <${Field} label="Language" name="language" value=${values.language} onInput=${set('language')} error=${error} hint="e.g. en,de" />
        <${Field} label="Text" name="text" type="search" value=${values.text} onInput=${set('text')} error=${error} hint="in title and text (key /)" />
        <${Field} label="Sort" name="sort" value=${values.sort} onInput=${set('sort')} error=${error}
          options=${[['', 'newest first'], ['trending', 'trending'], ['kudos', 'most kudos']]} />
        <${Field} label="Pinned" name="pinned" value=${values.pinned} onInput=${set('pinned')} error=${error}
          options=${[['', 'all'], ['true', 'pinned only'], ['false', 'not pinned']]} />
        <${Field} label="View" name="held" value=${values.held} onInput=${set('held')} error=${error}
          options=${[['', 'all'], ['true', 'Held']]} hint="Held: items a filter set holds for review" />
      </div>
      <div class="buttons">
        <button type="submit">Apply filters</button>
        <button type="button" class="secondary" onClick=${filters.clear}>Clear filters</button>
      </div>
    </form>`;
}

/**
 * One collection's queue (the module's description): the hooks of ./moderation/ composed — the
 * filters, the read, the counts, the stream, the selection, the current card, undo, the actions
 * and the keyboard — and the markup.
 */
function Queue({ contractSlug, collection, moderator }: { contractSlug: string; collection: Collection; moderator: boolean }) {
  const base = `${config.queueUrl}/v1/queue/${encodeURIComponent(contractSlug)}`;
  const q = collection.slug;
  const list = useRef<HTMLOListElement>(null);
  const search = useRef<HTMLFormElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const filters = useFilters();
  const card = useCurrentCard(list);
  const read = useQueueRead(base, q, filters.applied, card.firstPage);
  const { items, error, fresh, load, more } = read;
  const selection = useSelection(items, load);
  const { counts, loadCounts } = useCounts(base, q, read.started);
  useQueueStream({ base, q, read, loadCounts });
  const onceShown = useCardOnceShown(items, card);
  const undo = useQueueUndo({ read, loadCounts, card });
  const actions = useQueueActions({ base, q, read, loadCounts, undo, onceShown, clearSelection: selection.clear });
  const { busy, moderate, change, split } = actions;
  const { selected, selectedIds, toggle } = selection;
  const openFilters = useCallback(() => filters.setOpen(true), []);
  useShortcuts({ latest: read.latest, currentRef: card.currentRef, focusCard: card.focusCard, moderate, toggle, moderator, undo, search, openFilters, dialog });

  const filterError = error instanceof ApiError && error.status === 400 ? error : undefined;
  return html`<div class="moderation">
    <${FilterForm} filters=${filters} form=${search} error=${filterError} />

    <div class="moderation__bar">
      <h2 id="queue-title">Queue of ${collection.name}</h2>
      <p class="moderation__counts" aria-live="polite">
        ${counts ? html`<strong>${counts.published}</strong> published · <strong>${counts.unpublished}</strong> unpublished` : 'Counting…'}
      </p>
    </div>
    <div class="buttons moderation__bulk" role="group" aria-label=${moderator ? 'Selected items' : 'Queue'}>
      ${moderator
        ? html`<button type="button" disabled=${!selectedIds.length} onClick=${() => actions.moderateSelected(selectedIds, 'published')}>Publish selected (${selectedIds.length})</button>
            <button type="button" class="secondary" disabled=${!selectedIds.length} onClick=${() => actions.moderateSelected(selectedIds, 'unpublished')}>Unpublish selected (${selectedIds.length})</button>
            <button type="button" class="secondary" disabled=${!items?.length} onClick=${selection.selectAll}>Select all shown</button>`
        : html`<p class="muted">Your role on this contract reads the queue; moderating needs the role moderator.</p>`}
      <button type="button" class="secondary" onClick=${() => dialog.current?.showModal()}>Keyboard shortcuts</button>
    </div>
    <${ErrorBanner} error=${actions.actionError} />
    <${UndoNotice} state=${undo} />
    <p class="visually-hidden" aria-live="polite">${actions.said}</p>
    <div class="moderation__news" role="status">
      ${fresh.size
        ? html`<button type="button" class="moderation__show" onClick=${async () => {
            await load();
            window.scrollTo({ top: 0 });
            card.focusCard(0);
          }}>${fresh.size} new ${fresh.size === 1 ? 'item' : 'items'} — show</button>`
        : null}
    </div>
    ${filterError ? null : html`<${ErrorBanner} error=${error} />`}
    ${items === undefined
      ? html`<p class="muted">Loading…</p>`
      : items.length
        ? html`<ol ref=${list} class="moderation__list" aria-labelledby="queue-title">
            ${items.map(
              (item, index) => html`<${Card}
                key=${item.id}
                item=${item}
                base=${base}
                q=${q}
                current=${index === card.current}
                selected=${selected.has(item.id)}
                busy=${busy.has(item.id)}
                moderator=${moderator}
                onFocus=${() => card.setCurrent(index)}
                onSelect=${() => toggle(item.id)}
                onModerate=${(state: State) => moderate([item.id], state)}
                onSplit=${(duplicate: Duplicate) => split(item, duplicate)}
                onChange=${(body: ItemChange) => change(item, body)}
              />`,
            )}
          </ol>`
        : html`<p>No items${Object.keys(filterQuery({ ...filters.applied, sort: '' })).length ? ' match these filters' : ' in this collection yet'}.</p>`}
    ${more ? html`<button type="button" class="secondary" onClick=${() => load(items?.length ?? 0)}>Load more</button>` : null}
    <${Shortcuts} dialog=${dialog} moderator=${moderator} />
    <${ConfirmBulk} pending=${actions.pending} onAnswer=${actions.answer} />
  </div>`;
}

/** The screen of the module's description, for the contract of the address. */
export default function Moderation() {
  const contractId = useContractId()!;
  const { contracts } = useSession();
  const contract = contracts?.find((c) => c._id === contractId);
  const moderator = may(useRole(), 'moderate');
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    setCollections(undefined);
    setError(undefined);
    api.get<Collection[]>('/collection/collections', { contract_id: contractId }).then(setCollections, setError);
  }, [contractId]);

  // The collection of the address, else the last shown, else the only one (chosen-collection.ts).
  const { chosen, unknown, choose } = useChosenCollection(contractId, collections, { ask: true });
  return html`<${Screen} title=${chosen ? `Moderation of ${chosen.name}` : 'Moderation'}>
    <${ErrorBanner} error=${error} />
    ${collections === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${collections && !collections.length ? html`<p>No collections yet: create one on <a href=${screenPath(contractId, '')}>Contracts and collections</a>.</p>` : null}
    ${collections && (collections.length > 1 || unknown) ? html`<${Chooser} collections=${collections} chosen=${chosen?._id} onChoose=${choose} />` : null}
    ${unknown ? html`<div class="banner banner--error" role="alert"><p>This contract has no collection ${unknown}: choose one above.</p></div>` : null}
    ${chosen && contract ? html`<${Queue} key=${chosen._id} contractSlug=${contract.slug} collection=${chosen} moderator=${moderator} />` : null}
  <//>`;
}
