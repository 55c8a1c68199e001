/**
 * Filter engine benchmark (`npm run bench:filter`). Real items, parsed from the feeds in
 * `test/fixtures/rss` (or SLUICE_FIXTURES) by the rss connector and repeated up to 10 000
 * with varied authors, go through a chain of 3 sets: a 5 000-entry patterns list on text and
 * title, a 10 000-entry strings list on the author, and datediff plus numeric rules. Baselines,
 * measured in the same run on the same texts: one `String.prototype.includes` scan and one
 * re2js scan with a single pattern. Also times the pattern that hangs a backtracking engine, and
 * the same chain through the filter pool (`src/filter/pool.ts`, one worker thread) against the
 * in-process evaluation of the same run: all items in one task, and in tasks of 50 items (a
 * poll's new items), sent as a poll sends them (the filter and its lists only with the first).
 * Prints readable lines, then one JSON object as the last line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RE2JS } from 're2js';
import { parseFeed } from '../src/services/kit/feed.ts';
import type { ContentItem } from '../src/item.ts';
import { compile, evaluate, type FilterList, type FilterSet, type FilterSource } from '../src/filter/engine.ts';
import { createFilterPool } from '../src/filter/pool.ts';

const ITEMS = 10_000;
const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const dir = process.env.SLUICE_FIXTURES ?? fileURLToPath(new URL('../test/fixtures/rss/', import.meta.url));

const parsed = readdirSync(dir).flatMap((name) => {
  try {
    return parseFeed(readFileSync(join(dir, name)), undefined, 'https://feeds.example.org/feed', new Date(NOW)).items;
  } catch {
    return []; // a fixture that is broken on purpose
  }
});
const items: ContentItem[] = Array.from({ length: ITEMS }, (_, n) => {
  const item = parsed[n % parsed.length]!;
  return { ...item, author: { ...item.author, username: `user${n % 20_000}` }, kudos: { score: n % 500 } };
});
const texts = items.map((item) => `${item.title ?? ''} ${item.text}`);
const averageLength = Math.round(texts.reduce((sum, text) => sum + text.length, 0) / texts.length);

// 5 000 patterns of the kinds people write: words, variants, phrases; a few hit real feed text.
const shapes = [
  (n: number) => `/\\bspamword${n}\\b/i`,
  (n: number) => `/v[i1l]agra${n}/i`,
  (n: number) => `/casino\\s+bonus\\s+${n}/`,
  (n: number) => `/free-?money-?${n}/i`,
  (n: number) => `/^buy now ${n}/im`,
];
const patterns = Array.from({ length: 5_000 }, (_, n) => shapes[n % shapes.length]!(n));
patterns.splice(2_500, 3, '/\\bpodcast\\b/i', '/\\bgiveaway\\b/i', '/\\bsponsored\\b/i');
const lists: FilterList[] = [
  { id: 'words', type: 'patterns', entries: patterns, active: true },
  { id: 'blocked', type: 'strings', entries: Array.from({ length: 10_000 }, (_, n) => `User${n * 7}`), active: true },
];
const sets: FilterSet[] = [
  {
    id: 'spam', name: 'spam words', active: true,
    rules: [
      { operator: 'patternin', field: 'text', listId: 'words', not: false },
      { operator: 'patternin', field: 'title', listId: 'words', not: false },
    ],
  },
  { id: 'people', name: 'blocked people', active: true, rules: [{ operator: 'in', field: 'user', listId: 'blocked', not: false }] },
  {
    id: 'fresh', name: 'fresh and liked', active: true, or: true,
    rules: [
      { operator: 'datediff', field: 'date', value: 5 * 365 * 86_400, not: false },
      { operator: 'lt', field: 'kudos.score', value: 5, not: false },
    ],
  },
];

function time(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const source: FilterSource = { kind: 'chain', chain: { id: 'c', name: 'main', sets: sets.map((s) => s.id), active: true }, sets };
const compileMs = time(() => compile(source, lists));
const filter = compile(source, lists);

const rejectedBy: Record<string, number> = {};
const firstPassMs = time(() => {
  for (const item of items) {
    const decision = evaluate(filter, item, NOW);
    if (!decision.accepted) rejectedBy[decision.set.id] = (rejectedBy[decision.set.id] ?? 0) + 1;
  }
});
const filterMs = time(() => {
  for (const item of items) evaluate(filter, item, NOW);
});

let sink = 0;
const includesMs = time(() => {
  for (const text of texts) if (text.includes('spamword4242')) sink++;
});
const single = RE2JS.compile('\\bspamword4242\\b', RE2JS.CASE_INSENSITIVE);
for (const text of texts) if (single.test(text)) sink++; // the same warm-up the filter had
const singleMs = time(() => {
  for (const text of texts) if (single.test(text)) sink++;
});

const hang = compile({ kind: 'set', set: { id: 'h', name: 'hang', active: true, rules: [{ operator: 'pattern', field: 'text', value: '/(a+)+$/', not: false }] } }, []);
const hangItem = { ...items[0]!, text: `${'a'.repeat(60)}!` };
const hangAccepted = evaluate(hang, hangItem, NOW).accepted;
const HANG_RUNS = 1_000;
const hangMs = time(() => {
  for (let n = 0; n < HANG_RUNS; n++) evaluate(hang, hangItem, NOW);
});

// The pool: the worker compiles once and makes a first pass (not timed, as in-process above),
// then keeps the filter by key.
const pool = createFilterPool(1);
const BATCH = 50;
await pool.judge({ contractId: 'bench', key: 'bench', filter: source, lists, items, now: NOW }, 600_000);
async function timeAsync(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
let poolComplete = true;
const poolOneTaskMs = await timeAsync(async () => {
  poolComplete &&= (await pool.judge({ contractId: 'bench', key: 'bench', filter: source, lists, items, now: NOW }, 600_000)).complete;
});
const poolBatchesMs = await timeAsync(async () => {
  for (let start = 0; start < ITEMS; start += BATCH) {
    poolComplete &&= (await pool.judge({ contractId: 'bench', key: 'bench', filter: source, lists, items: items.slice(start, start + BATCH), now: NOW }, 600_000)).complete;
  }
});
await pool.close();

const perSecond = (ms: number) => Math.round((ITEMS / ms) * 1000);
const result = {
  items: ITEMS,
  distinctItems: parsed.length,
  averageTextChars: averageLength,
  patterns: patterns.length,
  strings: 10_000,
  compileMs: Math.round(compileMs),
  firstPassMs: Math.round(firstPassMs),
  rejected: rejectedBy,
  filterItemsPerSecond: perSecond(filterMs),
  filterMicrosPerItem: +((filterMs * 1000) / ITEMS).toFixed(2),
  includesItemsPerSecond: perSecond(includesMs),
  re2jsSingleItemsPerSecond: perSecond(singleMs),
  ratioToIncludes: +(includesMs / filterMs).toFixed(4),
  ratioToRe2jsSingle: +(singleMs / filterMs).toFixed(3),
  baselineMatches: sink,
  catastrophicAccepted: hangAccepted,
  catastrophicMicrosPerEvaluation: +((hangMs * 1000) / HANG_RUNS).toFixed(2),
  poolOneTaskItemsPerSecond: perSecond(poolOneTaskMs),
  poolBatchesItemsPerSecond: perSecond(poolBatchesMs),
  poolBatchItems: BATCH,
  ratioPoolOneTaskToInProcess: +(filterMs / poolOneTaskMs).toFixed(3),
  ratioPoolBatchesToInProcess: +(filterMs / poolBatchesMs).toFixed(3),
  poolComplete,
};

console.log(`${ITEMS} items (${parsed.length} distinct from ${dir}, ${averageLength} chars of text on average)`);
console.log(`compile: ${result.compileMs} ms (${patterns.length} patterns, 10000 strings); first pass ${result.firstPassMs} ms; rejected by set: ${JSON.stringify(rejectedBy)}`);
console.log(`filter chain:       ${result.filterItemsPerSecond} items/s, ${result.filterMicrosPerItem} µs/item`);
console.log(`includes baseline:  ${result.includesItemsPerSecond} items/s (filter is ${result.ratioToIncludes} of it)`);
console.log(`re2js one pattern:  ${result.re2jsSingleItemsPerSecond} items/s (filter is ${result.ratioToRe2jsSingle} of it)`);
console.log(`/(a+)+$/ on 60 a and !: ${result.catastrophicMicrosPerEvaluation} µs per evaluation (accepted: ${hangAccepted})`);
console.log(`pool, one task:     ${result.poolOneTaskItemsPerSecond} items/s (${result.ratioPoolOneTaskToInProcess} of in-process)`);
console.log(`pool, tasks of ${BATCH}:  ${result.poolBatchesItemsPerSecond} items/s (${result.ratioPoolBatchesToInProcess} of in-process)`);
console.log(JSON.stringify(result));
