/**
 * End to end, as a newcomer would run it: the service started the way `npm start` starts it, set
 * up with the CLI and HTTP alone, collecting the real feeds of test/fixtures/rss from a local
 * HTTP server, and every entry read back through the queue, content, count and collections
 * endpoints. A second round of polls stores nothing twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseEnv, tempDir } from '../helper.ts';
import { cliTenant, freePort, until } from '../processes.ts';

const root = new URL('../../', import.meta.url).pathname;
const fixtures = new URL('../fixtures/rss/', import.meta.url).pathname;

/** Entries per fixture, counted in the files (`<item>` / `<entry>` elements). */
const ENTRIES: Record<string, number> = {
  'androidauthority-leading-blank-lines.rss': 1,
  'blogger-feedburner-atom.atom': 25,
  'cbn-podcast-bogus-encoding-decl.xml': 5,
  'fda-pubdate-wrapped-in-html-time.rss': 1,
  'gdata-atom-entry-document.atom': 1,
  'github-commits-atom.atom': 20,
  'guardian-rss2-media-content.rss': 55,
  'heise-atom.atom': 15,
  'issue34-entities-media.rss': 5,
  'issue34-xhtml-base.atom': 3,
  'jn-iso-8859-1-odd-dates.rss': 40,
  'medium-content-encoded.rss': 7,
  'megaphone-podcast-itunes.rss': 1,
  'motor-ru-media-image-video.rss': 1,
  'narro-podcast-enclosure.rss': 1,
  'norfolk-schools-zoneless-dates.rss': 5,
  'oreilly-rss092-odd-date.rss': 2,
  // Two of three entries: one is listed beside its own later tombstone (RFC 6721), the feed's deletion.
  'rfc6721-tombstones.atom': 2,
  'sciencemag-rss1-rdf.rdf': 69,
  'tpm-style-relative-html.atom': 2,
  'uol-no-xml-decl-latin1.rss': 15,
  'userland-rss092-description-only.rss': 4,
  'wally-cms-media-content-thumbnail.rss': 1,
};
const TOTAL = Object.values(ENTRIES).reduce((a, b) => a + b, 0);

let feedServer: Server;
let feedBase: string;
const feedRequests: { url: string; headers: IncomingHttpHeaders }[] = [];
let service: ChildProcess;
let base: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  // The feeds' server: sends an ETag but ignores validators, so every poll re-reads every entry.
  feedServer = createServer((req, res) => {
    feedRequests.push({ url: req.url ?? '', headers: req.headers });
    const name = decodeURIComponent((req.url ?? '').slice(1));
    if (!(name in ENTRIES)) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'application/xml', etag: `"${name}"` }).end(readFileSync(fixtures + name));
  });
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
  feedBase = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/`;

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: tempDir(),
    ...(await freshDatabaseEnv()),
    QUEUE_URL: base,
    ALLOW_PRIVATE_FETCH: 'true',
    POLL_INTERVAL: '2',
    SLUICE_BOOTSTRAP: 'false',
    LOG_LEVEL: 'warn',
  };
  service = spawn('npm', ['start'], { cwd: root, env, detached: true });
  let stdout = '';
  service.stdout!.on('data', (chunk) => (stdout += chunk));
  await until('the service to listen', async () => (stdout.includes('"status":"listening"') ? true : undefined), 30_000);
}, 60_000);

afterAll(async () => {
  if (service?.pid) process.kill(-service.pid, 'SIGTERM');
  await new Promise<void>((resolve) => (service?.exitCode !== null ? resolve() : service.once('exit', () => resolve())));
  await new Promise<void>((resolve) => feedServer?.close(() => resolve()));
});

describe('the service end to end', () => {
  it('collects every fixture feed and serves every entry back, once', async () => {
    expect(readdirSync(fixtures).filter((f) => !f.startsWith('.')).sort()).toEqual(Object.keys(ENTRIES).sort());

    // Every entry of every fixture feed comes back: the collection merges no duplicates.
    const { contract, collection, client } = await cliTenant(env, { contract: 'E2E News', collection: 'All Feeds', client: 'e2e robot', dedupe: 'off' });
    expect(collection.slug).toBe('all-feeds');

    const basic = Buffer.from(`${encodeURIComponent(String(client.client_id))}:${encodeURIComponent(String(client.client_secret))}`).toString('base64');
    const tokenResponse = await fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(tokenResponse.status).toBe(200);
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };

    const created = await fetch(`${base}/collection/inputs?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        Object.keys(ENTRIES).map((name) => ({ service: 'rss', type: 'feed', input: feedBase + name, contractId: contract._id, collectionId: collection._id })),
      ),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as unknown[]).length).toBe(Object.keys(ENTRIES).length);

    type Input = { input: string; status: { lastRun: string | null; lastSuccess: string | null; lastError: string | null; collected: number } };
    const listInputs = async () => (await (await fetch(`${base}/collection/inputs?contract_id=${contract._id}&access_token=${token}`)).json()) as Input[];
    const first = await until('every feed to be collected', async () => {
      const inputs = await listInputs();
      return inputs.every((i) => i.status.lastSuccess) ? inputs : undefined;
    }, 30_000);
    for (const input of first) {
      expect(input.status.lastError).toBeNull();
      expect({ feed: input.input, collected: input.status.collected }).toEqual({ feed: input.input, collected: ENTRIES[input.input.slice(feedBase.length)] });
    }

    const q = `q=${collection.slug}`;
    const queue = (await (await fetch(`${base}/v1/queue/${contract.slug}?${q}&since=0&access_token=${token}`)).json()) as { id: string; state: string; date: string }[];
    expect(queue.length).toBe(TOTAL);
    expect(new Set(queue.map((item) => item.id)).size).toBe(TOTAL);
    expect(queue.every((item) => item.state === 'published')).toBe(true);
    const dates = queue.map((item) => item.date);
    expect(dates).toEqual([...dates].sort().reverse());

    const content: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = (await (await fetch(`${base}/v1/content/${contract.slug}?${q}&since=0&count=100&offset=${offset}`)).json()) as { id: string }[];
      content.push(...page.map((item) => item.id));
      if (page.length < 100) break;
    }
    expect(content.sort()).toEqual(queue.map((item) => item.id).sort());

    const count = await (await fetch(`${base}/v1/count/${contract.slug}?${q}&since=0`)).json();
    expect(count).toEqual({ count: String(TOTAL) });
    const collections = await (await fetch(`${base}/v1/collections/${contract.slug}`)).json();
    expect(collections).toEqual([{ name: 'All Feeds', type: 'realtime', url: `${base}/v1/content/${contract.slug}?q=all-feeds` }]);

    // The next round of polls: every feed fetched again (with its validator), nothing stored twice.
    const firstRuns = new Map(first.map((i) => [i.input, i.status.lastRun]));
    const second = await until('a second poll of every feed', async () => {
      const inputs = await listInputs();
      return inputs.every((i) => i.status.lastRun !== firstRuns.get(i.input) && i.status.lastSuccess) ? inputs : undefined;
    }, 30_000);
    for (const input of second) expect(input.status.collected).toBe(ENTRIES[input.input.slice(feedBase.length)]);
    expect(feedRequests.some((request) => request.headers['if-none-match'])).toBe(true);
    const again = await (await fetch(`${base}/v1/count/${contract.slug}?${q}&since=0`)).json();
    expect(again).toEqual({ count: String(TOTAL) });
  }, 90_000);
});
