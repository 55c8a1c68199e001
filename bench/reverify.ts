/**
 * Re-verification's cost (issue 34 point 2, docs/services.md#re-verification; `npm run
 * bench:freshness` runs it after the freshness paths): lookup requests per 1 000 stored items per
 * service. BENCH_REVERIFY_ITEMS items (default 1000) of each service with a batch lookup are stored
 * in one collection (SQLite, in-process), made due by moving the re-verifier's clock a day and an
 * hour on, and checked by `startReverify` against one local fake API on 127.0.0.1 that answers every
 * lookup with every asked item still there, its text different from the stored one (hand-made
 * minimal payloads in each API's documented shape), so that every answer also takes the update
 * path. Reported per service: requests, items checked, requests per 1 000 items; and in all, items
 * removed (0 expected: nothing was said gone) and updated (every item expected).
 *
 * Run alone: `node bench/reverify.ts [items]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ReverifyCounts, startReverify } from '../src/collect/reverify.ts';
import { loadConfig } from '../src/config.ts';
import type { ContentItem } from '../src/item.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract } from '../src/store/contracts.ts';
import { openDb } from '../src/store/db.ts';
import { insertInputs } from '../src/store/inputs.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { ownsEntries } from '../src/services/table.ts';

/** One service's figures. */
export interface ReverifyFigure {
  service: string;
  items: number;
  requests: number;
  requestsPer1000: number;
  removed: number;
  updated: number;
}

const DAY_MS = 86_400_000;

/** Every lookup answered with the asked items as they are (see the module). */
function answer(path: string, query: URLSearchParams): unknown {
  const date = new Date(Date.now() - DAY_MS).toISOString();
  if (path === '/x/2/tweets') return { data: query.get('ids')!.split(',').map((id) => ({ id, text: `post ${id}`, author_id: '1', created_at: date })) };
  if (path === '/yt/videos') return { items: query.get('id')!.split(',').map((id) => ({ id, snippet: { title: `video ${id}`, description: '', publishedAt: date, channelId: 'UC1' } })) };
  if (path === '/bsky/xrpc/app.bsky.feed.getPosts') {
    return { posts: query.getAll('uris').map((uri) => ({ uri, cid: 'bafy', author: { did: uri.split('/')[2], handle: 'bench.test' }, record: { $type: 'app.bsky.feed.post', text: `post ${uri}`, createdAt: date }, indexedAt: date })) };
  }
  if (path === '/fb/') return Object.fromEntries(query.get('ids')!.split(',').map((id) => [id, { id, message: `post ${id}`, created_time: date, permalink_url: `https://www.facebook.com/${id}` }]));
  if (path === '/api/v1/statuses') {
    return query.getAll('id[]').map((id) => ({ id, content: `<p>status ${id}</p>`, created_at: date, url: `https://mastodon.test/@bench/${id}`, account: { id: '1', acct: 'bench', username: 'bench', display_name: 'Bench', url: 'https://mastodon.test/@bench' } }));
  }
  if (path === '/vimeo/videos') return { data: query.get('uris')!.split(',').map((uri) => ({ uri, name: `video ${uri}`, link: `https://vimeo.com${uri.slice('/videos'.length)}`, created_time: date, release_time: date })) };
  if (path === '/vk/wall.getById') {
    const items = query.get('posts')!.split(',').map((post) => {
      const [owner, id] = post.split('_');
      return { owner_id: Number(owner), id: Number(id), from_id: Number(owner), text: `post ${post}`, date: Math.floor(Date.now() / 1000) - 86_400 };
    });
    return { response: { items, profiles: [], groups: [] } };
  }
  if (path === '/tumblr/blog/bench.tumblr.com/posts') {
    const id = query.get('id')!;
    return { meta: { status: 200, msg: 'OK' }, response: { posts: [{ id: Number(id), id_string: id, type: 'text', blog_name: 'bench', body: `<p>post ${id}</p>`, timestamp: Math.floor(Date.now() / 1000) - 86_400 }] } };
  }
  if (path === '/flickr/' && query.get('method') === 'flickr.photos.getInfo') return { stat: 'ok', photo: { id: query.get('photo_id'), title: { _content: 'photo' } } };
  return undefined;
}

/** The item id of the `n`th stored item of `service` (the lookup's id pattern), and its input. */
const SERVICES: Record<string, { id: (n: number, host: string) => string; type: string; input: (host: string) => string }> = {
  twitter: { id: (n) => `twitter_${1_000_000 + n}`, type: 'keyword', input: () => 'bench' },
  youtube: { id: (n) => `youtube_vid${n}`, type: 'keyword', input: () => 'bench' },
  bluesky: { id: (n) => `bluesky_did:plc:bench_3k${n.toString(36)}`, type: 'user', input: () => 'bench.test' },
  facebook: { id: (n) => `facebook_1_${n}`, type: 'page', input: () => 'bench' },
  mastodon: { id: (n, host) => `mastodon_${host}:${n}`, type: 'tag', input: (host) => `http://${host}/tags/bench` },
  vimeo: { id: (n) => `vimeo_${n + 1}`, type: 'user', input: () => 'bench' },
  vk: { id: (n) => `vk_-1_${n + 1}`, type: 'user', input: () => '1' },
  tumblr: { id: (n) => `tumblr_${n + 1}`, type: 'user', input: () => 'bench' },
  flickr: { id: (n) => `flickr_${n + 1}`, type: 'user', input: () => '1@N01' },
};

/** Stores `items` items of each service and measures the lookups that check them all once (see the module). */
export async function measureReverify(items = Number(process.env.BENCH_REVERIFY_ITEMS ?? 1000)): Promise<ReverifyFigure[]> {
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const prefix = url.pathname.startsWith('/api/v1/') ? 'mastodon' : url.pathname.split('/')[1]!;
    requests.set(prefix, (requests.get(prefix) ?? 0) + 1);
    const body = answer(url.pathname, url.searchParams);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = `http://${host}`;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const config = loadConfig({
    DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ALLOW_PRIVATE_FETCH: 'true',
    TWITTER_API_URL: `${base}/x`, TWITTER_BEARER_TOKEN: 'bench', YOUTUBE_API_URL: `${base}/yt`, YOUTUBE_API_KEY: 'bench',
    BLUESKY_API_URL: `${base}/bsky`, FACEBOOK_API_URL: `${base}/fb`, FACEBOOK_ACCESS_TOKEN: 'bench',
    VIMEO_API_URL: `${base}/vimeo`, VIMEO_ACCESS_TOKEN: 'bench', VK_API_URL: `${base}/vk`, VK_ACCESS_TOKEN: 'bench',
    TUMBLR_API_URL: `${base}/tumblr`, TUMBLR_API_KEY: 'bench', FLICKR_API_URL: `${base}/flickr`, FLICKR_API_KEY: 'bench',
  });
  const db = openDb(config.databaseUrl);
  const counts: ReverifyCounts = { requests: {}, checked: {}, removed: 0, updated: 0 };
  try {
    await migrateToLatest(db);
    const now = Date.now();
    const contract = await createContract(db, 'Bench', 'bench');
    const collection = await createCollection(db, contract.id, { name: 'Wall', dedupe: 'off' }, 'bench');
    let n = 0;
    for (const [service, shape] of Object.entries(SERVICES)) {
      const inputId = (++n).toString(16).padStart(24, '0');
      await db.transaction().execute(async (trx) => {
        await insertInputs(trx, [{
          id: inputId, contractId: contract.id, collectionId: collection.id, service, type: shape.type, input: shape.input(host),
          filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
          nextRunAt: now + DAY_MS, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', now),
        }]);
        const stored: ContentItem[] = Array.from({ length: items }, (_, i) => ({
          id: shape.id(i, host), service, type: 'status', text: `post ${i}`, tags: [], url: `https://example.com/${service}/${i}`,
          date: new Date(now - DAY_MS).toISOString(), author: { name: 'Bench', username: 'bench', userid: '1', url: null }, media: null, kudos: { score: 0 },
        }));
        await storeItems(trx, { collectionId: collection.id, contractId: contract.id, inputId, state: 'published' }, stored, ownsEntries, now);
      });
    }
    const job = startReverify({ db, config, clock: () => Date.now() + DAY_MS + 3_600_000, counts }, 3_600_000);
    // Each beat claims up to 1 000: enough beats for every item, bounded.
    const beats = Math.ceil((items * Object.keys(SERVICES).length) / 1000) + 2;
    for (let beat = 0; beat < beats; beat++) await job.tick();
    await job.stop();
  } finally {
    await db.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
  const prefixOf: Record<string, string> = { twitter: 'x', youtube: 'yt', bluesky: 'bsky', facebook: 'fb', mastodon: 'mastodon', vimeo: 'vimeo', vk: 'vk', tumblr: 'tumblr', flickr: 'flickr' };
  return Object.keys(SERVICES).map((service) => {
    const made = requests.get(prefixOf[service]!) ?? 0;
    const checked = counts.checked[service] ?? 0;
    return { service, items: checked, requests: made, requestsPer1000: checked ? Number(((made / checked) * 1000).toFixed(1)) : Number.NaN, removed: counts.removed, updated: counts.updated };
  });
}

/** The figures as printed lines. */
export function reverifyLines(figures: ReverifyFigure[]): string[] {
  return [
    'reverify    items   requests   per 1 000 items',
    ...figures.map((f) => `${f.service.padEnd(10)} ${String(f.items).padStart(6)} ${String(f.requests).padStart(10)} ${String(f.requestsPer1000).padStart(17)}`),
    `in all: removed ${figures[0]?.removed ?? 0} (0 expected), updated ${figures[0]?.updated ?? 0} (every item but Flickr's expected: the fake's text differs from the stored one; Flickr's lookup updates nothing)`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await measureReverify(process.argv[2] ? Number(process.argv[2]) : undefined);
  for (const line of reverifyLines(figures)) console.log(line);
  console.log(JSON.stringify({ reverify: figures }));
}
