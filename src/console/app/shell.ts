/**
 * The app shell: skip link, header (contract switcher, navigation of `routes.ts` whose links
 * carry the collection in use, `?collection=`, the user and Sign out), the banners (network lost, unexpected errors) and the screen in `<main>`. Each
 * screen has its own address under /console/ (the server answers index.html for all of them).
 * Errors thrown while rendering a screen are caught here and shown in its place: never a blank
 * screen.
 */
import { Component, type ComponentChildren } from 'preact';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso/router';
import { useEffect, useId, useState } from 'preact/hooks';
import { network, retryWaiting } from './api.ts';
import { signOut } from './auth.ts';
import { ErrorBanner } from './forms.ts';
import { html } from './html.ts';
import { locate, screenPath, withCollection } from './paths.ts';
import { rememberedCollection } from './remember.ts';
import { may, roleOn } from './roles.ts';
import { ACCOUNT, routePattern, SCREENS } from './routes.ts';
import { Screen } from './screen.ts';
import { defaultContractId, useSession } from './session.ts';
import { createStore, useStore } from './store.ts';

/** Errors nobody caught (a rejected promise of a screen): shown in a banner. */
const unexpected = createStore<unknown>(undefined);
if (typeof window !== 'undefined') window.addEventListener('unhandledrejection', (event) => unexpected.set(event.reason));

/** Shows a screen's rendering error in its place; going to another address clears it. */
class ErrorBoundary extends Component<{ path: string; children?: ComponentChildren }, { error?: unknown }> {
  override state: { error?: unknown } = {};
  override componentDidCatch(error: unknown) {
    this.setState({ error });
  }
  override componentDidUpdate(previous: { path: string }) {
    if (previous.path !== this.props.path && this.state.error !== undefined) this.setState({ error: undefined });
  }
  override render() {
    if (this.state.error !== undefined) {
      return html`<${Screen} title="Something went wrong">
        <${ErrorBanner} error=${this.state.error}><p>Reload the page to try again; your unsaved input is kept.</p><//>
      <//>`;
    }
    return this.props.children;
  }
}

function NetworkBanner() {
  const { lost } = useStore(network);
  if (!lost) return null;
  return html`<div class="banner banner--warn" role="alert">
    <p>The server cannot be reached: check the network connection. Your unsaved input is kept.</p>
    <button type="button" onClick=${retryWaiting}>Retry</button>
  </div>`;
}

function UnexpectedBanner() {
  const error = useStore(unexpected);
  if (error === undefined) return null;
  return html`<${ErrorBanner} error=${error}><button type="button" onClick=${() => unexpected.set(undefined)}>Dismiss</button><//>`;
}

function ContractSwitcher({ current, segment }: { current: string | undefined; segment: string }) {
  const { contracts } = useSession();
  const { route } = useLocation();
  const id = useId();
  if (!contracts?.length) return null;
  const known = contracts.some((contract) => contract._id === current);
  return html`<div class="switcher">
    <label for=${id}>Contract</label>
    <select id=${id} value=${known ? current : ''} onChange=${(event: Event) => route(screenPath((event.currentTarget as HTMLSelectElement).value, segment))}>
      ${known ? null : html`<option value="" disabled>Choose…</option>`}
      ${contracts.map((contract) => html`<option value=${contract._id}>${contract.name}</option>`)}
    </select>
  </div>`;
}

function Header() {
  const { path, query } = useLocation();
  const { me, contracts } = useSession();
  const { contractId, segment } = locate(path);
  const current = contractId ?? defaultContractId(contracts);
  // Every screen's address names the collection in use: the address's, else the last shown (remember.ts).
  const collection = current ? ((contractId === current ? query.collection : undefined) ?? rememberedCollection(me?.consumer_id, current)) : undefined;
  const role = roleOn(contracts, current);
  const [leaving, setLeaving] = useState(false);
  return html`<header class="top">
    <a class="brand" href="/console/">Sluice</a>
    <${ContractSwitcher} current=${current} segment=${segment ?? ''} />
    ${current
      ? html`<nav aria-label="Screens"><ul>
          ${SCREENS.filter((entry) => (role ? may(role, entry.ability) : entry.ability === 'read')).map((entry) => html`<li><a href=${withCollection(screenPath(current, entry.segment), collection)} aria-current=${contractId && segment === entry.segment ? 'page' : undefined}>${entry.label}</a></li>`)}
        </ul></nav>`
      : null}
    <div class="who">
      ${me ? html`<span class="who__name">${me.consumer_name}${role ? html` <span class="who__role muted">(${role})</span>` : null}</span>` : null}
      <a href=${ACCOUNT.path} aria-current=${path === ACCOUNT.path ? 'page' : undefined}>${ACCOUNT.label}</a>
      <button type="button" disabled=${leaving} onClick=${() => {
        setLeaving(true);
        void signOut();
      }}>Sign out</button>
    </div>
  </header>`;
}

/** `/console/`: the last used (or first) contract's screen, or why there is none. */
function Home() {
  const { contracts, error } = useSession();
  const { route } = useLocation();
  const target = defaultContractId(contracts);
  useEffect(() => {
    if (target) route(screenPath(target, ''), true);
  }, [target]);
  if (error) return html`<${Screen} title="Sluice console"><${ErrorBanner} error=${error} /><//>`;
  if (!contracts || target) return html`<p class="muted">Loading…</p>`;
  return html`<${Screen} title="No contracts yet">
    <p>Your account has no contract yet. The operator of this Sluice gives you one with
    <code>sluice admin grant --consumer &lt;your user name&gt; --contract &lt;contract&gt;</code>.</p>
  <//>`;
}

function NotFound() {
  return html`<${Screen} title="Page not found"><p>There is no console screen at this address. <a href="/console/">Go to the start</a>.</p><//>`;
}

let shownPath = typeof location === 'undefined' ? '' : location.pathname;

/**
 * After a navigation, moves focus to the new screen's heading (or `<main>`), so keyboard and
 * screen reader users follow. Not for the start page's redirect to a contract: focus then stays
 * at the top of the page, where the skip link is.
 */
function focusScreen(url: string) {
  const from = shownPath.replace(/\/+$/, '');
  shownPath = new URL(url, location.origin).pathname;
  if (from === '/console') return;
  requestAnimationFrame(() => (document.querySelector<HTMLElement>('#screen-title') ?? document.getElementById('main'))?.focus());
}

/** The page around the screens: skip link, header, the banners (network lost, unexpected error) and the routed screen in `<main>`. */
export function Shell() {
  const { path } = useLocation();
  const { error } = useSession();
  return html`<a class="skip" href="#main">Skip to content</a>
    <${Header} />
    <${NetworkBanner} />
    <${UnexpectedBanner} />
    <main id="main" tabindex="-1">
      ${error ? html`<${ErrorBanner} error=${error} />` : null}
      <${ErrorBoundary} path=${path}>
        <${Router} onRouteChange=${focusScreen}>
          <${Route} path="/console" component=${Home} />
          ${SCREENS.map((entry) => html`<${Route} path=${routePattern(entry)} component=${entry.component} />`)}
          <${Route} path=${ACCOUNT.path} component=${ACCOUNT.component} />
          <${Route} default component=${NotFound} />
        <//>
      <//>
    </main>`;
}

/** The console: the shell under preact-iso's location, scoped to `/console`. */
export function App() {
  return html`<${LocationProvider} scope="/console"><${Shell} /><//>`;
}
