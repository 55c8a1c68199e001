/**
 * Server-side rendering of the publication with Eta templates (`views/`, autoEscape on: every
 * `<%= %>` is HTML-escaped; `<%~ %>` prints only sanitizer output and customization code).
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { AppliedCustomization } from './customizations.ts';
import type { ItemView } from './present.ts';

const eta = new Eta({ views: fileURLToPath(new URL('./views', import.meta.url)), autoEscape: true, cache: true, autoTrim: false });

export const LAYOUTS = ['vertical', 'horizontal', 'grid'] as const;
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
  customizations: AppliedCustomization[];
  /**
   * The console's origin when the page is its preview: the page script accepts unsaved CSS from
   * that origin only (`wall.js`, "preview"); undefined on the public wall.
   */
  previewOrigin?: string | undefined;
}

/**
 * Customization code goes into raw-text elements; a literal `</style` or `</script` (or `<!--`
 * in a script) would end the element early, so it is escaped the way the HTML spec suggests.
 */
function rawText(code: string, tag: 'style' | 'script'): string {
  const closed = code.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
  return tag === 'script' ? closed.replace(/<!--/g, '<\\!--') : closed;
}

/** The publication page's HTML for `model`: the page template (`views/page.eta`) with the items, the layout's classes and the customizations' code escaped as raw text. */
export function renderPage(model: PageModel): string {
  const styles = model.customizations.filter((c) => c.type === 'css').map((c) => ({ ...c, data: rawText(c.data, 'style') }));
  const scripts = model.customizations.filter((c) => c.type === 'js').map((c) => ({ ...c, data: rawText(c.data, 'script') }));
  return eta.render('./page', { ...model, styles, scripts });
}

/** The `<li>` cards of `items`, for infinite scroll and live updates. */
export function renderItems(items: ItemView[]): string {
  return eta.render('./items', { items });
}
