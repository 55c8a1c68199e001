/**
 * `npm run bench:related` (issue 36 point 5): the quality of related content on the labelled set
 * of test/fixtures/related (24 articles, 2 000 posts, each article's related posts judged;
 * generate.ts there says how they were made), against a plain keyword baseline in the same run.
 *
 * The posts are stored, published, in one SQLite collection; the article pages are served by a
 * local HTTP server on 127.0.0.1; each article is asked through the real endpoint
 * (`GET /v1/related/{contract}?q=…`, in process). The baseline is the article's title words
 * (stop words left out), OR-ed through the same full-text index and ranked by its BM25
 * (store/related.ts `relatedCandidates`). For each: precision@10 (judged related among the first
 * 10) and recall@20 (judged related among the first 20, over the 20 judged per article), averaged
 * over the articles. Goal: precision@10 ≥ 0.8 and ≥ 1.5 × the baseline's. The last line is one JSON object.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { termsOf } from '../src/lib/key-terms.ts';
import { withLanguage } from '../src/lib/language.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { relatedCandidates } from '../src/store/related.ts';
import { ownsEntries } from '../src/services/table.ts';

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures', 'related');
const items = JSON.parse(readFileSync(join(FIXTURES, 'items.json'), 'utf8')) as { id: string; title: string; text: string; tags: string[]; ageHours: number }[];
const judgements = JSON.parse(readFileSync(join(FIXTURES, 'judgements.json'), 'utf8')) as Record<string, string[]>;

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-related-'));
const server = createServer((req, res) => {
  const slug = /^\/news\/([a-z0-9-]+)$/.exec(req.url ?? '')?.[1];
  if (!slug || !judgements[slug]) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(join(FIXTURES, 'articles', `${slug}.html`)));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ALLOW_PRIVATE_FETCH: 'true', RELATED_FETCHES_PER_MINUTE: '10000', RATE_LIMIT_PUBLIC: '0' });
const db = openDb(config.databaseUrl);
await migrateToLatest(db);
const contract = await createContract(db, 'Valley Courier', 'bench');
const collection = await createCollection(db, contract.id, { name: 'Social', dedupe: 'off' }, 'bench');
const now = Date.now();
const content: ContentItem[] = items.map((item) => ({
  id: item.id,
  service: 'rss',
  type: 'status',
  title: item.title,
  text: item.text,
  tags: item.tags,
  url: `https://social.example/${item.id}`,
  date: new Date(now - item.ageHours * 3_600_000).toISOString(),
  author: { name: 'A', username: 'a', userid: null, url: null },
  media: null,
  kudos: { score: 0 },
}));
const detected = await Promise.all(content.map(withLanguage));
await db.transaction().execute((trx) => storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId: '0'.repeat(24), state: 'published' }, detected, ownsEntries));
const app = await buildApp(config, { db });

const precisionAt = (ids: string[], judged: Set<string>, k: number) => ids.slice(0, k).filter((id) => judged.has(id)).length / k;
const recallAt = (ids: string[], judged: Set<string>, k: number) => ids.slice(0, k).filter((id) => judged.has(id)).length / judged.size;
const rows: { slug: string; p10: number; r20: number; baseP10: number; baseR20: number; ms: number }[] = [];
for (const [slug, ids] of Object.entries(judgements)) {
  const judged = new Set(ids);
  const started = performance.now();
  const res = await app.inject({ method: 'GET', url: `/v1/related/${contract.slug}?q=${encodeURIComponent(`${base}/news/${slug}`)}` });
  const ms = performance.now() - started;
  if (res.statusCode !== 200) throw new Error(`${slug}: ${res.statusCode} ${res.body}`);
  const related = (res.json() as { id: string }[]).map((item) => item.id);
  const title = /<h1>([^<]*)<\/h1>/.exec(readFileSync(join(FIXTURES, 'articles', `${slug}.html`), 'utf8'))![1]!;
  const baseline = (await relatedCandidates(db, contract.id, [collection.id], [...new Set(termsOf(title))], 20)).map((key) => key.id);
  rows.push({ slug, p10: precisionAt(related, judged, 10), r20: recallAt(related, judged, 20), baseP10: precisionAt(baseline, judged, 10), baseR20: recallAt(baseline, judged, 20), ms });
}
const mean = (key: keyof (typeof rows)[number]) => rows.reduce((sum, row) => sum + (row[key] as number), 0) / rows.length;
const f = (x: number) => x.toFixed(2);
console.log('article                 P@10  R@20  base P@10  base R@20   ms');
for (const row of rows) console.log(`${row.slug.padEnd(22)} ${f(row.p10)}  ${f(row.r20)}  ${f(row.baseP10).padStart(9)}  ${f(row.baseR20).padStart(9)}  ${row.ms.toFixed(0).padStart(4)}`);
const figures = { articles: rows.length, items: items.length, precisionAt10: mean('p10'), recallAt20: mean('r20'), baselinePrecisionAt10: mean('baseP10'), baselineRecallAt20: mean('baseR20'), meanFirstAnswerMs: mean('ms') };
const ratio = figures.precisionAt10 / figures.baselinePrecisionAt10;
console.log(`\nSluice   precision@10 ${f(figures.precisionAt10)}  recall@20 ${f(figures.recallAt20)}`);
console.log(`baseline precision@10 ${f(figures.baselinePrecisionAt10)}  recall@20 ${f(figures.baselineRecallAt20)}`);
console.log(`ratio ${f(ratio)}×; goal (precision@10 ≥ 0.8 and ≥ 1.5× the baseline): ${figures.precisionAt10 >= 0.8 && ratio >= 1.5 ? 'met' : 'NOT met'}`);
console.log(JSON.stringify({ ...figures, ratio }));
await app.close();
await db.destroy();
server.close();
rmSync(dir, { recursive: true, force: true });
