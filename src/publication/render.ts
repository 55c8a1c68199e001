/**
 * Server-side rendering of the publication with Eta templates (`views/`, autoEscape on: every
 * `<%= %>` is HTML-escaped; `<%~ %>` prints only sanitizer output and customization code).
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import { type DisplayMode, type DisplayState, PUBLICATION_TYPES } from '../lib/publication-settings.ts';
import type { AppliedCustomization } from './customizations.ts';
import type { ItemView } from './present.ts';
import { wordsFor } from './words.ts';

const eta = new Eta({ views: fileURLToPath(new URL('./views', import.meta.url)), autoEscape: true, cache: true, autoTrim: false });

/** The wall's layouts: the publication types (docs/api.md#publication-settings); grid and fullPage pack cards as masonry. */
export const LAYOUTS = PUBLICATION_TYPES;
export type Layout = (typeof LAYOUTS)[number];

export interface PageModel {
  contract: string;
  contractSlug: string;
  collection: string;
  q: string;
  layout: Layout;
  /** `trending` for a ranked collection, else `time` (docs/api.md#trending): the order the wall keeps. */
  sort: 'time' | 'trending';
  nonce: string;
  /** Base path of the page's own routes, e.g. `/v1/publication/acme`. */
  base: string;
  assets: string;
  items: ItemView[];
  /** Address of the next page for readers without JavaScript, or undefined on the last page. */
  next: string | undefined;
  pageSize: number;
  pollSeconds: number;
  /** A related widget's article address: the page shows its related items and takes no live updates (wall.js). */
  related?: string | undefined;
  customizations: AppliedCustomization[];
  /**
   * The console's origin when the page is its preview: the page script accepts unsaved CSS from
   * that origin only (`wall.js`, "preview"); undefined on the public wall.
   */
  previewOrigin?: string | undefined;
  /** Canonical BCP 47 tag of the wall's words and times (`lang` of the page). */
  language: string;
  /** The theme's `:root` rule (theme.ts), or undefined for wall.css's defaults. */
  themeCss: string | undefined;
  autoScroll: boolean;
  /** The fullscreen button: an https link (validated settings) and its text. */
  fullscreen: { link: string; text: string } | undefined;
  /** The full page's branding (https URLs from validated settings), shown when the layout is fullPage. */
  fullPage: { backgroundImage?: string | undefined; backgroundAttribution?: string | undefined; logo?: string | undefined };
}

/**
 * Customization code goes into raw-text elements; a literal `</style` or `</script` (or `<!--`
 * in a script) would end the element early, so it is escaped the way the HTML spec suggests.
 */
function rawText(code: string, tag: 'style' | 'script'): string {
  const closed = code.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
  return tag === 'script' ? closed.replace(/<!--/g, '<\\!--') : closed;
}

/**
 * The publication page's HTML for `model`: the page template (`views/page.eta`) with the items,
 * the layout's classes, the words of its language, and the theme and customizations' code escaped
 * as raw text.
 */
export function renderPage(model: PageModel): string {
  const styles = model.customizations.filter((c) => c.type === 'css').map((c) => ({ ...c, data: rawText(c.data, 'style') }));
  const scripts = model.customizations.filter((c) => c.type === 'js').map((c) => ({ ...c, data: rawText(c.data, 'script') }));
  const words = wordsFor(model.language);
  const clientWords = { justNow: words.justNow, newPost: words.newPost, newPosts: words.newPosts, pauseScrolling: words.pauseScrolling, resumeScrolling: words.resumeScrolling };
  const themeCss = model.themeCss === undefined ? undefined : rawText(model.themeCss, 'style');
  return eta.render('./page', { ...model, themeCss, styles, scripts, words, clientWords: JSON.stringify(clientWords) });
}

/** What the display page shows (docs/api.md#display-page). */
export interface DisplayModel {
  contract: string;
  contractSlug: string;
  collection: string;
  q: string;
  nonce: string;
  /** Base path of the publication's routes, e.g. `/v1/publication/acme` (cards come from `{base}/items`). */
  base: string;
  assets: string;
  language: string;
  themeCss: string | undefined;
  /** The header's text: the event's hashtag or title. */
  header: string;
  /** An https logo (validated settings), or undefined. */
  logo: string | undefined;
  /** The QR code: inline SVG from qr.ts, its URL as shown under it and its accessible name. */
  qr: { svg: string; caption: string; label: string } | undefined;
  mode: DisplayMode;
  dwellSeconds: number;
  perSlide: number;
  shuffle: boolean;
  pinnedEvery: number | undefined;
  /** The stored display state the page opens in: `blank` shows no item. */
  state: DisplayState;
  items: ItemView[];
  /** Ids of the items that are pinned (content items with `pinned: true`). */
  pinned: string[];
  pageSize: number;
}

/** The display page's HTML for `model` (`views/display.eta`), the theme escaped as raw text. */
export function renderDisplay(model: DisplayModel): string {
  const words = wordsFor(model.language);
  const clientWords = { justNow: words.justNow, newPost: words.newPost, newPosts: words.newPosts };
  const themeCss = model.themeCss === undefined ? undefined : rawText(model.themeCss, 'style');
  const settings = { mode: model.mode, dwellSeconds: model.dwellSeconds, perSlide: model.perSlide, shuffle: model.shuffle, pinnedEvery: model.pinnedEvery ?? 0, pinned: model.pinned, pageSize: model.pageSize };
  return eta.render('./display', { ...model, themeCss, words, clientWords: JSON.stringify(clientWords), settings: JSON.stringify(settings) });
}

/** The `<li>` cards of `items` with the words of `language`, for infinite scroll and live updates. */
export function renderItems(items: ItemView[], language = 'en'): string {
  return eta.render('./items', { items, words: wordsFor(language) });
}

