/**
 * The publication's analytics beacon (docs/api.md#analytics-beacon), public like the wall:
 *
 *   POST /v1/publication/{contract}/beacon   a batch of events of one wall or display page → 204
 *
 * The wall script (assets/wall.js) and the display page (assets/display.js) send, with
 * `navigator.sendBeacon` (W3C Beacon: a `text/plain` body, no preflight, no credentials read),
 * `{"q", "page": "wall"|"display", "view"?: true, "origin"?, "impressions"?: [ids], "clicks"?: [ids]}`:
 * a view when the page opens, with the origin of the page that embeds it (never a URL: only
 * `scheme://host[:port]` is kept, anything else counts as none), then the items seen and opened
 * since the last batch. Nothing about the visitor is kept: no address (it only keys an in-memory
 * rate limit), no cookie (none is read or set), no URL, no user agent.
 *
 * Counting never writes on the request: the handler adds to counters in memory, which are
 * flushed every `FLUSH_MS` (and when the app closes) into hourly rows of `analytics_counts`
 * in one transaction (`store/analytics.ts` `addCounts`), so a flood of beacons costs the
 * database one upsert batch every few seconds and never slows the public reads. At flush, item
 * ids are checked against the collection's items (by its primary key; each answer kept for 10
 * minutes, since every viewer of a wall sees the same items): ids of another collection or
 * contract, or unknown ones, are dropped; a click also counts for the item's author.
 * The counters hold at most `MAX_PENDING` keys between flushes; beyond that, new keys are dropped
 * until the next flush (logged).
 *
 * Refusals: an unknown or inactive contract → 401, collection → 404 (as the wall); a body that
 * is not the shape above → 400 naming the property; a body over `BEACON_BODY_LIMIT` bytes → 413;
 * more than `config.rateLimitBeacon` beacons (RATE_LIMIT_BEACON, default 600: a wall sends about
 * one every 5 s per viewer, and a venue's viewers may share one address) per rate-limit window
 * from one client address (IPv6 per /64, `lib/addresses.ts`) → 429 with Retry-After, counted in
 * this process's memory only.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { Type } from 'typebox';
import type { Config } from '../config.ts';
import { rateLimitError, VALIDATION_CODES, validationError } from '../errors.ts';
import { errorResponses } from '../http/openapi.ts';
import { publicTarget } from '../http/public.ts';
import type { App } from '../http/typed.ts';
import { addressGroup } from '../lib/addresses.ts';
import { addCounts, type CountRow, existingItems, hourOf, itemAuthors } from '../store/analytics.ts';
import type { Db } from '../store/db.ts';

/** The largest beacon body, bytes. */
export const BEACON_BODY_LIMIT = 16_384;
/** How often the counters are written, ms. */
export const FLUSH_MS = 5_000;
/** Counter keys held between flushes at most. */
export const MAX_PENDING = 50_000;

const ItemIds = (maxItems: number) => Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems, description: 'item ids (`id` of the content item)' });

export const BeaconBody = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 200, description: 'the collection (its slug), as in the page address' }),
    page: Type.String({ enum: ['wall', 'display'], description: 'which page sends it' }),
    view: Type.Optional(Type.Boolean({ description: 'true once when the page opens: a view' })),
    origin: Type.Optional(Type.String({ maxLength: 300, description: "the embedding page's origin (scheme://host[:port]); anything else counts as none" })),
    impressions: Type.Optional(ItemIds(200)),
    clicks: Type.Optional(ItemIds(50)),
  },
  { description: 'Other properties are dropped unread.' },
);

const schema = {
  tags: ['publication'],
  summary: "A batch of a wall's or display page's analytics events: a view, items seen, items opened (public; sent with navigator.sendBeacon)",
  consumes: ['text/plain', 'application/json'],
  params: Type.Object({ contract: Type.String({ minLength: 1, maxLength: 200 }) }),
  body: BeaconBody,
  response: { 204: Type.Null({ description: 'Counted (ids not on the wall are ignored)' }), ...errorResponses(400, 401, 404, 413, 429) },
};

/** The origin of `value` when it is an http(s) origin, else '' (none). */
export function originKey(value: string | undefined): string {
  if (!value) return '';
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : '';
  } catch {
    return '';
  }
}

interface Pending {
  contractId: string;
  collectionId: string;
  hour: number;
  kind: 'wall-view' | 'display-view' | 'impression' | 'click';
  key: string;
  count: number;
}

/** The in-memory counters of one app and their flushing (the module's description). */
class Tally {
  private pending = new Map<string, Pending>();
  private dropped = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** Whether `<collection id>\n<item id>` is an item of that collection: a wall shows the same items to every viewer, so each is looked up once in a while. */
  private readonly known = new LRUCache<string, boolean>({ max: 50_000, ttl: 10 * 60_000 });
  /** The author's name ('' none) of `<collection id>\n<item id>`, for clicks. */
  private readonly authors = new LRUCache<string, string>({ max: 10_000, ttl: 10 * 60_000 });

  private readonly db: Db;
  private readonly log: FastifyInstance['log'];

  constructor(db: Db, log: FastifyInstance['log']) {
    this.db = db;
    this.log = log;
  }

  add(entry: Omit<Pending, 'count'>): void {
    const id = `${entry.collectionId}\n${entry.hour}\n${entry.kind}\n${entry.key}`;
    const row = this.pending.get(id);
    if (row) row.count += 1;
    else if (this.pending.size < MAX_PENDING) this.pending.set(id, { ...entry, count: 1 });
    else this.dropped += 1;
  }

  /** Writes what is pending (one transaction); flushes run one after another. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write()).catch((error: unknown) => this.log.error({ err: error }, 'analytics flush failed; its counts are lost'));
    return this.flushing;
  }

  private async write(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    if (this.dropped) {
      this.log.warn({ dropped: this.dropped }, 'analytics counters were full: beacon events dropped');
      this.dropped = 0;
    }
    if (!batch.length) return;
    const rows: CountRow[] = [];
    const byCollection = new Map<string, Pending[]>();
    for (const row of batch) {
      if (row.kind === 'wall-view' || row.kind === 'display-view') rows.push(row);
      else {
        const list = byCollection.get(row.collectionId);
        if (list) list.push(row);
        else byCollection.set(row.collectionId, [row]);
      }
    }
    const authors = new Map<string, CountRow>();
    for (const [collectionId, items] of byCollection) {
      const key = (id: string) => `${collectionId}\n${id}`;
      const unchecked = [...new Set(items.map((row) => row.key))].filter((id) => !this.known.has(key(id)));
      const contractId = items[0]!.contractId;
      const found = await existingItems(this.db, contractId, collectionId, unchecked);
      for (const id of unchecked) this.known.set(key(id), found.has(id));
      const clicked = [...new Set(items.filter((row) => row.kind === 'click' && this.known.get(key(row.key))).map((row) => row.key))];
      const named = await itemAuthors(this.db, contractId, collectionId, clicked.filter((id) => !this.authors.has(key(id))));
      for (const [id, author] of named) this.authors.set(key(id), author ?? '');
      for (const row of items) {
        if (!this.known.get(key(row.key))) continue;
        rows.push(row);
        const author = row.kind === 'click' ? this.authors.get(key(row.key)) : undefined;
        if (!author) continue;
        const id = `${collectionId}\n${row.hour}\n${author}`;
        const sum = authors.get(id);
        if (sum) sum.count += row.count;
        else authors.set(id, { contractId: row.contractId, collectionId, hour: row.hour, kind: 'author-click', key: author, count: row.count });
      }
    }
    await addCounts(this.db, [...rows, ...authors.values()]);
  }
}

const tallies = new WeakMap<object, Tally>();

/** Writes the beacon counters of `app` now (tests, and the app's close); resolves when written. */
export function flushBeacons(app: object): Promise<void> {
  return tallies.get(app)?.flush() ?? Promise.resolve();
}

/** Registers the beacon route on `app`, its flush timer and its flush on close (the module's description). */
export function beaconRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const limit = { requests: config.rateLimitBeacon, windowMs: config.rateLimitWindow * 1000 };
  const tally = new Tally(db, app.log);
  tallies.set(app, tally);
  const timer = setInterval(() => void tally.flush(), FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await tally.flush();
  });

  // Fixed windows per client address, in memory only; the oldest addresses are forgotten first.
  const windows = new LRUCache<string, { start: number; count: number }>({ max: 10_000 });
  // The contract and collection of a (contract, q): two reads saved per beacon for a minute.
  const targets = new LRUCache<string, { contractId: string; collectionId: string }>({ max: 1_000, ttl: 60_000 });

  void app.register(async (scope: FastifyInstance) => {
    // sendBeacon sends a string as text/plain (a CORS-safelisted type: no preflight); read it as JSON.
    scope.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: BEACON_BODY_LIMIT }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(validationError([{ propertyName: 'body', message: 'body must be a JSON object', code: VALIDATION_CODES.type }]), undefined);
      }
    });
    // The limit is checked before the body is read.
    const onRequest = async (request: FastifyRequest) => {
      if (limit.requests === 0) return;
      const now = Date.now();
      const address = addressGroup(request.ip);
      const window = windows.get(address);
      if (!window || now - window.start >= limit.windowMs) windows.set(address, { start: now, count: 1 });
      else if (++window.count > limit.requests) throw rateLimitError(Math.max(1, Math.ceil((window.start + limit.windowMs - now) / 1000)));
    };
    (scope as unknown as App).post('/v1/publication/:contract/beacon', { schema, bodyLimit: BEACON_BODY_LIMIT, onRequest }, async (request, reply) => {
      const now = Date.now();
      const { body } = request;
      const cacheKey = `${request.params.contract}\n${body.q}`;
      let target = targets.get(cacheKey);
      if (!target) {
        const { contract, collection } = await publicTarget(db, request.params.contract, body.q);
        target = { contractId: contract.id, collectionId: collection.id };
        targets.set(cacheKey, target);
      }
      const hour = hourOf(now);
      const base = { ...target, hour };
      if (body.view === true) tally.add({ ...base, kind: body.page === 'wall' ? 'wall-view' : 'display-view', key: originKey(body.origin) });
      for (const id of new Set(body.impressions ?? [])) tally.add({ ...base, kind: 'impression', key: id });
      for (const id of new Set(body.clicks ?? [])) tally.add({ ...base, kind: 'click', key: id });
      return reply.code(204).header('access-control-allow-origin', '*').send(null);
    });
  });
}
