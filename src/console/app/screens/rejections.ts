/**
 * An input's rejected items on the Sources screen (issue 33 point 4): the 100 most recent items
 * its filter rejected (`GET /collection/inputs/{id}/rejections`, docs/api.md#rejections), each
 * named by its story (title, else link, else id) and by the rule as the Filters screen's rule
 * builder says it ("set Spam, Rule 2: Title contains the pattern /live!/", filters/words.ts, from
 * the contract's sets, lists and the rule table; a set since deleted: the API's reason), with
 * **Publish anyway** (`POST /collection/inputs/{id}/rejections/publish`, moderator role): the
 * item enters the queue published and the filter leaves it alone from then on.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner } from '../forms.ts';
import { html } from '../html.ts';
import type { FilterList, FilterSet, Input, Rejection, RuleTable } from '../resources.ts';
import { draftRulesOf, ruleWords } from './filters/words.ts';

interface Loaded {
  rows: Rejection[];
  sets: FilterSet[];
  lists: FilterList[];
  table: RuleTable;
}

/** The story's name: its title, else its link, else its id. */
const storyOf = (row: Rejection) => row.title || row.url || row.id;

/** The rule that rejected `row`, in the builder's words. */
function ruleOf(row: Rejection, data: Loaded): string {
  const set = data.sets.find((s) => s._id === row.set.id);
  return `set ${row.set.name}, ${set ? ruleWords(draftRulesOf(set, data.table), set.or, row.rule, data.lists) : row.reason}`;
}

/** The list of the module's description, for `input`; read again when the input rejects more. */
export function RejectionList({ input }: { input: Input }) {
  const [data, setData] = useState<Loaded | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');
  const load = useCallback(async () => {
    const query = { contract_id: input.contractId };
    const [rows, sets, lists, table] = await Promise.all([
      api.get<Rejection[]>(`/collection/inputs/${input._id}/rejections`),
      api.get<FilterSet[]>('/collection/sets', query),
      api.get<FilterList[]>('/collection/lists', query),
      api.get<RuleTable>('/collection/filters/operators'),
    ]);
    return { rows, sets, lists, table };
  }, [input._id, input.contractId]);
  useEffect(() => {
    let live = true;
    load().then(
      (loaded) => live && (setData(loaded), setError(undefined)),
      (caught: unknown) => live && setError(caught),
    );
    return () => {
      live = false;
    };
  }, [load, input.status.rejected]);
  const publish = async (row: Rejection) => {
    setError(undefined);
    setDone('');
    try {
      await api.post(`/collection/inputs/${input._id}/rejections/publish`, { itemId: row.id });
      setDone(`Published “${storyOf(row)}”: it is in the queue, and this filter leaves it alone from now on.`);
      setData(await load());
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<section class="sources__rejections" aria-label=${`Rejected items of ${input.input}`}>
    <${ErrorBanner} error=${error} />
    <p role="status">${done}</p>
    ${data === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${data && !data.rows.length ? html`<p>No item rejected yet.</p>` : null}
    ${data?.rows.length
      ? html`<ul class="sources__rejected">
          ${data.rows.map(
            (row) => html`<li key=${row.id}>
              ${row.url ? html`<a href=${row.url} rel="noopener noreferrer" target="_blank">${storyOf(row)}</a>` : html`<span>${storyOf(row)}</span>`}
              <span class="muted"> · rejected by ${ruleOf(row, data)}</span>
              ${row.publishable
                ? html` <button type="button" class="secondary" onClick=${() => void publish(row)}>Publish anyway<span class="visually-hidden"> “${storyOf(row)}”</span></button>`
                : null}
            </li>`,
          )}
        </ul>`
      : null}
  </section>`;
}
