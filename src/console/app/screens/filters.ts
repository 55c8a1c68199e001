/**
 * The Filters screen (`/console/contracts/<contract id>/filters[/lists|/sets|/chains|/attach]`,
 * issue 12): the contract's filter lists, sets (the rule builder with a preview before saving),
 * chains, and which filter each input, collection and the contract has (docs/filters.md). Each
 * part has its own address, linked from the screen's own navigation.
 *
 * Loads the rule table (`GET /collection/filters/operators`) and the contract's lists, sets,
 * chains, collections and inputs (docs/api.md); every change reloads them.
 */
import { useRoute } from 'preact-iso/router';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { Screen } from '../screen.ts';
import { reloadContracts, useContractId, useSession } from '../session.ts';
import { Attach } from './filters/attach.ts';
import { Chains } from './filters/chains.ts';
import type { Collection, FilterChain, FilterList, FilterSet, Input, RuleTable } from '../resources.ts';
import { Lists } from './filters/lists.ts';
import { Sets } from './filters/sets.ts';

const PARTS = [
  ['lists', 'Lists'],
  ['sets', 'Sets'],
  ['chains', 'Chains'],
  ['attach', 'Attach'],
] as const;

interface Data {
  table: RuleTable;
  lists: FilterList[];
  sets: FilterSet[];
  chains: FilterChain[];
  collections: Collection[];
  inputs: Input[];
}

/** The screen of the module's description, for the contract of the address. */
export default function Filters() {
  const contractId = useContractId()!;
  const { params } = useRoute();
  const { contracts } = useSession();
  const part = PARTS.find(([segment]) => segment === (params.rest ?? '').split('/').find(Boolean))?.[0] ?? 'lists';
  const [data, setData] = useState<Data | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const load = useCallback(async () => {
    const query = { contract_id: contractId };
    try {
      const [table, lists, sets, chains, collections, inputs] = await Promise.all([
        api.get<RuleTable>('/collection/filters/operators'),
        api.get<FilterList[]>('/collection/lists', query),
        api.get<FilterSet[]>('/collection/sets', query),
        api.get<FilterChain[]>('/collection/chains', query),
        api.get<Collection[]>('/collection/collections', query),
        api.get<Input[]>('/collection/inputs', query),
      ]);
      setError(undefined);
      setData({ table, lists, sets, chains, collections, inputs });
    } catch (caught) {
      setError(caught);
    }
  }, [contractId]);
  useEffect(() => {
    setData(undefined);
    void load();
  }, [load]);

  const contract = contracts?.find((c) => c._id === contractId);
  const change = () => void load();
  let body = null;
  if (data) {
    if (part === 'lists') body = html`<${Lists} contractId=${contractId} lists=${data.lists.filter((list) => !list.builtIn)} onChange=${change} />`; // built-in lists are read-only: chosen in the rule builder
    else if (part === 'sets') body = html`<${Sets} contractId=${contractId} sets=${data.sets} table=${data.table} lists=${data.lists} collections=${data.collections} inputs=${data.inputs} onChange=${change} />`;
    else if (part === 'chains') body = html`<${Chains} contractId=${contractId} chains=${data.chains} sets=${data.sets} onChange=${change} />`;
    else if (contract) {
      body = html`<${Attach} contract=${contract} collections=${data.collections} inputs=${data.inputs} sets=${data.sets} chains=${data.chains} onChange=${async () => {
        await Promise.all([load(), reloadContracts()]);
      }} />`;
    }
  }
  return html`<${Screen} title="Filters">
    <nav aria-label="Filter parts" class="filters-nav">
      <ul>
        ${PARTS.map(([segment, label]) => html`<li><a href=${screenPath(contractId, 'filters', `/${segment}`)} aria-current=${segment === part ? 'page' : undefined}>${label}</a></li>`)}
      </ul>
    </nav>
    <${ErrorBanner} error=${error} />
    ${!data && !error ? html`<p class="muted">Loading…</p>` : body}
  <//>`;
}
