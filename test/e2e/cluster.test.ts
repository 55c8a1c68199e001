/**
 * Several processes on one PostgreSQL (issue 8), started the way `npm start` starts them: three
 * collector processes and two API processes (plus one queue process for item reads), 200 rss
 * inputs on a local feed server. Shows that every feed is fetched about once per interval and
 * never by two processes at once, every entry is stored once, a collector killed with SIGKILL
 * mid-poll loses its inputs to the others, and both API processes read the same state.
 *
 * PostgreSQL run only: the SQLite run has no pg-boss and no shared database, so it skips this
 * file (the suite name says why).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { freshDatabaseEnv, tempDir, testPostgresUrl } from '../helper.ts';
import { cliTenant, type Started, startRole, stopProcess, until } from '../processes.ts';

const FEEDS = 200;
/** Entries per feed grow by one per fetch up to this many. */
const MAX_ENTRIES = 5;
const POLL_INTERVAL_S = 5;
const LEASE_S = 6;
/** The feed server holds each response this long, so that overlapping polls would show. */
const HOLD_MS = 250;

interface FeedLog {
  fetches: number;
  inFlight: number;
  maxInFlight: number;
  /** Start time (ms) of every request. */
  starts: number[];
  /** End time (ms) of every response sent in full. */
  completed: number[];
  /** Requests whose client went away before the response was sent. */
  abandoned: number;
}

const feeds = new Map<number, FeedLog>();
/** Client ports of the requests the feed server is answering now. */
/** Ports of the requests whose answers are held (their collectors are mid-poll until released). */
const heldPorts = new Set<number>();
/**
 * While set, the feed server sends no response: the answers come due are kept here and sent when
 * it is cleared. Held around the SIGKILL, so that a poll seen under way is still under way when
 * its process dies, however long finding it took.
 */
let held: (() => void)[] | undefined;

/**
 * The local TCP ports of every process in process group `pgid` (Linux /proc), to tell which
 * collector process a feed request comes from.
 */
function tcpPortsOf(pgid: number): Set<number> {
  const inodes = new Set<string>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2] !== String(pgid)) continue;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket) inodes.add(socket[1]!);
      }
    } catch {
      // The process or descriptor went away meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length > 9 && inodes.has(fields[9]!)) ports.add(Number.parseInt(fields[1]!.split(':')[1]!, 16));
  }
  return ports;
}
let feedServer: Server;
let feedBase: string;
let env: NodeJS.ProcessEnv;
let db: Db | undefined;
const processes = new Map<string, Started>();

function guid(feed: number, entry: number): string {
  return `feed-${feed}-entry-${entry}`;
}

function feedXml(feed: number, entries: number): string {
  const items = Array.from({ length: entries }, (_, i) => {
    const date = new Date(Date.UTC(2026, 0, 1, 0, feed, i)).toUTCString();
    return `<item><title>Entry ${i + 1} of feed ${feed}</title><link>http://127.0.0.1/feed/${feed}/${i + 1}</link><guid isPermaLink="false">${guid(feed, i + 1)}</guid><pubDate>${date}</pubDate></item>`;
  });
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed ${feed}</title><link>http://127.0.0.1/</link><description>d</description>${items.join('')}</channel></rss>`;
}

/** `npm start -- --role <role>`; resolves once it listens. */
async function start(name: string, role: string): Promise<void> {
  processes.set(name, await startRole(name, role, env));
}

function stop(name: string, signal: NodeJS.Signals): Promise<void> {
  return stopProcess(processes.get(name)!.child, signal);
}

beforeAll(async () => {
  if (!testPostgresUrl) return;
  feedServer = createServer((req, res) => {
    const feed = Number(/^\/feed\/(\d+)$/.exec(req.url ?? '')?.[1] ?? Number.NaN);
    const log = feeds.get(feed);
    if (!log) return void res.writeHead(404).end();
    log.fetches += 1;
    log.starts.push(Date.now());
    log.inFlight += 1;
    log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
    const port = req.socket.remotePort!;
    const body = feedXml(feed, Math.min(log.fetches, MAX_ENTRIES));
    let done = false;
    res.on('close', () => {
      heldPorts.delete(port);
      log.inFlight -= 1;
      if (!done) log.abandoned += 1;
    });
    const respond = () => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(body, () => {
        done = true;
        log.completed.push(Date.now());
      });
    };
    setTimeout(() => {
      if (!held) return respond();
      held.push(respond);
      heldPorts.add(port);
    }, HOLD_MS);
  });
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
  feedBase = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed/`;
  for (let i = 0; i < FEEDS; i++) feeds.set(i, { fetches: 0, inFlight: 0, maxInFlight: 0, starts: [], completed: [], abandoned: 0 });

  env = {
    ...process.env,
    DATA_DIR: tempDir(),
    ...(await freshDatabaseEnv()),
    ALLOW_PRIVATE_FETCH: 'true',
    POLL_INTERVAL: String(POLL_INTERVAL_S),
    COLLECT_LEASE: String(LEASE_S),
    COLLECT_CONCURRENCY: '8',
    // The 200 feeds stand for 200 sites but share one local server: politeness per host would
    // allow 2 polls of it at once across the installation, too few for 200 feeds every 5 s.
    COLLECT_HOST_CONCURRENCY: '24',
    SLUICE_BOOTSTRAP: 'false',
    LOG_LEVEL: 'warn',
  };
  // All at once on an empty database: one migrates, the others wait for it (startup lock).
  await Promise.all([
    start('collector-1', 'collector'),
    start('collector-2', 'collector'),
    start('collector-3', 'collector'),
    start('api-1', 'api'),
    start('api-2', 'api'),
    start('queue', 'queue'),
  ]);
  db = openDb(String(env.DATABASE_URL));
}, 120_000);

afterAll(async () => {
  await Promise.all([...processes.keys()].map((name) => stop(name, 'SIGTERM')));
  await db?.destroy();
  await new Promise<void>((resolve) => (feedServer ? feedServer.close(() => resolve()) : resolve()));
});

describe('several processes on PostgreSQL', () => {
  it('shares 200 feeds among three collectors, survives a SIGKILL, stores every entry once, and both API processes agree', async (ctx) => {
    const reason = 'PostgreSQL run only (TEST_DATABASE_URL): the SQLite run has no shared database and no pg-boss';
    if (!testPostgresUrl) console.warn(`skipped: ${reason}`);
    ctx.skip(!testPostgresUrl, reason);
    const { contract, collection, client } = await cliTenant(env, { contract: 'Cluster News', collection: 'Feeds', client: 'cluster robot', dedupe: 'off' });
    const { access_token: token } = await issueTokens(db!, String(client.consumer_id), { ttlSeconds: 3600, withRefresh: false });

    const api1 = processes.get('api-1')!.url;
    const created = await fetch(`${api1}/collection/inputs?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([...feeds.keys()].map((i) => ({ service: 'rss', type: 'feed', input: `${feedBase}${i}`, contractId: contract._id, collectionId: collection._id }))),
    });
    expect(created.status).toBe(201);

    // Every feed polled twice, then one collector killed while polls are under way.
    await until('two polls of every feed', () => ([...feeds.values()].every((f) => f.completed.length >= 2) ? true : undefined));
    const victim = processes.get('collector-1')!.child.pid!;
    held = [];
    // A poll whose answer is held: one answered just before the hold could still count as in flight
    // until its response closed, and killing the process then cut nothing off.
    const victimHeld = await until('collector-1 to be polling', () => {
      const ports = tcpPortsOf(victim);
      const mine = [...heldPorts].filter((port) => ports.has(port));
      return mine.length > 0 ? mine : undefined;
    });
    const abandonedBefore = [...feeds.values()].reduce((n, f) => n + f.abandoned, 0);
    await stop('collector-1', 'SIGKILL');
    const killedAt = Date.now();
    // Released before the server saw those connections close, a held answer would still be written
    // into the dead socket and count as completed: release once they have closed.
    await until("collector-1's held connections to close", () => (victimHeld.every((port) => !heldPorts.has(port)) ? true : undefined));
    const release = held;
    held = undefined;
    for (const respond of release) respond();
    // The killed process's connections close with it: the polls it had under way were cut off.
    await until('the cut-off polls to show', () => ([...feeds.values()].reduce((n, f) => n + f.abandoned, 0) > abandonedBefore ? true : undefined));
    const cutOff = [...feeds.entries()].filter(([, f]) => f.abandoned > 0).map(([i]) => i);
    expect(cutOff.length).toBeGreaterThan(0);

    // The two survivors carry on with every feed, the cut-off ones included.
    await until('two polls of every feed after the kill, and every entry published', () =>
      [...feeds.values()].every((f) => f.completed.filter((t) => t > killedAt).length >= 2 && f.fetches > MAX_ENTRIES) ? true : undefined,
    );

    type Input = { _id: string; input: string; status: { lastError: string | null; collected: number } };
    const inputsOf = async (base: string) =>
      ((await (await fetch(`${base}/collection/inputs?contract_id=${contract._id}&access_token=${token}`)).json()) as Input[])
        .map((i) => ({ id: i._id, feed: i.input, collected: i.status.collected, lastError: i.status.lastError }))
        .sort((a, b) => a.id.localeCompare(b.id));
    // Counters: every feed's `collected` is its number of distinct entries, each counted once.
    const first = await until('every entry counted', async () => {
      const inputs = await inputsOf(api1);
      return inputs.length === FEEDS && inputs.every((i) => i.collected === MAX_ENTRIES) ? inputs : undefined;
    });
    expect(first.every((i) => i.lastError === null)).toBe(true);
    expect(await inputsOf(processes.get('api-2')!.url)).toEqual(first);

    // Items: every entry stored once, read through the queue process.
    const ids: string[] = [];
    const queue = processes.get('queue')!.url;
    for (let offset = 0; ; offset += 100) {
      const page = (await (await fetch(`${queue}/v1/content/${contract.slug}?q=${collection.slug}&since=0&count=100&offset=${offset}`)).json()) as { id: string }[];
      ids.push(...page.map((item) => item.id));
      if (page.length < 100) break;
    }
    const expected = [...feeds.keys()].flatMap((f) => Array.from({ length: MAX_ENTRIES }, (_, e) => `rss_${createHash('sha256').update(guid(f, e + 1)).digest('hex').slice(0, 32)}`));
    expect(ids.length).toBe(FEEDS * MAX_ENTRIES);
    expect(ids.sort()).toEqual(expected.sort());

    // Never two polls of one feed at once, and never sooner than the poll interval after the last.
    for (const [feed, log] of feeds) {
      expect({ feed, maxInFlight: log.maxInFlight }).toEqual({ feed, maxInFlight: 1 });
      const gaps = log.starts.slice(1).map((t, i) => t - log.starts[i]!);
      expect({ feed, shortestGap: Math.min(...gaps) >= POLL_INTERVAL_S * 1000 - 100 }).toEqual({ feed, shortestGap: true });
    }

    // SIGTERM: every process finishes its work under way and exits.
    await Promise.all([...processes.keys()].map((name) => stop(name, 'SIGTERM')));
  }, 240_000);
});
