/**
 * A small accessible bar chart for the Analytics screen (issue 35 point 4): grouped bars of a few
 * series over time, drawn as SVG, with its numbers as a table beside it (the chart is a picture
 * of the table: the SVG is one image with a short label, the table is what screen readers and
 * keyboard users read; WCAG 2.2 1.1.1 and 1.4.11, bars of at least 3:1 against the background).
 *
 * Our own code for now: the package has no chart library yet. Replacing the SVG by uPlot or
 * Chart.js keeps the table as the text alternative.
 */
import { html } from '../html.ts';

export interface Series {
  /** The row's field in `rows`. */
  key: string;
  label: string;
  /** A colour with at least 3:1 against white (WCAG 1.4.11). */
  color: string;
}

export interface ChartProps {
  /** Unique in the page: ids of the caption and the table derive from it. */
  id: string;
  title: string;
  series: Series[];
  /** One entry per bucket: `label` (the bucket's time, as shown) and a number per series key. */
  rows: ({ label: string } & Record<string, number | string>)[];
}

const WIDTH = 640;
const HEIGHT = 200;
const PAD = { left: 36, right: 8, top: 8, bottom: 20 };

/** A round upper bound for the axis: 1, 2, 5 × 10^n at or above `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].map((m) => m * power).find((value) => value >= max) ?? 10 * power);
}

/** The chart of the module's description: a figure with the SVG, its legend and its table. */
export function BarChart({ id, title, series, rows }: ChartProps) {
  const values = rows.flatMap((row) => series.map((s) => Number(row[s.key]) || 0));
  const top = niceMax(Math.max(0, ...values));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, rows.length);
  const bar = Math.max(1, (slot * 0.8) / series.length);
  const y = (value: number) => PAD.top + plotH - (value / top) * plotH;
  const total = (key: string) => rows.reduce((sum, row) => sum + (Number(row[key]) || 0), 0);
  const summary = `${title}: ${series.map((s) => `${s.label} ${total(s.key)}`).join(', ')} in all; the table below lists each ${rows.length > 0 ? 'period' : 'value'}.`;
  const labelEvery = Math.max(1, Math.ceil(rows.length / 6));
  return html`<figure class="chart" aria-labelledby=${`${id}-title`}>
    <figcaption id=${`${id}-title`} class="chart__title">${title}</figcaption>
    <svg class="chart__svg" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${summary} preserveAspectRatio="none">
      <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(0)} y2=${y(0)} stroke="#57606a" />
      <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(top)} y2=${y(top)} stroke="#d0d7de" />
      <text x=${PAD.left - 4} y=${y(top) + 4} text-anchor="end" font-size="11" fill="#57606a">${top}</text>
      <text x=${PAD.left - 4} y=${y(0)} text-anchor="end" font-size="11" fill="#57606a">0</text>
      ${rows.map((row, i) =>
        series.map((s, j) => {
          const value = Number(row[s.key]) || 0;
          if (!value) return null;
          const x = PAD.left + i * slot + slot * 0.1 + j * bar;
          return html`<rect x=${x} y=${y(value)} width=${bar} height=${Math.max(1, y(0) - y(value))} fill=${s.color}><title>${`${row.label}: ${s.label} ${value}`}</title></rect>`;
        }),
      )}
      ${rows.map((row, i) => (i % labelEvery === 0 ? html`<text x=${PAD.left + i * slot + slot / 2} y=${HEIGHT - 6} text-anchor="middle" font-size="11" fill="#57606a">${row.label}</text>` : null))}
    </svg>
    <ul class="chart__legend" aria-hidden="true">
      ${series.map((s) => html`<li><span class="chart__swatch" style=${`background:${s.color}`}></span>${s.label}</li>`)}
    </ul>
    <div class="chart__table" role="region" tabindex="0" aria-label=${`${title}: numbers`}>
      <table>
        <caption class="visually-hidden">${title}</caption>
        <thead><tr><th scope="col">Period</th>${series.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
        <tbody>
          ${rows.map((row) => html`<tr><th scope="row">${row.label}</th>${series.map((s) => html`<td>${Number(row[s.key]) || 0}</td>`)}</tr>`)}
        </tbody>
      </table>
    </div>
  </figure>`;
}
