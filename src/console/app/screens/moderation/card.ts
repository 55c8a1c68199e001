/**
 * The Moderation screen's card (../moderation.ts) with its parts: the duplicates disclosure with
 * Split off, and the edit form. Item HTML is never injected: text goes through `plainText`,
 * pictures only from `showable` addresses, links only http(s).
 */
import { useState } from 'preact/hooks';
import type { ImageModeration } from '../../../../item.ts';
import { config } from '../../config.ts';
import { Field } from '../../forms.ts';
import { html } from '../../html.ts';
import type { Duplicate, Item } from '../../resources.ts';
import { ScreenedImage } from '../moderation-image.ts';
import { History } from '../moderation-undo.ts';
import { duplicateLabel, labelOf, plainText } from './text.ts';
import type { ItemChange, State } from './changes.ts';

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

// One formatter for every card: `toLocaleString` with options builds a new one per call (slow over a page of 50).
const DATES = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function when(date: string): string {
  const at = new Date(date);
  return Number.isNaN(at.getTime()) ? date : DATES.format(at);
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

/**
 * One item of the queue as a card (the module description of ../moderation.ts): state and badges,
 * the screened picture, author, title, plain text, why it is held, the original of an edit, date,
 * language, kudos and link, its duplicates and history; for a moderator (roles.ts) the selection
 * box and the Publish/Unpublish, Pin, Move up, Spotlight and Edit controls (none on an item
 * removed at the source). The callbacks do the work (use-queue-actions.ts).
 */
export function Card(props: {
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
