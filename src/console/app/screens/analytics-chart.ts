/**
 * The charts of the Analytics screen (issue 35 point 4): a few series of counts over time, drawn
 * by uPlot (https://github.com/leeoniya/uPlot, on canvas), each with its numbers as a table. The
 * chart is a picture of the table: the canvas is one image (`role="img"`) named by a sentence of
 * totals and described by the table (`aria-describedby`), the table is what screen readers and
 * keyboard users read (WCAG 2.2 1.1.1); lines of at least 3:1 against white with their own dash
 * patterns and points, so that they differ by more than colour (1.4.1, 1.4.11); labelled axes
 * and a legend in words (uPlot's own legend, a table of live values, is off).
 *
 * uPlot is imported by this module only, so it lives in the Analytics screen's lazy chunk, not
 * in the console's first load. Its stylesheet (`uplot/dist/uPlot.min.css`) is not imported (the
 * build bundles only `app/**\/*.css`): the few rules it needs are in `analytics.css`. CSP: uPlot
 * sets its sizes and positions through `element.style` (CSSOM), which `style-src 'self'` allows
 * (CSP governs `style` attributes in markup and `setAttribute`, not CSSOM); it injects no
 * `<style>` and evaluates no code.
 *
 * Width follows the figure's (375 px phones included): a `ResizeObserver` on the plot's box
 * resizes the chart when the width changes by at least a pixel, clamped to `MIN_WIDTH`..
 * `MAX_WIDTH` px, at most once per animation frame.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
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
  /** The bucket size, which names the time axis. */
  interval: 'hour' | 'day';
  series: Series[];
  /** One entry per bucket: `time` (its start, Unix seconds), `label` (as shown in the table) and a number per series key. */
  rows: ({ time: number; label: string } & Record<string, number | string>)[];
}

/** Height of the plot, CSS px. */
const HEIGHT = 200;
/** Bounds of the plot's width, CSS px. */
const MIN_WIDTH = 200;
const MAX_WIDTH = 1600;
/** Dash patterns of the lines, by series (solid, dashed, dotted, dash-dot). */
const DASHES = [[], [8, 4], [2, 3], [8, 3, 2, 3]];
const AXIS = '#57606a';
const GRID = '#d0d7de';
const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** Tick steps of the count axis: whole numbers only (1, 2, 5 × 10^n). */
const COUNT_STEPS = Array.from({ length: 10 }, (_, power) => [1, 2, 5].map((m) => m * 10 ** power)).flat();

/** A round upper bound for the count axis: 1, 2, 5 × 10^n at or above `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((value) => value >= max) ?? 10 * power;
}

function plotWidth(box: Element): number {
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, Math.floor(box.getBoundingClientRect().width)));
}

/** uPlot's options for the chart of `props` at `width` px. */
function options({ interval, series }: ChartProps, width: number, name: string, tableId: string): uPlot.Options {
  const axis = { stroke: AXIS, font: FONT, labelFont: `bold ${FONT}`, grid: { stroke: GRID, width: 1 }, ticks: { stroke: GRID, width: 1 } };
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { show: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, niceMax(max)] } },
    axes: [
      { ...axis, label: interval === 'hour' ? 'Time (per hour)' : 'Date (per day)', labelSize: 20 },
      { ...axis, label: 'Count', labelSize: 20, incrs: COUNT_STEPS, size: 44 },
    ],
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color, width: 2, dash: DASHES[i % DASHES.length], points: { size: 6, fill: s.color, stroke: s.color } }))],
    hooks: {
      // The canvas is the chart's image: named by the totals, described by the table.
      init: [
        (u) => {
          u.ctx.canvas.setAttribute('role', 'img');
          u.ctx.canvas.setAttribute('aria-label', name);
          u.ctx.canvas.setAttribute('aria-describedby', tableId);
        },
      ],
    },
  };
}

/** The chart of the module's description: a figure with the canvas, its legend and its table. */
export function Chart(props: ChartProps) {
  const { id, title, series, rows } = props;
  const box = useRef<HTMLDivElement>(null);
  const total = (key: string) => rows.reduce((sum, row) => sum + (Number(row[key]) || 0), 0);
  const name = `${title}: ${series.map((s) => `${s.label} ${total(s.key)}`).join(', ')} in all; the table below lists each period.`;
  const tableId = `${id}-table`;
  const data: uPlot.AlignedData = [rows.map((row) => row.time), ...series.map((s) => rows.map((row) => Number(row[s.key]) || 0))];
  // Rebuilt when what it draws changes, not on every render of the screen.
  const drawn = JSON.stringify([props.interval, series, data]);

  useEffect(() => {
    const target = box.current!;
    let width = plotWidth(target);
    const chart = new uPlot(options(props, width, name, tableId), data, target);
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const next = plotWidth(target);
        if (next === width) return;
        width = next;
        chart.setSize({ width, height: HEIGHT });
      });
    });
    observer.observe(target);
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
      chart.destroy();
    };
  }, [drawn]);

  return html`<figure class="chart" aria-labelledby=${`${id}-title`}>
    <figcaption id=${`${id}-title`} class="chart__title">${title}</figcaption>
    <ul class="chart__legend" aria-label=${`${title}: legend`}>
      ${series.map((s, i) => html`<li><span class=${`chart__key chart__key--${i % DASHES.length}`} style=${{ color: s.color }}></span>${s.label}</li>`)}
    </ul>
    <div class="chart__plot" ref=${box}></div>
    <div class="chart__table" id=${tableId} role="region" tabindex="0" aria-label=${`${title}: numbers`}>
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
