/**
 * The Analytics screen (`/console/contracts/<contract id>/analytics`, issue 35 point 4): a
 * collection's publication analytics over a chosen range (`GET /collection/analytics`,
 * docs/api.md#analytics): views and clicks, items collected and moderated, per hour or day, each
 * chart (uPlot, `analytics-chart.ts`) with its table; views per embedding origin, the sources that collected most, and the top
 * items and authors by clicks. Any role may read it (a viewer's screen).
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner } from '../forms.ts';
import { html } from '../html.ts';
import type { Answer, Collection } from '../resources.ts';
import { Screen } from '../screen.ts';
import { useContractId } from '../session.ts';
import { Chart, type Series } from './analytics-chart.ts';

type Analytics = Answer<'/collection/analytics', 'get'>;

/** The ranges offered: how far back from now, and the bucket size. */
const RANGES = [
  { value: '24h', label: 'Last 24 hours, per hour', seconds: 24 * 3600, interval: 'hour' },
  { value: '7d', label: 'Last 7 days, per day', seconds: 7 * 86400, interval: 'day' },
  { value: '30d', label: 'Last 30 days, per day', seconds: 30 * 86400, interval: 'day' },
  { value: '92d', label: 'Last 92 days, per day', seconds: 92 * 86400, interval: 'day' },
] as const;

// Colours of at least 3:1 against white (WCAG 1.4.11), told apart by more than hue in the table.
const AUDIENCE: Series[] = [
  { key: 'wallViews', label: 'Wall views', color: '#1d4ed8' },
  { key: 'displayViews', label: 'Display views', color: '#7c3aed' },
  { key: 'clicks', label: 'Clicks', color: '#b45309' },
];
const ITEMS: Series[] = [
  { key: 'collected', label: 'Collected', color: '#1d4ed8' },
  { key: 'published', label: 'Published', color: '#047857' },
  { key: 'unpublished', label: 'Unpublished', color: '#b45309' },
  { key: 'removed', label: 'Removed by filters', color: '#b42318' },
];

/** A bucket's start as shown: the hour or the date, in the browser's time zone. */
function bucketLabel(iso: string, interval: string): string {
  const date = new Date(iso);
  return interval === 'hour' ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

/** The screen of the module's description, for the contract of the address. */
export default function AnalyticsScreen() {
  const contractId = useContractId()!;
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [collectionId, setCollectionId] = useState('');
  const [range, setRange] = useState<(typeof RANGES)[number]['value']>('7d');
  const [data, setData] = useState<Analytics | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    setCollections(undefined);
    api
      .get<Collection[]>('/collection/collections', { contract_id: contractId })
      .then((list) => {
        setCollections(list);
        setCollectionId((current) => (list.some((c) => c._id === current) ? current : (list[0]?._id ?? '')));
      })
      .catch(setError);
  }, [contractId]);

  useEffect(() => {
    if (!collectionId) return;
    const chosen = RANGES.find((r) => r.value === range)!;
    const to = Math.floor(Date.now() / 1000);
    setData(undefined);
    api
      .get<Analytics>('/collection/analytics', { collection_id: collectionId, from: to - chosen.seconds + 1, to, interval: chosen.interval })
      .then((answer) => {
        setError(undefined);
        setData(answer);
      })
      .catch(setError);
  }, [collectionId, range]);

  const rows = data ? data.series.map((bucket) => ({ ...bucket, time: Date.parse(bucket.start) / 1000, label: bucketLabel(bucket.start, data.interval) })) : [];
  const sum = (key: keyof Analytics['series'][number]) => (data ? data.series.reduce((total, bucket) => total + Number(bucket[key]), 0) : 0);

  return html`<${Screen} title="Analytics">
    <p class="muted">Counted without cookies and without keeping visitors' addresses; new counts arrive within a few seconds.</p>
    <div class="analytics__controls">
      <label class="field">Collection
        <select value=${collectionId} onChange=${(e: Event) => setCollectionId((e.target as HTMLSelectElement).value)} disabled=${!collections?.length}>
          ${(collections ?? []).map((c) => html`<option value=${c._id}>${c.name}</option>`)}
        </select>
      </label>
      <label class="field">Period
        <select value=${range} onChange=${(e: Event) => setRange((e.target as HTMLSelectElement).value as typeof range)}>
          ${RANGES.map((r) => html`<option value=${r.value}>${r.label}</option>`)}
        </select>
      </label>
    </div>
    <${ErrorBanner} error=${error} />
    ${collections && !collections.length ? html`<p>This contract has no collection yet.</p>` : null}
    ${collectionId && !data && !error ? html`<p class="muted">Loading…</p>` : null}
    ${data
      ? html`
          <dl class="analytics__totals" aria-label="Totals of the period">
            ${[...AUDIENCE, { key: 'impressions', label: 'Impressions' }, ...ITEMS].map((s) => html`<div><dt>${s.label}</dt><dd>${sum(s.key as keyof Analytics['series'][number])}</dd></div>`)}
          </dl>
          <${Chart} id="chart-audience" title="Views and clicks" interval=${data.interval} series=${AUDIENCE} rows=${rows} />
          <${Chart} id="chart-items" title="Items collected and moderated" interval=${data.interval} series=${ITEMS} rows=${rows} />
          <section aria-labelledby="top-items">
            <h2 id="top-items">Top items by clicks</h2>
            ${data.topItems.length
              ? html`<div class="chart__table" role="region" tabindex="0" aria-labelledby="top-items"><table>
                  <thead><tr><th scope="col">Item</th><th scope="col">Author</th><th scope="col">Clicks</th><th scope="col">Impressions</th></tr></thead>
                  <tbody>${data.topItems.map((item) => html`<tr><th scope="row">${item.title ?? item.id}</th><td>${item.author ?? '—'}</td><td>${item.clicks}</td><td>${item.impressions}</td></tr>`)}</tbody>
                </table></div>`
              : html`<p class="muted">No clicks in this period.</p>`}
          </section>
          <section aria-labelledby="top-authors">
            <h2 id="top-authors">Top authors by clicks</h2>
            ${data.topAuthors.length
              ? html`<ol>${data.topAuthors.map((a) => html`<li>${a.author}: ${a.clicks} ${a.clicks === 1 ? 'click' : 'clicks'}</li>`)}</ol>`
              : html`<p class="muted">No clicks in this period.</p>`}
          </section>
          <section aria-labelledby="origins">
            <h2 id="origins">Views per embedding site</h2>
            ${data.origins.length
              ? html`<ul>${data.origins.map((o) => html`<li>${o.page === 'wall' ? 'Wall' : 'Display'}, ${o.origin ?? 'opened directly'}: ${o.views} ${o.views === 1 ? 'view' : 'views'}</li>`)}</ul>`
              : html`<p class="muted">No views in this period.</p>`}
          </section>
          <section aria-labelledby="sources">
            <h2 id="sources">Items collected per source</h2>
            ${data.sources.length
              ? html`<ul>${data.sources.map((s) => html`<li>${s.service ?? 'source'} ${s.input ?? s.inputId}: ${s.total}</li>`)}</ul>`
              : html`<p class="muted">Nothing collected in this period.</p>`}
          </section>
        `
      : null}
  <//>`;
}
