/**
 * The route table: one line per screen. Every screen lives under a contract:
 * `/console/contracts/<contract id>/<segment>[/…]` (the `:rest*` after the segment is the
 * screen's own, e.g. `/sources/<input id>`; its query string too). The shell's navigation lists
 * the entries in this order. A screen module's default export is its component, which gets
 * `params.contract` (and `params.rest`) through `useRoute()` from preact-iso.
 *
 * Each entry names the `ability` (roles.ts) a screen needs: the navigation lists only the screens
 * of the user's role on the contract, and opening another's address says which role it needs
 * instead of showing controls the API would refuse.
 *
 * The one screen under no contract is the signed-in user's own `ACCOUNT` (`/console/account`):
 * open to everyone signed in, linked beside the user's name rather than in the navigation.
 *
 * Lazy screens (`lazyScreen(() => import(…))`) are separate chunks loaded when first opened: keep the
 * big ones (the Publication screen's code editor) lazy so the first load stays under 150 KB.
 */
import type { AnyComponent } from 'preact';
import lazy from 'preact-iso/lazy';
import { ErrorBanner } from './forms.ts';
import { html } from './html.ts';
import { ACCOUNT_PATH } from './paths.ts';
import { type Ability, ABILITIES, may, type Role, roleOn } from './roles.ts';
import { Screen } from './screen.ts';
import Contracts from './screens/contracts.ts';
import { useContractId, useSession } from './session.ts';

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
  /** What the user's role must allow for the screen to be listed and shown (roles.ts). */
  ability: Ability;
  /** Starts loading a lazy screen's chunk (main.ts, at start-up, for the screen of the address). */
  preload?: () => Promise<unknown>;
}

/**
 * `component` for the roles that have `ability`; for a role without it, a screen saying which
 * role it needs. Without a grant (or an unknown contract) the screen itself shows the API's
 * answer ("no access").
 */
function forRole(ability: Ability, label: string, component: AnyComponent<any>): AnyComponent<any> {
  return function RoleScreen(props: object) {
    const contractId = useContractId();
    const { contracts, error } = useSession();
    const role: Role | undefined = roleOn(contracts, contractId);
    if (!contracts && !error) return html`<p class="muted">Loading…</p>`;
    if (role && !may(role, ability)) {
      return html`<${Screen} title=${label}>
        <p>${label} needs the role ${ABILITIES[ability]} (or higher) on this contract; your role is ${role}. Ask an admin of the contract to change it.</p>
      <//>`;
    }
    return html`<${component} ...${props} />`;
  };
}

function entry(segment: string, label: string, ability: Ability, component: AnyComponent<any> & { preload?: () => Promise<unknown> }): ScreenEntry {
  return { segment, label, ability, component: forRole(ability, label, component), preload: component.preload };
}

export const SCREENS: ScreenEntry[] = [
  entry('', 'Contracts & collections', 'read', Contracts),
  entry('sources', 'Sources', 'edit', lazyScreen(() => import('./screens/sources.ts'))),
  entry('moderation', 'Moderation', 'read', lazyScreen(() => import('./screens/moderation.ts'))),
  entry('display', 'Display', 'moderate', lazyScreen(() => import('./screens/display.ts'))),
  entry('filters', 'Filters', 'edit', lazyScreen(() => import('./screens/filters.ts'))),
  entry('publication', 'Publication', 'edit', lazyScreen(() => import('./screens/publication.ts'))),
  entry('analytics', 'Analytics', 'read', lazyScreen(() => import('./screens/analytics.ts'))),
  entry('connections', 'Connections', 'admin', lazyScreen(() => import('./screens/connections.ts'))),
  entry('team', 'Team', 'admin', lazyScreen(() => import('./screens/team.ts'))),
  entry('blocked', 'Blocked authors', 'admin', lazyScreen(() => import('./screens/blocked.ts'))),
];

/** The Account screen (password, two-factor sign-in, sign out everywhere): every signed-in user's, under no contract. */
export const ACCOUNT = { path: ACCOUNT_PATH, label: 'Account', component: lazyScreen(() => import('./screens/account.ts')) };

/** The route pattern of an entry for preact-iso's Router. */
export function routePattern(entry: ScreenEntry): string {
  return entry.segment ? `/console/contracts/:contract/${entry.segment}/:rest*` : '/console/contracts/:contract';
}
