/**
 * Display (`/console/contracts/<contract id>/display?collection=<collection id>`): the controls of a
 * collection's event screens, for moderators and up (ability `moderate`, roles.ts;
 * docs/api.md#display-controls). It shows what the screens show now and three buttons:
 *
 * - **Pause**: the screens hold what they show (`POST /collection/collections/{id}/display`
 *   `{"state": "paused"}`),
 * - **Blank**: a holding card with the logo and no item (`{"state": "blank"}`),
 * - **Resume**: the items play again (`{"state": "live"}`).
 *
 * The current state is the collection's `displayState` (`GET /collection/collections`), then the
 * POST's answer, and it follows changes made elsewhere (another moderator, the API) through the
 * public content stream with `display=true` (`GET {queue_url}/v1/content/{contract}/stream?q=…`,
 * docs/api.md#content-stream: a `display` event as the stream opens and on each change). The
 * button of the state in force is disabled. A link opens the collection's display page
 * (docs/api.md#display-page) in a new tab.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { config } from '../config.ts';
import { ErrorBanner } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import type { Collection } from '../resources.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';

type DisplayState = Collection['displayState'];

/** The buttons, in the order shown: the state each sets, its label and what it does. */
const CONTROLS: { state: DisplayState; label: string; hint: string }[] = [
  {
    state: 'paused',
    label: 'Pause',
    hint: 'hold what the screens show; new items wait',
  },
  {
    state: 'blank',
    label: 'Blank',
    hint: 'show a holding card with the logo, no item',
  },
  {
    state: 'live',
    label: 'Resume',
    hint: 'play the items again, the waiting ones next',
  },
];

/** What the screens show in each state, as the status line says it. */
const SHOWN: Record<DisplayState, string> = {
  live: 'live: the screens show the items as they come',
  paused: 'paused: the screens hold what they show',
  blank: 'blank: the screens show a holding card and no item',
};

/** The controls of one collection's screens. */
function Controls({ contractSlug, collection }: { contractSlug: string; collection: Collection }) {
  const [state, setState] = useState<DisplayState>(collection.displayState);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const q = collection.slug;
  const base = `${config.queueUrl}/v1/content/${encodeURIComponent(contractSlug)}/stream`;

  // Changes made elsewhere: the content stream's display events (public, no token needed).
  useEffect(() => {
    const source = new EventSource(`${base}?${new URLSearchParams({ q, display: 'true' })}`);
    source.addEventListener('display', (event) => {
      try {
        const next = (
          JSON.parse((event as MessageEvent<string>).data) as {
            state?: DisplayState;
          }
        ).state;
        if (next && next in SHOWN) setState(next);
      } catch {
        // a malformed event changes nothing; the next one (or the POST's answer) will
      }
    });
    return () => source.close();
  }, [base, q]);

  const send = async (next: DisplayState) => {
    setBusy(true);
    setError(undefined);
    try {
      const saved = await api.post<Collection>(`/collection/collections/${collection._id}/display`, { state: next });
      setState(saved.displayState);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const page = `${config.queueUrl}/v1/publication/${encodeURIComponent(contractSlug)}/display?${new URLSearchParams({ q })}`;
  return html`<section class="card display" aria-labelledby="display-title">
    <h2 id="display-title">Screens of ${collection.name}</h2>
    <p class="display__state" role="status" data-state=${state}>Now <strong>${SHOWN[state]}</strong>.</p>
    <${ErrorBanner} error=${error} />
    <div class="buttons display__buttons">
      ${CONTROLS.map(
        (c) =>
          html`<button type="button" class=${c.state === 'live' ? undefined : 'secondary'} disabled=${busy || state === c.state} aria-describedby=${`display-hint-${c.state}`} onClick=${() => send(c.state)}>
            ${c.label}
          </button>`,
      )}
    </div>
    <ul class="display__hints">
      ${CONTROLS.map((c) => html`<li id=${`display-hint-${c.state}`}><strong>${c.label}</strong>: ${c.hint}.</li>`)}
    </ul>
    <p>
      <a href=${page} target="_blank" rel="noopener">Open the display page of ${collection.name}</a>${' '}
      (opens in a new tab; show it full screen on the event's screens).
    </p>
  </section>`;
}

/** The screen of the module's description. */
export default function Display() {
  const contractId = useContractId()!;
  const { query } = useRoute();
  const { route } = useLocation();
  const { contracts } = useSession();
  const contract = contracts?.find((c) => c._id === contractId);
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    let live = true;
    setCollections(undefined);
    setError(undefined);
    api.get<Collection[]>('/collection/collections', { contract_id: contractId }).then(
      (list) => live && setCollections(list),
      (caught) => live && setError(caught),
    );
    return () => {
      live = false;
    };
  }, [contractId]);

  const chosen = collections?.find((c) => c._id === query.collection) ?? (query.collection ? undefined : collections?.[0]);
  return html`<${Screen} title="Display">
    <${ErrorBanner} error=${error} />
    ${collections === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${collections && !collections.length ? html`<p>No collections yet: create one on <a href=${screenPath(contractId, '')}>Contracts and collections</a>.</p>` : null}
    ${
      collections && collections.length > 1
        ? html`<div class="field">
            <label for="display-collection">Collection</label>
            <select
              id="display-collection"
              value=${chosen?._id ?? ''}
              onChange=${(event: Event) => route(`${screenPath(contractId, 'display')}?collection=${encodeURIComponent((event.currentTarget as HTMLSelectElement).value)}`)}
            >
              ${chosen ? null : html`<option value="">Choose a collection</option>`} ${collections.map((c) => html`<option value=${c._id}>${c.name}</option>`)}
            </select>
          </div>`
        : null
    }
    ${collections && query.collection && !chosen ? html`<div class="banner banner--error" role="alert"><p>This contract has no collection ${query.collection}: choose one above.</p></div>` : null}
    ${chosen && contract ? html`<${Controls} key=${chosen._id} contractSlug=${contract.slug} collection=${chosen} />` : null}
  <//>`;
}
