/**
 * The route table: one line per screen. Every screen lives under a contract:
 * `/console/contracts/<contract id>/<segment>[/…]` (the `:rest*` after the segment is the
 * screen's own, e.g. `/sources/<input id>`; its query string too). The shell's navigation lists
 * the entries in this order. A screen module's default export is its component, which gets
 * `params.contract` (and `params.rest`) through `useRoute()` from preact-iso.
 *
 * Lazy screens (`lazyScreen(() => import(…))`) are separate chunks loaded when first opened: keep the
 * big ones (the Publication screen's code editor) lazy so the first load stays under 150 KB.
 */
import type { AnyComponent } from 'preact';
import lazy from 'preact-iso/lazy';
import { ErrorBanner } from './forms.ts';
import { html } from './html.ts';
import { Screen } from './screen.ts';
import Contracts from './screens/contracts.ts';

/**
 * A screen loaded on first use (its own chunk). When the chunk cannot be fetched (network lost),
 * the screen says so with a Reload button instead of leaving the previous one hanging.
 */
export function lazyScreen(load: () => Promise<{ default: AnyComponent<any> }>): AnyComponent<any> {
  return lazy(() =>
    load().catch((error: unknown) => ({
      default: () => html`<${Screen} title="This screen could not be loaded">
        <${ErrorBanner} error=${error}>
          <p>Check the network connection, then reload the page; your unsaved input is kept.</p>
          <button type="button" onClick=${() => location.reload()}>Reload</button>
        <//>
      <//>`,
    })),
  );
}

export interface ScreenEntry {
  /** Path segment after the contract ('' for the contract's own screen). */
  segment: string;
  /** Name in the navigation. */
  label: string;
  component: AnyComponent<any>;
}

export const SCREENS: ScreenEntry[] = [
  { segment: '', label: 'Contracts & collections', component: Contracts },
  { segment: 'sources', label: 'Sources', component: lazyScreen(() => import('./screens/sources.ts')) },
  { segment: 'moderation', label: 'Moderation', component: lazyScreen(() => import('./screens/moderation.ts')) },
  { segment: 'filters', label: 'Filters', component: lazyScreen(() => import('./screens/filters.ts')) },
  { segment: 'publication', label: 'Publication', component: lazyScreen(() => import('./screens/publication.ts')) },
  { segment: 'connections', label: 'Connections', component: lazyScreen(() => import('./screens/connections.ts')) },
];

/** The route pattern of an entry for preact-iso's Router. */
export function routePattern(entry: ScreenEntry): string {
  return entry.segment ? `/console/contracts/:contract/${entry.segment}/:rest*` : '/console/contracts/:contract';
}
