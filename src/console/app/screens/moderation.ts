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
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, request } from '../api.ts';
import { accessToken } from '../auth.ts';
import { useChosenCollection } from '../chosen-collection.ts';
import { config } from '../config.ts';
import { ErrorBanner, Field } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { may, useRole } from '../roles.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';
import type { ImageModeration } from '../../../item.ts';
import type { Collection, Duplicate, Item, QueueCount } from '../resources.ts';
import { ScreenedImage } from './moderation-image.ts';
import { auditIdsOf, CONFIRM_OVER, ConfirmBulk, History, type PendingBulk, UndoNotice, useUndo } from './moderation-undo.ts';

/** The states a moderator sets: an item removed at the source (docs/api.md#removed-at-the-source) is not moderated. */
type State = Exclude<Item['state'], 'removed'>;

interface Filters {
  state: string;
  service: string;
  type: string;
  language: string;
  text: string;
  /** The queue's `sort`: '' (time, newest first), `kudos` or `trending` (docs/api.md#trending). */
  sort: string;
  /** '' (all), `true` (only the pinned) or `false` (only the others). */
  pinned: string;
  /** The Held view: `true`, only the items a filter set held for review (docs/filters.md#hold-for-review); '' all. */
  held: string;
}

const NO_FILTERS: Filters = { state: '', service: '', type: '', language: '', text: '', sort: '', pinned: '', held: '' };
const PAGE = 50;
const TYPES = ['video', 'image', 'link', 'status', 'embed', 'comment'];

const SHORTCUTS: [string, string][] = [
  ['j', 'next item'],
  ['k', 'previous item'],
  ['p', 'publish the current item'],
  ['u', 'unpublish the current item'],
  ['x', 'select or deselect the current item'],
  ['z', 'undo the last moderation (while its notice offers Undo)'],
  ['/', 'search the text'],
  ['?', 'this list of shortcuts'],
];

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * The plain text of source HTML, by string operations only: no parser that could run a handler
 * or load anything (Chromium reports an `onerror` attribute even in a `DOMParser` document).
 * Tags are dropped, `<script>`/`<style>` with their content, and character references decoded;
 * the result is rendered as text, so anything left over shows as characters, never as markup.
 */
export function plainText(source: string): string {
  if (!/[<&]/.test(source)) return source;
  return source
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6])\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

/** What a control names the item by: its title, else the start of its text, else its id. */
function labelOf(item: Item): string {
  const words = (item.title || plainText(item.text)).replace(/\s+/g, ' ').trim();
  return words ? (words.length > 60 ? `${words.slice(0, 57)}…` : words) : item.id;
}

function httpUrl(url: string | null | undefined): string | undefined {
  return url && /^https?:\/\//i.test(url) ? url : undefined;
}

/**
 * Whether the console shows a picture at `url`: https, an inline image, or the queue's own media
 * proxy (docs/api.md#media-proxy: the queue read gives its pictures so, at QUEUE_URL, which is
 * http on a local installation; the console's CSP lists that origin).
 */
function showable(url: string): boolean {
  return /^https:\/\//i.test(url) || /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i.test(url) || url.startsWith(`${config.queueUrl}/v1/media/`);
}

/**
 * The card's picture: the item's first image medium, when `showable`, with its alternative text
 * and screening scores (`moderation`, which the API's generated type does not name yet: read as
 * docs/api.md's media row describes it).
 */
function imageOf(item: Item): { url: string; alt: string; moderation?: ImageModeration } | undefined {
  const image = item.media?.find((m) => m.type === 'image') as (NonNullable<Item['media']>[number] & { moderation?: ImageModeration }) | undefined;
  const url = image?.url;
  if (!url || !showable(url)) return undefined;
  return { url, alt: image.alt ?? '', ...(image.moderation && { moderation: image.moderation }) };
}

/** Whether an item from the stream belongs in the list under the filters (as the API would select it). */
function matches(item: Item, filters: Filters): boolean {
  const list = (value: string) => value.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
  if (filters.state && item.state !== filters.state) return false;
  if (filters.pinned && String(item.pinned === true) !== filters.pinned) return false;
  if (filters.held && String(item.held !== undefined) !== filters.held) return false;
  if (filters.service && !list(filters.service).includes(item.service)) return false;
  if (filters.type && !list(filters.type).includes(item.type)) return false;
  if (filters.language && !list(filters.language).includes(item.language ?? '')) return false;
  if (filters.text && !`${item.title ?? ''}\n${plainText(item.text)}`.toLowerCase().includes(filters.text.toLowerCase())) return false;
  return true;
}

/** The query of a queue read or count: the filters that are set. */
function filterQuery(filters: Filters): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value.trim() !== '').map(([name, value]) => [name, value.trim()]));
}

// One formatter for every card: `toLocaleString` with options builds a new one per call (slow over a page of 50).
const DATES = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function when(date: string): string {
  const at = new Date(date);
  return Number.isNaN(at.getTime()) ? date : DATES.format(at);
}

/** What a Split off button names a duplicate by: its service and author, else its address, else its id. */
function duplicateLabel(duplicate: Duplicate): string {
  const who = duplicate.author.name || duplicate.author.username;
  return who ? `${duplicate.service} by ${who}` : duplicate.url ? `${duplicate.service} ${duplicate.url}` : duplicate.id;
}

/**
 * The items merged into a card, each with its Split off button, behind a disclosure button
 * (`aria-expanded`, the list it controls). Closed at first: most cards need no split.
 */
function Duplicates({ item, label, busy, onSplit }: { item: Item; label: string; busy: boolean; onSplit?: (duplicate: Duplicate) => void }) {
  const [open, setOpen] = useState(false);
  const duplicates = item.duplicates ?? [];
  if (!duplicates.length) return null;
  const listId = `duplicates-${item.id}`;
  return html`<div class="moderation__duplicates">
    <button type="button" class="secondary moderation__disclosure" aria-expanded=${open ? 'true' : 'false'} aria-controls=${listId} onClick=${() => setOpen(!open)}>
      ${duplicates.length} ${duplicates.length === 1 ? 'duplicate' : 'duplicates'}<span class="visually-hidden"> of ${label}</span>
    </button>
    <ul id=${listId} hidden=${!open} aria-label=${`Duplicates of ${label}`}>
      ${duplicates.map((duplicate) => {
        const link = httpUrl(duplicate.url);
        const who = duplicate.author.name || duplicate.author.username;
        return html`<li key=${duplicate.id}>
          <span class="moderation__duplicate">
            <span>${duplicate.service}${who ? html` · ${who}` : null}</span>
            ${link ? html`<a href=${link} target="_blank" rel="noopener noreferrer nofollow" class="moderation__duplicate-link">${link}</a>` : null}
          </span>
          ${onSplit ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => onSplit(duplicate)}>Split off<span class="visually-hidden"> ${duplicateLabel(duplicate)}</span></button>` : null}
        </li>`;
      })}
    </ul>
  </div>`;
}

/** What a moderator sets on one item beside its state (`PATCH …&id=`). */
type ItemChange = { pinned?: boolean; position?: number; spotlight?: boolean; edit?: { title?: string; text?: string; media?: ({ alt?: string } | null)[] } | null };

/**
 * The edit form of a card: title, text, and the alternative text of each picture, as shown now;
 * Save sends what changed from the source's (the whole edit), Restore original removes it.
 */
function EditForm({ item, label, busy, onChange, onClose }: { item: Item; label: string; busy: boolean; onChange: (change: ItemChange) => Promise<unknown>; onClose: () => void }) {
  const media = item.media ?? [];
  const [title, setTitle] = useState(item.title ?? '');
  const [text, setText] = useState(item.text);
  const [alts, setAlts] = useState(media.map((m) => m.alt ?? ''));
  const [error, setError] = useState<unknown>(undefined);
  const save = async (event: Event) => {
    event.preventDefault();
    // Only what differs from the source's goes in the edit: a later fetch still updates the rest.
    const source = item.edited && item.original ? item.original : { title: item.title, text: item.text };
    const edit = {
      ...(title !== (source.title ?? '') ? { title } : {}),
      ...(text !== source.text ? { text } : {}),
      ...(alts.some(Boolean) ? { media: alts.map((alt) => (alt ? { alt } : null)) } : {}),
    };
    setError(undefined);
    const outcome = await onChange({ edit: Object.keys(edit).length ? edit : null });
    if (outcome === true) onClose();
    else setError(outcome);
  };
  return html`<form class="moderation__edit" aria-label=${`Edit ${label}`} onSubmit=${save}>
    <${Field} label="Title" name="edit.title" value=${title} onInput=${setTitle} error=${error} autoFocus=${true} />
    <${Field} label="Text" name="edit.text" value=${text} onInput=${setText} error=${error} multiline=${true} hint="HTML is kept as safe as collected text" />
    ${media.map(
      (m, i) => html`<${Field} key=${i} label=${`Alternative text of ${m.type === 'image' ? 'picture' : 'medium'} ${i + 1}`} name="edit.media" value=${alts[i] ?? ''}
        onInput=${(value: string) => setAlts((before) => before.map((alt, j) => (j === i ? value : alt)))} error=${error} />`,
    )}
    <div class="buttons">
      <button type="submit" disabled=${busy}>Save edit</button>
      ${item.edited ? html`<button type="button" class="secondary" disabled=${busy} onClick=${async () => (await onChange({ edit: null })) === true && onClose()}>Restore original</button>` : null}
      <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
    </div>
  </form>`;
}

function Card(props: {
  item: Item;
  base: string;
  q: string;
  current: boolean;
  selected: boolean;
  busy: boolean;
  /** The user may moderate (roles.ts): without it the card is read only. */
  moderator: boolean;
  onFocus: () => void;
  onSelect: () => void;
  onModerate: (state: State) => void;
  onSplit: (duplicate: Duplicate) => void;
  onChange: (change: ItemChange) => Promise<unknown>;
}) {
  const [editing, setEditing] = useState(false);
  const { item } = props;
  const label = labelOf(item);
  const image = imageOf(item);
  const link = httpUrl(item.url);
  const headingId = `item-${item.id}`;
  const name = item.author.name || item.author.username;
  const next: State = item.state === 'published' ? 'unpublished' : 'published';
  return html`<li class=${`moderation__item${props.current ? ' is-current' : ''}${props.selected ? ' is-selected' : ''}`}>
    <article class=${`moderation__card moderation__card--${item.state}`} tabindex="-1" data-id=${item.id} aria-labelledby=${headingId} aria-current=${props.current ? 'true' : undefined} onFocusIn=${props.onFocus} onClick=${props.onFocus}>
      <div class="moderation__top">
        ${props.moderator
          ? html`<label class="moderation__select">
              <input type="checkbox" checked=${props.selected} onChange=${props.onSelect} />
              <span class="visually-hidden">Select ${label}</span>
            </label>`
          : null}
        <span class=${`moderation__state moderation__state--${item.state}`}>${item.state}${item.removedReason ? ` · ${item.removedReason}` : ''}</span>
        ${item.pinned ? html`<span class="moderation__badge">Pinned ${item.position}</span>` : null}
        ${item.spotlight ? html`<span class="moderation__badge">Spotlight</span>` : null}
        ${item.edited ? html`<span class="moderation__badge">Edited</span>` : null}
        ${item.held ? html`<span class="moderation__badge moderation__badge--held">Held</span>` : null}
        <span class="moderation__service">${item.service} · ${item.type}</span>
      </div>
      ${image ? html`<${ScreenedImage} itemId=${item.id} url=${image.url} alt=${image.alt} moderation=${image.moderation} held=${Boolean(item.held)} label=${label} />` : null}
      <div class="moderation__body">
        ${name
          ? html`<p class="moderation__author"><span class="moderation__avatar" aria-hidden="true">${name.slice(0, 1).toUpperCase()}</span>${name}${item.author.username && item.author.username !== name ? html` <span class="muted">@${item.author.username}</span>` : null}</p>`
          : null}
        <h3 id=${headingId} class="moderation__title">${item.title || label}</h3>
        ${item.title ? html`<p class="moderation__text">${plainText(item.text)}</p>` : null}
        ${item.held ? html`<p class="moderation__held">Held by ${item.held.set.name}: ${item.held.reason}</p>` : null}
        ${item.edited && item.original ? html`<p class="moderation__original muted">Original: ${item.original.title ?? plainText(item.original.text).slice(0, 140)}</p>` : null}
        <p class="moderation__meta muted">
          <time datetime=${item.date}>${when(item.date)}</time>
          ${item.language ? html` · ${item.language}` : null}
          ${item.kudos?.score ? html` · ${item.kudos.score} kudos` : null}
          ${link ? html` · <a href=${link} target="_blank" rel="noopener noreferrer nofollow">Original<span class="visually-hidden"> of ${label}</span></a>` : null}
        </p>
        <${Duplicates} item=${item} label=${label} busy=${props.busy} onSplit=${props.moderator ? props.onSplit : undefined} />
        <${History} base=${props.base} q=${props.q} item=${item} label=${label} when=${when} />
      </div>
      ${props.moderator && item.state !== 'removed' ? html`<div class="buttons moderation__actions">
        <button type="button" class=${next === 'unpublished' ? 'secondary' : ''} disabled=${props.busy} onClick=${() => props.onModerate(next)}>
          ${next === 'published' ? 'Publish' : 'Unpublish'}<span class="visually-hidden"> ${label}</span>
        </button>
        <button type="button" class="secondary" disabled=${props.busy} onClick=${() => props.onChange({ pinned: !item.pinned })}>
          ${item.pinned ? 'Unpin' : 'Pin'}<span class="visually-hidden"> ${label}</span>
        </button>
        ${item.pinned && (item.position ?? 1) > 1
          ? html`<button type="button" class="secondary" disabled=${props.busy} onClick=${() => props.onChange({ pinned: true, position: (item.position ?? 2) - 1 })}>Move up<span class="visually-hidden"> ${label}</span></button>`
          : null}
        <button type="button" class="secondary" aria-pressed=${item.spotlight ? 'true' : 'false'} disabled=${props.busy} onClick=${() => props.onChange({ spotlight: !item.spotlight })}>
          Spotlight<span class="visually-hidden"> ${label}</span>
        </button>
        <button type="button" class="secondary" aria-expanded=${editing ? 'true' : 'false'} onClick=${() => setEditing(!editing)}>Edit<span class="visually-hidden"> ${label}</span></button>
      </div>` : null}
      ${editing && props.moderator ? html`<${EditForm} item=${item} label=${label} busy=${props.busy} onChange=${props.onChange} onClose=${() => setEditing(false)} />` : null}
    </article>
  </li>`;
}

function Shortcuts({ dialog, moderator }: { dialog: { current: HTMLDialogElement | null }; moderator: boolean }) {
  return html`<dialog ref=${dialog} class="moderation__dialog" aria-labelledby="shortcuts-title">
    <h2 id="shortcuts-title">Keyboard shortcuts</h2>
    <dl class="moderation__keys">
      ${SHORTCUTS.filter(([key]) => moderator || !'pux'.includes(key)).map(([key, what]) => html`<div><dt><kbd>${key}</kbd></dt><dd>${what}</dd></div>`)}
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

function Queue({ contractSlug, collection, moderator }: { contractSlug: string; collection: Collection; moderator: boolean }) {
  const base = `${config.queueUrl}/v1/queue/${encodeURIComponent(contractSlug)}`;
  const q = collection.slug;
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  // On a narrow screen the filters fold behind one line, "Filters (n active)" (moderation.css).
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [counts, setCounts] = useState<QueueCount | undefined>(undefined);
  const [current, setCurrentState] = useState(-1);
  // Keys pressed in quick succession (j then u) must see the card j chose before a re-render.
  const currentRef = useRef(-1);
  const setCurrent = useCallback((index: number) => {
    currentRef.current = index;
    setCurrentState(index);
  }, []);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [said, setSaid] = useState('');
  const list = useRef<HTMLOListElement>(null);
  const search = useRef<HTMLFormElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  // The stream's handler reads the latest values through these.
  const latest = useRef({ items, applied });
  latest.current = { items, applied };

  const loadCounts = useCallback(async () => {
    try {
      setCounts(await api.get<QueueCount>(`${base}/count`, { q, since: 0 }));
    } catch {
      // The list shows the error; the counts keep their last value.
    }
  }, [base, q]);

  const load = useCallback(
    async (offset = 0) => {
      setError(undefined);
      try {
        const page = await api.get<Item[]>(base, { q, since: 0, count: PAGE, offset, ...filterQuery(applied) });
        setItems((before) => (offset ? [...(before ?? []), ...page] : page));
        setMore(page.length === PAGE);
        if (!offset) {
          setFresh(new Set());
          setCurrent(-1);
        }
      } catch (caught) {
        setError(caught);
        if (!offset) setItems([]);
      }
    },
    [base, q, applied],
  );

  useEffect(() => {
    setItems(undefined);
    setSelected(new Set());
    void load();
  }, [load]);
  // The counts and the stream start once the first page is shown (and stay): the cards come first.
  const [started, setStarted] = useState(false);
  useEffect(() => {
    if (items !== undefined) setStarted(true);
  }, [items]);
  useEffect(() => {
    if (started) void loadCounts();
  }, [loadCounts, started]);

  // Filters apply as they change; the text waits for a pause in typing.
  useEffect(() => {
    const timer = setTimeout(() => setApplied(filters), filters.text === applied.text ? 0 : 300);
    return () => clearTimeout(timer);
  }, [filters]);

  // Live: items arriving or moderated elsewhere.
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
      // Removed at the source: the card says so and loses its actions (the item stays in the queue).
      // Erased (docs/api.md#erasure): the item left the queue, and its card goes.
      source.addEventListener('remove', (event) => {
        const { id, removedAt, removedReason } = JSON.parse((event as MessageEvent<string>).data) as Pick<Item, 'id' | 'removedAt'> & { removedReason?: Item['removedReason'] | 'erased' };
        if (removedReason === 'erased') {
          setItems((before) => before?.filter((i) => i.id !== id));
          setFresh((before) => (before.has(id) ? new Set([...before].filter((fresh) => fresh !== id)) : before));
        } else setItems((before) => before?.map((i) => (i.id === id ? { ...i, state: 'removed' as const, removedAt, removedReason } : i)));
        void loadCounts();
      });
      source.addEventListener('reload', () => void loadCounts());
      source.onerror = () => {
        if (source?.readyState !== EventSource.CLOSED) return;
        // Closed: the token expired (the counts' request renews it) or the server went away.
        retry = setTimeout(() => void loadCounts().then(open), 3000);
      };
    };
    open();
    return () => {
      stopped = true;
      source?.close();
      clearTimeout(retry);
    };
  }, [base, q, loadCounts, started]);

  // Undo: after a revert, the list and counts are read again (the stream also sends the items).
  const nameOf = useCallback((id: string) => {
    const item = latest.current.items?.find((one) => one.id === id);
    return item ? labelOf(item) : id;
  }, []);
  // After an undo the list is read again (pins may have moved); the current card stays current.
  const [keepId, setKeepId] = useState<string | undefined>(undefined);
  const undone = useCallback(async () => {
    const id = latest.current.items?.[currentRef.current]?.id;
    void loadCounts();
    await load();
    setKeepId(id);
  }, [load, loadCounts]);
  useEffect(() => {
    if (keepId === undefined) return;
    const index = (items ?? []).findIndex((item) => item.id === keepId);
    if (index >= 0) setCurrent(index);
    setKeepId(undefined);
  }, [keepId, items, setCurrent]);
  const undo = useUndo(undone, nameOf);
  const [pending, setPending] = useState<PendingBulk | undefined>(undefined);

  const moderate = useCallback(
    async (ids: string[], state: State) => {
      if (!ids.length) return;
      setActionError(undefined);
      setBusy((before) => new Set([...before, ...ids]));
      try {
        let auditIds: string[] = [];
        const onHeaders = (headers: Headers) => (auditIds = auditIdsOf(headers));
        const changed =
          ids.length === 1
            ? [await request<Item>('PATCH', base, { body: { state }, query: { q, id: ids[0] }, onHeaders })]
            : await request<Item[]>('PATCH', base, { body: { state, ids }, query: { q }, onHeaders });
        const byId = new Map(changed.map((item) => [item.id, item]));
        setItems((before) => before?.map((item) => byId.get(item.id) ?? item));
        const verb = state === 'published' ? 'Published' : 'Unpublished';
        undo.show(
          changed.length === 1
            ? { message: `${verb} “${labelOf(changed[0]!)}”.`, undone: `Undone: “${labelOf(changed[0]!)}” is as before.`, auditIds }
            : { message: `${verb} ${changed.length} items.`, undone: `Undone: the ${changed.length} items are as before.`, auditIds },
        );
        if (ids.length > 1) setSelected(new Set());
        void loadCounts();
      } catch (caught) {
        setActionError(caught);
      } finally {
        setBusy((before) => new Set([...before].filter((id) => !ids.includes(id))));
      }
    },
    [base, q, loadCounts, undo.show],
  );
  /** A bulk action: over CONFIRM_OVER items it waits for the confirmation dialog. */
  const moderateSelected = (ids: string[], state: State) => (ids.length > CONFIRM_OVER ? setPending({ ids, state }) : void moderate(ids, state));

  // After a split or a pin, the item's card takes the focus once it is rendered.
  const [focusId, setFocusId] = useState<string | undefined>(undefined);
  /** Pins, moves, spotlights or edits one item; a pin or move re-reads the list (other pins moved). True, or the error. */
  const change = useCallback(
    async (item: Item, body: ItemChange): Promise<unknown> => {
      setActionError(undefined);
      setBusy((before) => new Set(before).add(item.id));
      try {
        let auditIds: string[] = [];
        const changed = await request<Item>('PATCH', base, { body, query: { q, id: item.id }, onHeaders: (headers) => (auditIds = auditIdsOf(headers)) });
        if (body.pinned !== undefined) {
          await load();
          setFocusId(item.id);
        } else setItems((before) => before?.map((one) => (one.id === item.id ? changed : one)));
        const name = `“${labelOf(changed)}”`;
        const message =
          body.pinned !== undefined
            ? changed.pinned
              ? body.position !== undefined && item.pinned
                ? `Moved ${name} to ${changed.position}.`
                : `Pinned ${name} at ${changed.position}.`
              : `Unpinned ${name}.`
            : body.spotlight !== undefined
              ? `${changed.spotlight ? 'Put' : 'Took'} ${name} ${changed.spotlight ? 'in' : 'out of'} the spotlight.`
              : body.edit
                ? `Edited ${name}.`
                : `Restored the original of ${name}.`;
        undo.show({ message, undone: `Undone: ${name} is as before.`, auditIds });
        return true;
      } catch (caught) {
        setActionError(caught);
        return caught;
      } finally {
        setBusy((before) => new Set([...before].filter((id) => id !== item.id)));
      }
    },
    [base, q, load, undo.show],
  );
  const split = useCallback(
    async (card: Item, duplicate: Duplicate) => {
      setActionError(undefined);
      setBusy((before) => new Set(before).add(card.id));
      try {
        const [kept, own] = await api.post<[Item, Item]>(`${base}/split`, { duplicateId: duplicate.id }, { q, id: card.id });
        setItems((before) => before?.flatMap((item) => (item.id === card.id ? [kept, own] : item.id === own.id ? [] : [item])));
        setFresh((before) => {
          const after = new Set(before);
          after.delete(own.id);
          return after;
        });
        setSaid(`${duplicateLabel(duplicate)} split off ${labelOf(kept)}: now an item of its own.`);
        setFocusId(own.id);
        void loadCounts();
      } catch (caught) {
        setActionError(caught);
      } finally {
        setBusy((before) => new Set([...before].filter((id) => id !== card.id)));
      }
    },
    [base, q, loadCounts],
  );

  const toggle = useCallback((id: string) => {
    setSelected((before) => {
      const after = new Set(before);
      if (!after.delete(id)) after.add(id);
      return after;
    });
  }, []);

  const focusCard = useCallback(
    (index: number) => {
      const cards = list.current?.querySelectorAll<HTMLElement>('.moderation__card');
      const card = cards?.[index];
      if (!card) return;
      setCurrent(index);
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: 'nearest' });
    },
    [setCurrent],
  );

  // The keyboard shortcuts, while no field has the focus and the dialog is closed.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"], dialog[open]')) return;
      const shown = latest.current.items ?? [];
      const current = currentRef.current;
      const item = shown[current];
      switch (event.key) {
        case 'j':
          focusCard(Math.min(current + 1, shown.length - 1));
          break;
        case 'k':
          focusCard(Math.max(current - 1, 0));
          break;
        case 'p':
        case 'u':
          if (item && moderator) void moderate([item.id], event.key === 'p' ? 'published' : 'unpublished');
          break;
        case 'x':
          if (item && moderator) toggle(item.id);
          break;
        case 'z':
          if (!undo.open) return;
          void undo.undo();
          break;
        case '/': {
          // Focus at once when the field is shown, so that the next keys typed go into it and not
          // to the shortcuts; folded on a narrow screen, unfold first, then focus once shown.
          const field = search.current?.querySelector<HTMLInputElement>('input[name="text"]');
          if (field && field.offsetParent !== null) field.focus();
          else {
            setFiltersOpen(true);
            requestAnimationFrame(() => search.current?.querySelector<HTMLInputElement>('input[name="text"]')?.focus());
          }
          break;
        }
        case '?':
          dialog.current?.showModal();
          break;
        default:
          return;
      }
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [focusCard, moderate, toggle, moderator, undo.open, undo.undo]);

  useEffect(() => {
    if (!focusId) return;
    const index = (items ?? []).findIndex((item) => item.id === focusId);
    if (index >= 0) focusCard(index);
    setFocusId(undefined);
  }, [focusId, items, focusCard]);

  const selectedIds = useMemo(() => (items ?? []).filter((item) => selected.has(item.id)).map((item) => item.id), [items, selected]);
  const set = (name: keyof Filters) => (value: string) => setFilters((before) => ({ ...before, [name]: value }));
  const filterError = error instanceof ApiError && error.status === 400 ? error : undefined;

  const active = Object.keys(filterQuery(filters)).length;
  return html`<div class="moderation">
    <button type="button" class="secondary moderation__filters-toggle" aria-expanded=${filtersOpen ? 'true' : 'false'} aria-controls="moderation-filters" onClick=${() => setFiltersOpen(!filtersOpen)}>
      Filters (${active} active)
    </button>
    <form ref=${search} id="moderation-filters" class=${`card moderation__filters${filtersOpen ? ' is-open' : ''}`} role="search" aria-label="Filter the queue" onSubmit=${(event: Event) => {
      event.preventDefault();
      setApplied(filters);
    }}>
      <div class="row">
        <${Field} label="State" name="state" value=${filters.state} onInput=${set('state')} error=${filterError}
          options=${[['', 'all'], ['published', 'published'], ['unpublished', 'unpublished'], ['removed', 'removed at the source']]} />
        <${Field} label="Service" name="service" value=${filters.service} onInput=${set('service')} error=${filterError} hint="e.g. rss,twitter" />
        <${Field} label="Type" name="type" value=${filters.type} onInput=${set('type')} error=${filterError} options=${[['', 'all'], ...TYPES.map((t) => [t, t])]} />
        <${Field} label="Language" name="language" value=${filters.language} onInput=${set('language')} error=${filterError} hint="e.g. en,de" />
        <${Field} label="Text" name="text" type="search" value=${filters.text} onInput=${set('text')} error=${filterError} hint="in title and text (key /)" />
        <${Field} label="Sort" name="sort" value=${filters.sort} onInput=${set('sort')} error=${filterError}
          options=${[['', 'newest first'], ['trending', 'trending'], ['kudos', 'most kudos']]} />
        <${Field} label="Pinned" name="pinned" value=${filters.pinned} onInput=${set('pinned')} error=${filterError}
          options=${[['', 'all'], ['true', 'pinned only'], ['false', 'not pinned']]} />
        <${Field} label="View" name="held" value=${filters.held} onInput=${set('held')} error=${filterError}
          options=${[['', 'all'], ['true', 'Held']]} hint="Held: items a filter set holds for review" />
      </div>
      <div class="buttons">
        <button type="submit">Apply filters</button>
        <button type="button" class="secondary" onClick=${() => {
          setFilters(NO_FILTERS);
          setApplied(NO_FILTERS);
        }}>Clear filters</button>
      </div>
    </form>

    <div class="moderation__bar">
      <h2 id="queue-title">Queue of ${collection.name}</h2>
      <p class="moderation__counts" aria-live="polite">
        ${counts ? html`<strong>${counts.published}</strong> published · <strong>${counts.unpublished}</strong> unpublished` : 'Counting…'}
      </p>
    </div>
    <div class="buttons moderation__bulk" role="group" aria-label=${moderator ? 'Selected items' : 'Queue'}>
      ${moderator
        ? html`<button type="button" disabled=${!selectedIds.length} onClick=${() => moderateSelected(selectedIds, 'published')}>Publish selected (${selectedIds.length})</button>
            <button type="button" class="secondary" disabled=${!selectedIds.length} onClick=${() => moderateSelected(selectedIds, 'unpublished')}>Unpublish selected (${selectedIds.length})</button>
            <button type="button" class="secondary" disabled=${!items?.length} onClick=${() => setSelected(new Set((items ?? []).map((i) => i.id)))}>Select all shown</button>`
        : html`<p class="muted">Your role on this contract reads the queue; moderating needs the role moderator.</p>`}
      <button type="button" class="secondary" onClick=${() => dialog.current?.showModal()}>Keyboard shortcuts</button>
    </div>
    <${ErrorBanner} error=${actionError} />
    <${UndoNotice} state=${undo} />
    <p class="visually-hidden" aria-live="polite">${said}</p>
    <div class="moderation__news" role="status">
      ${fresh.size
        ? html`<button type="button" class="moderation__show" onClick=${async () => {
            await load();
            window.scrollTo({ top: 0 });
            focusCard(0);
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
                current=${index === current}
                selected=${selected.has(item.id)}
                busy=${busy.has(item.id)}
                moderator=${moderator}
                onFocus=${() => setCurrent(index)}
                onSelect=${() => toggle(item.id)}
                onModerate=${(state: State) => moderate([item.id], state)}
                onSplit=${(duplicate: Duplicate) => split(item, duplicate)}
                onChange=${(body: ItemChange) => change(item, body)}
              />`,
            )}
          </ol>`
        : html`<p>No items${Object.keys(filterQuery({ ...applied, sort: '' })).length ? ' match these filters' : ' in this collection yet'}.</p>`}
    ${more ? html`<button type="button" class="secondary" onClick=${() => load(items?.length ?? 0)}>Load more</button>` : null}
    <${Shortcuts} dialog=${dialog} moderator=${moderator} />
    <${ConfirmBulk} pending=${pending} onAnswer=${(go: boolean) => {
      const asked = pending;
      setPending(undefined);
      if (go && asked) void moderate(asked.ids, asked.state);
    }} />
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
