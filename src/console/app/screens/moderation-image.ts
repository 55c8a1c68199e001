/**
 * A Moderation card's picture under the image screening (issue 37; docs/filters.md#image-screening,
 * "The model"): each image medium of an item may carry `moderation`, the five class scores
 * (0–1) of the NSFW model (src/item.ts `ImageModeration`, docs/api.md's media row).
 *
 * - An image whose `porn + hentai + sexy` (the sum the rule field `media.nsfw` takes, one image's)
 *   is above `BLUR_ABOVE` is blurred (CSS `filter: blur(…)`, moderation.css) with its screening
 *   score on it and a "Show image" button;
 * - an image not classified yet is blurred the same way ("Not screened yet") when its item is
 *   held: the server holds an item of a collection that screens until its images are classified
 *   (docs/filters.md#image-screening), so a held item without scores may be one waiting for them.
 *   An item that is not held and has no scores comes from an installation or collection that does
 *   not screen, and its picture is shown as the wall shows it;
 * - "Show image" reveals that card's picture only (the button becomes "Hide image"). The choice
 *   lives in this page's memory (`revealed`), for the moderator's session in this tab: it is not
 *   sent to the server nor stored, and a reload blurs again.
 *
 * While blurred the picture's alternative text is withheld too (`alt=""`, the note says what is
 * there), so that a screen reader does not read out what the eyes are spared; revealed, it has
 * the source's (or a moderator's edit).
 */
import { useState } from 'preact/hooks';
import type { ImageModeration } from '../../../item.ts';
import { html } from '../html.ts';

/**
 * The blur threshold: an image scoring `porn + hentai + sexy` above this (0–1) is blurred. 0.5:
 * the model then leans towards an explicit class more than towards `neutral` and `drawing`
 * together (the five scores sum to about 1).
 */
export const BLUR_ABOVE = 0.5;

/** An image's screening score: `porn + hentai + sexy` (0–1; the image's share of `media.nsfw`). */
export function nsfwScore(moderation: ImageModeration): number {
  return moderation.porn + moderation.hentai + moderation.sexy;
}

/** Why a picture is blurred: its score is above `BLUR_ABOVE`, or it is held and not classified yet. */
export type Veil = { reason: 'explicit'; score: number } | { reason: 'unscreened' };

/**
 * Whether and why a picture is blurred (the module's rules): `moderation` its scores, if
 * classified; `held` whether its item is held for review. Undefined: shown as is.
 */
export function veilOf(moderation: ImageModeration | undefined, held: boolean): Veil | undefined {
  if (!moderation) return held ? { reason: 'unscreened' } : undefined;
  const score = nsfwScore(moderation);
  return score > BLUR_ABOVE ? { reason: 'explicit', score } : undefined;
}

/** The pictures revealed in this page (`<item id>\n<url>`): the moderator's choice, never stored. */
const revealed = new Set<string>();

/**
 * The card's picture `url` of item `itemId` (the first image medium): blurred with its note and
 * a Show/Hide image button when `veilOf` says so, else a plain `<img>`. `label` names the item
 * in the button's accessible name ("Show image of <label>").
 */
export function ScreenedImage({ itemId, url, alt, moderation, held, label }: { itemId: string; url: string; alt: string; moderation?: ImageModeration; held: boolean; label: string }) {
  const key = `${itemId}\n${url}`;
  const [shown, setShown] = useState(() => revealed.has(key));
  const veil = veilOf(moderation, held);
  if (!veil) return html`<img class="moderation__media" src=${url} alt=${alt} loading="lazy" decoding="async" />`;
  const toggle = () => {
    if (shown) revealed.delete(key);
    else revealed.add(key);
    setShown(!shown);
  };
  const note = veil.reason === 'explicit' ? `May be explicit: screening score ${veil.score.toFixed(2)}` : 'Not screened yet';
  return html`<div class=${`moderation__screened${shown ? ' is-shown' : ''}`}>
    <img class="moderation__media" src=${url} alt=${shown ? alt : ''} loading="lazy" decoding="async" />
    <div class="moderation__veil">
      <p>${note}</p>
      <button type="button" class="secondary" onClick=${toggle}>${shown ? 'Hide image' : 'Show image'}<span class="visually-hidden"> of ${label}</span></button>
    </div>
  </div>`;
}
