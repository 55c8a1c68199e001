/**
 * A collection's publication analytics on {api_url} (docs/api.md#analytics):
 *
 *   GET /collection/analytics?collection_id=&from=&to=&interval=hour|day
 *
 * `from` and `to` are Unix times in seconds (default: the last 7 days up to now), widened to
 * whole UTC hours or days (`interval`, default `day`); the answer has one bucket per hour or day
 * with the views, impressions, clicks (the beacon, publication/beacon.ts) and the items
 * collected, published, unpublished and removed (store/analytics.ts), the most collecting sources
 * with their own series, the views per embedding origin, and the top items and authors by clicks.
 *
 * Refusals (400 naming the property): `from` after `to` (`from`); more than `MAX_BUCKETS` buckets
 * (`to`): 92 days of hours, 731 days of days; a bad `interval` (`interval`). Unknown collection →
 * 404, another contract's → 403, both naming `collection_id` (management/ownership.ts).
 */
import { type Static, Type } from 'typebox';
import type { Config } from '../../config.ts';
import { VALIDATION_CODES, validationError } from '../../errors.ts';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { DAY_MS, HOUR_MS, readAnalytics } from '../../store/analytics.ts';
import type { Db } from '../../store/db.ts';
import { Id } from '../schemas.ts';
import { COLLECTION, owned } from '../ownership.ts';

/** The most buckets one answer has, per interval: 92 days of hours, two years of days. */
export const MAX_BUCKETS = { hour: 92 * 24, day: 731 } as const;
/** The range when `from` is not given, ms before `to`. */
const DEFAULT_RANGE_MS = 7 * DAY_MS;

const UnixTime = Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'Unix time in seconds' });

export const AnalyticsQuery = Type.Object({
  collection_id: Id,
  access_token: Type.Optional(Type.String()),
  from: Type.Optional({ ...UnixTime, description: 'the range starts at the hour or day holding this Unix time (seconds); default 7 days before `to`' }),
  to: Type.Optional({ ...UnixTime, description: 'the range ends with the hour or day holding this Unix time (seconds); default now' }),
  interval: Type.Optional(Type.String({ enum: ['hour', 'day'], default: 'day', description: 'bucket size (UTC)' })),
});

const Count = Type.Integer({ minimum: 0 });
export const AnalyticsResult = Type.Object(
  {
    collectionId: Id,
    interval: Type.String({ enum: ['hour', 'day'] }),
    from: Type.String({ format: 'date-time', description: 'the first bucket’s start' }),
    to: Type.String({ format: 'date-time', description: 'the end of the last bucket (exclusive)' }),
    series: Type.Array(
      Type.Object({
        start: Type.String({ format: 'date-time' }),
        wallViews: Count,
        displayViews: Count,
        impressions: Count,
        clicks: Count,
        collected: Count,
        published: Count,
        unpublished: Count,
        removed: Count,
      }),
    ),
    sources: Type.Array(
      Type.Object({ inputId: Id, service: Type.Union([Type.String(), Type.Null()]), input: Type.Union([Type.String(), Type.Null()]), total: Count, counts: Type.Array(Count, { description: 'per bucket of `series`' }) }),
      { description: 'the inputs that collected most in the range (at most 10)' },
    ),
    origins: Type.Array(Type.Object({ page: Type.String({ enum: ['wall', 'display'] }), origin: Type.Union([Type.String(), Type.Null()], { description: 'the embedding page’s origin; null: not embedded' }), views: Count })),
    topItems: Type.Array(Type.Object({ id: Type.String(), title: Type.Union([Type.String(), Type.Null()]), author: Type.Union([Type.String(), Type.Null()]), clicks: Count, impressions: Count })),
    topAuthors: Type.Array(Type.Object({ author: Type.String(), clicks: Count })),
  },
  { description: 'A collection’s publication analytics (docs/api.md#analytics)' },
);

const schema = {
  tags: ['analytics'],
  summary: "A collection's publication analytics per hour or day: views, impressions, clicks, items collected and moderated, tops",
  security: TOKEN_SECURITY,
  querystring: AnalyticsQuery,
  response: { 200: AnalyticsResult, ...errorResponses(400, 401, 403, 404) },
};

/** Registers the module's route on `app` (see the module's description). */
export function analyticsRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.get('/collection/analytics', { schema }, async (request): Promise<Static<typeof AnalyticsResult>> => {
    const principal = await authenticate(db, request);
    const { query } = request;
    const interval = query.interval === 'hour' ? 'hour' : 'day';
    const size = interval === 'hour' ? HOUR_MS : DAY_MS;
    const toMs = query.to !== undefined ? query.to * 1000 : Date.now();
    const fromMs = query.from !== undefined ? query.from * 1000 : Math.max(0, toMs - DEFAULT_RANGE_MS);
    if (fromMs > toMs) throw validationError([{ propertyName: 'from', message: 'from must not be after to', propertyValue: query.from, code: VALIDATION_CODES.range }]);
    const first = Math.floor(fromMs / size) * size;
    const last = Math.floor(toMs / size) * size;
    const buckets = (last - first) / size + 1;
    if (buckets > MAX_BUCKETS[interval]) {
      throw validationError([{ propertyName: 'to', message: `the range has ${buckets} ${interval}s; at most ${MAX_BUCKETS[interval]} (narrow from..to or use a longer interval)`, propertyValue: query.to, code: VALIDATION_CODES.range }]);
    }
    const collection = await owned(db, COLLECTION, query.collection_id, principal, 'collection_id');
    const result = await readAnalytics(db, collection.contractId, collection.id, first, last, interval);
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      collectionId: collection.id,
      interval,
      from: iso(first),
      to: iso(last + size),
      series: result.buckets.map(({ start, ...counts }) => ({ start: iso(start), ...counts })),
      sources: result.sources,
      origins: result.origins,
      topItems: result.topItems,
      topAuthors: result.topAuthors,
    };
  });
}
