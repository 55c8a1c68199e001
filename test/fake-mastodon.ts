/**
 * A fake Mastodon instance on 127.0.0.1 for the streaming tests and bench:freshness: the
 * streaming API as Server-Sent Events (`/api/v1/streaming/hashtag?tag=…`,
 * `/api/v1/streaming/public/local`; docs.joinmastodon.org/methods/streaming), and the REST
 * timelines the connector reads (`/api/v1/timelines/tag/:tag`, `/api/v1/accounts/lookup`,
 * `/api/v1/accounts/:id/statuses`) answering `min_id` from the statuses published so far.
 * Statuses are built on the recorded Status entity of the shared fixtures. Imports no test runner.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The recorded Status entity (docs.joinmastodon.org/entities/Status). */
const template = JSON.parse(readFileSync(new URL('./fixtures/mastodon/status_entity_docs_example.json', import.meta.url), 'utf8')) as Record<string, unknown>;

export interface FakeStatus {
  id: string;
  tags: string[];
  accountId: string;
  username: string;
  text: string;
  inReplyTo?: { id: string; accountId: string };
  /** The Status entity as the instance sends it (REST and stream). */
  json: Record<string, unknown>;
}

export interface FakeMastodon {
  /** `http://127.0.0.1:<port>` */
  base: string;
  host: string;
  /** Requests seen, path and query, in order. */
  requests: string[];
  /** Streaming connections open now, by path with query. */
  open(path?: string): number;
  /** The most streaming connections ever open at once on one path. */
  maxConcurrent: number;
  /** Streaming connections opened since start. */
  opened: number;
  /** TCP connections accepted since start (any path). */
  connections: number;
  /** A status (not yet published). */
  status(fields: { id: string; tags?: string[]; accountId?: string; username?: string; text?: string; inReplyTo?: { id: string; accountId: string } }): FakeStatus;
  /** Publishes: kept for the REST timelines and, unless `streamed` is false, sent as `event: update` to the open streams it belongs to. */
  publish(status: FakeStatus, options?: { streamed?: boolean }): void;
  /** Sends any event on the streams it belongs to (e.g. `status.update`; `delete` carries the status id as a string, as Mastodon sends it). */
  send(event: string, status: FakeStatus): void;
  /** Writes `text` as it is to every open stream (a hostile or broken instance). */
  raw(text: string): void;
  /** Closes every streaming connection now (a network failure). */
  disconnect(): void;
  /** Streams answer 401 without `Authorization: Bearer <token>` when set. */
  requireToken: string | null;
  close(): Promise<void>;
}

/** Starts the fake instance. */
export async function startFakeMastodon(): Promise<FakeMastodon> {
  const published: FakeStatus[] = [];
  const streams = new Set<{ path: string; res: ServerResponse }>();
  const requests: string[] = [];
  const accounts = new Map<string, string>(); // username → id
  const newer = (a: string, b: string) => (a.length !== b.length ? a.length > b.length : a > b);

  const belongs = (path: string, status: FakeStatus) => {
    const url = new URL(path, 'http://x');
    if (url.pathname === '/api/v1/streaming/hashtag') return status.tags.includes((url.searchParams.get('tag') ?? '').toLowerCase());
    return url.pathname === '/api/v1/streaming/public/local';
  };
  const page = (list: FakeStatus[], query: URLSearchParams) => {
    const minId = query.get('min_id');
    const limit = Number(query.get('limit') ?? 20);
    // min_id: the statuses right after it, oldest first of those, answered newest first.
    const after = list.filter((s) => !minId || newer(s.id, minId)).sort((a, b) => (newer(a.id, b.id) ? 1 : -1));
    return (minId ? after.slice(0, limit) : after.slice(-limit)).reverse().map((s) => s.json);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(req.url ?? '/');
    const json = (body: unknown, status = 200) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname.startsWith('/api/v1/streaming/')) {
      if (fake.requireToken && req.headers.authorization !== `Bearer ${fake.requireToken}`) return json({ error: 'Missing access token' }, 401);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(':)\n');
      const entry = { path: req.url ?? '/', res };
      streams.add(entry);
      fake.opened++;
      fake.maxConcurrent = Math.max(fake.maxConcurrent, fake.open(entry.path));
      res.on('close', () => streams.delete(entry));
      return;
    }
    const tag = /^\/api\/v1\/timelines\/tag\/([^/]+)$/.exec(url.pathname);
    if (tag) return json(page(published.filter((s) => s.tags.includes(decodeURIComponent(tag[1]!).toLowerCase())), url.searchParams));
    if (url.pathname === '/api/v1/accounts/lookup') {
      const id = accounts.get(url.searchParams.get('acct') ?? '');
      return id ? json({ id, username: url.searchParams.get('acct'), acct: url.searchParams.get('acct') }) : json({ error: 'Record not found' }, 404);
    }
    const account = /^\/api\/v1\/accounts\/(\d+)\/statuses$/.exec(url.pathname);
    if (account) return json(page(published.filter((s) => s.accountId === account[1] && !s.inReplyTo), url.searchParams));
    json({ error: 'not found' }, 404);
  });
  server.on('connection', () => fake.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeMastodon = {
    base: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    open: (path) => [...streams].filter((s) => path === undefined || s.path === path).length,
    maxConcurrent: 0,
    opened: 0,
    connections: 0,
    requireToken: null,
    status({ id, tags = [], accountId = '1001', username = 'alice', text = `status ${id}`, inReplyTo }) {
      accounts.set(username, accountId);
      const json = {
        ...template,
        id,
        uri: `http://127.0.0.1:${port}/users/${username}/statuses/${id}`,
        url: `http://127.0.0.1:${port}/@${username}/${id}`,
        created_at: new Date().toISOString(),
        content: `<p>${text}</p>`,
        language: 'en',
        in_reply_to_id: inReplyTo?.id ?? null,
        in_reply_to_account_id: inReplyTo?.accountId ?? null,
        reblog: null,
        media_attachments: [],
        card: null,
        tags: tags.map((name) => ({ name, url: `http://127.0.0.1:${port}/tags/${name}` })),
        account: { ...(template.account as object), id: accountId, username, acct: username, display_name: username, url: `http://127.0.0.1:${port}/@${username}` },
      };
      return { id, tags: tags.map((t) => t.toLowerCase()), accountId, username, text, ...(inReplyTo && { inReplyTo }), json };
    },
    publish(status, { streamed = true } = {}) {
      published.push(status);
      if (streamed) fake.send('update', status);
    },
    send(event, status) {
      const data = event === 'delete' ? status.id : JSON.stringify(status.json);
      for (const { path, res } of streams) if (belongs(path, status)) res.write(`event: ${event}\ndata: ${data}\n\n`);
    },
    raw(text) {
      for (const { res } of streams) res.write(text);
    },
    disconnect() {
      for (const { res } of streams) res.destroy();
      streams.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        fake.disconnect();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
