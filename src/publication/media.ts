/**
 * The media proxy (docs/api.md#media-proxy): `GET /v1/media/<signature>/<encoded url>[?w=<width>]`
 * serves an image of the wall from Sluice's origin, as Miniflux's media proxy and camo do, so that
 * `http:` images show on https walls and visitors' addresses are not given to third parties.
 *
 * - the signature (lib/media-url.ts) must match the URL and width: else 403 ForbiddenError;
 * - the source is fetched through the collector's guarded fetch (collect/fetch.ts, injected by
 *   app.ts): no loopback, private, link-local or metadata address in any form, on every redirect
 *   hop; at most {@link MEDIA_MAX_BYTES}. A non-public address or a larger body → 422; an error
 *   status, a timeout or an unreachable server → 502;
 * - the bytes must be a JPEG, PNG, GIF, WebP or AVIF by their signature (magic bytes) and then
 *   decode with sharp (libvips) within {@link MEDIA_MAX_PIXELS} pixels (`limitInputPixels`): a
 *   decompression bomb, an SVG or anything else → 422 UnprocessableError, whatever its
 *   Content-Type said;
 * - the image is turned upright (EXIF orientation), resized to `w` (one of `MEDIA_WIDTHS`, never
 *   enlarged) and re-encoded as WebP with its metadata dropped (animated GIFs stay animated);
 * - the result is cached on disk in `DATA_DIR/media-cache`, at most `MEDIA_CACHE_MB` MiB, least
 *   recently used first out (lru-cache keeps the bookkeeping; its eviction deletes the file), and
 *   served with `Cache-Control: public, max-age=31536000, immutable` and an `ETag`;
 * - at most {@link MEDIA_CONCURRENCY} sources are fetched and converted at once, with at most
 *   {@link MEDIA_QUEUE} more waiting (beyond: 429 RateLimitError, `Retry-After: 1`); concurrent
 *   requests of one image share one fetch. The route is also limited per client address like
 *   every public read (http/rate-limit.ts).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import sharp, { type Metadata } from 'sharp';
import { Type } from 'typebox';
import type { Config } from '../config.ts';
import { forbiddenError, rateLimitError, unprocessableError, upstreamError } from '../errors.ts';
import { errorResponses } from '../http/openapi.ts';
import type { App } from '../http/typed.ts';
import { MEDIA_MAX_BYTES, MEDIA_MAX_PIXELS, sniffImage } from '../lib/image-limits.ts';
import { decodeMediaUrl, MAX_MEDIA_SEGMENT, MEDIA_WIDTHS, verifyMediaSignature } from '../lib/media-url.ts';
import type { SourceFetch } from '../services/connector.ts';

export { MEDIA_MAX_BYTES, MEDIA_MAX_PIXELS };
/** Sources fetched and converted at once, per process. */
export const MEDIA_CONCURRENCY = 4;
/** Requests waiting for one of those slots; beyond, 429. */
export const MEDIA_QUEUE = 64;
/** Longest conversion, seconds (sharp's `timeout`). */
const CONVERT_SECONDS = 10;
/** Files read back into the cache's bookkeeping at start, at most. */
const MAX_FILES_AT_START = 100_000;

/**
 * Decodes `bytes` as an image and re-encodes it as WebP, `width` wide at most. Throws
 * UnprocessableError (422) for a non-image, an unsupported format or more than MEDIA_MAX_PIXELS.
 */
export async function convertImage(bytes: Uint8Array, width: number | undefined): Promise<Buffer> {
  if (!sniffImage(bytes)) throw unprocessableError('The source is not a JPEG, PNG, GIF, WebP or AVIF image.', 'url');
  const image = sharp(bytes, { limitInputPixels: MEDIA_MAX_PIXELS, animated: true, failOn: 'error' });
  const tooLarge = () => unprocessableError(`The image declares more than the ${MEDIA_MAX_PIXELS} pixels Sluice decodes.`, 'url');
  let meta: Metadata;
  try {
    // The header only: sharp refuses here an image whose width × height passes limitInputPixels.
    meta = await image.metadata();
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message)) throw tooLarge();
    throw unprocessableError('The source could not be decoded as an image.', 'url');
  }
  // All frames counted (an animation decodes every one), before any pixel is decoded.
  if ((meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0) * (meta.pages ?? 1) > MEDIA_MAX_PIXELS) throw tooLarge();
  try {
    return await image.rotate().resize({ width, withoutEnlargement: true }).webp({ quality: 80 }).timeout({ seconds: CONVERT_SECONDS }).toBuffer();
  } catch {
    throw unprocessableError('The source could not be decoded as an image.', 'url');
  }
}

interface Entry {
  file: string;
  size: number;
}

/**
 * The disk cache: `dir` holds one `<key>.webp` per image; the bookkeeping (lru-cache, by size in
 * bytes) deletes the least recently used file once the total passes `maxBytes`. Files found at
 * start are counted in, oldest modification first.
 */
export function createMediaCache(dir: string, maxBytes: number) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lru = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    sizeCalculation: (entry) => Math.max(1, entry.size),
    dispose: (entry, _key, reason) => {
      if (reason === 'evict' || reason === 'delete') {
        try {
          unlinkSync(entry.file);
        } catch {
          // Already gone.
        }
      }
    },
  });
  const found = readdirSync(dir)
    .filter((name) => /^[0-9a-f]{64}\.webp$/.test(name))
    .slice(0, MAX_FILES_AT_START)
    .map((name) => {
      const file = join(dir, name);
      const stat = statSync(file, { throwIfNoEntry: false });
      return { name, file, size: stat?.size ?? 0, at: stat?.mtimeMs ?? 0 };
    })
    .sort((a, b) => a.at - b.at);
  for (const { name, file, size } of found) {
    lru.set(name.slice(0, 64), { file, size });
    if (!lru.has(name.slice(0, 64))) unlinkSync(file);
  }
  return {
    /** The cached bytes of `key`, or undefined; marks it recently used. */
    get(key: string): Buffer | undefined {
      const entry = lru.get(key);
      if (!entry) return undefined;
      try {
        return readFileSync(entry.file);
      } catch {
        lru.delete(key);
        return undefined;
      }
    },
    /** Stores `bytes` under `key` (written to a temporary file, then renamed), evicting as needed. */
    set(key: string, bytes: Buffer): void {
      const file = join(dir, `${key}.webp`);
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, bytes, { mode: 0o600 });
      renameSync(temporary, file);
      lru.set(key, { file, size: bytes.length });
      if (!lru.has(key)) unlinkSync(file); // larger than the whole cache
    },
    /** Bytes held, as counted. */
    get size(): number {
      return lru.calculatedSize;
    },
  };
}

/** A gate of `limit` running tasks and `queue` waiting ones; beyond, 429. */
function gate(limit: number, queue: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (running >= limit) {
      if (waiting.length >= queue) throw rateLimitError(1, 'The media proxy is busy; retry later.');
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

const Params = Type.Object({
  signature: Type.String({ minLength: 1, maxLength: 100 }),
  url: Type.String({ minLength: 1, maxLength: MAX_MEDIA_SEGMENT, description: 'The source URL in base64url (RFC 4648 §5)' }),
});
const Query = Type.Object({
  w: Type.Optional(Type.Integer({ enum: [...MEDIA_WIDTHS], description: `Width in pixels: one of ${MEDIA_WIDTHS.join(', ')}; never enlarged` })),
});

/** Registers `GET /v1/media/:signature/:url` (see the module). `key` gives the HMAC key (lib/media-url.ts), read on first use. */
export function mediaRoutes(app: App, { config, fetch, key }: { config: Config; fetch: SourceFetch; key: () => Buffer }): void {
  const cache = createMediaCache(join(config.dataDir, 'media-cache'), config.mediaCacheMb * 1024 * 1024);
  const run = gate(MEDIA_CONCURRENCY, MEDIA_QUEUE);
  const underWay = new Map<string, Promise<Buffer>>();

  async function produce(url: string, width: number | undefined): Promise<Buffer> {
    let response;
    try {
      response = await fetch(url, { accept: 'image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1' });
    } catch (error) {
      const kind = (error as { kind?: string }).kind;
      if (kind === 'blocked') throw unprocessableError('The image address leads to a non-public address, which Sluice does not fetch.', 'url');
      if (kind === 'too_large') throw unprocessableError(`The image is larger than ${MEDIA_MAX_BYTES} bytes.`, 'url');
      if (kind === 'protocol') throw unprocessableError('The image address is not an http(s) URL Sluice fetches.', 'url');
      if (kind === 'timeout') throw upstreamError('The image server did not answer in time.', 'url');
      throw upstreamError(`The image could not be fetched (${kind ?? 'network'}).`, 'url');
    }
    if (response.status < 200 || response.status >= 300) throw upstreamError(`The image server answered ${response.status}.`, 'url');
    return convertImage(response.body, width);
  }

  app.get(
    '/v1/media/:signature/:url',
    {
      schema: {
        tags: ['publication'],
        summary: 'An image of the wall through the media proxy: fetched, checked, resized and cached by Sluice (public, signed)',
        params: Params,
        querystring: Query,
        response: { 200: { description: 'The image as WebP', content: { 'image/webp': { schema: Type.String({ format: 'binary' }) } } }, 304: { description: 'Not modified (If-None-Match)', type: 'null' }, ...errorResponses(400, 403, 414, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const { signature, url: segment } = request.params;
      const width = request.query.w;
      const url = decodeMediaUrl(segment);
      if (url === undefined || !verifyMediaSignature(key(), signature, url, width)) {
        throw forbiddenError('The signature does not match this image address and width.', 'signature');
      }
      const cacheKey = createHash('sha256').update(`${width ?? ''}\n${url}`).digest('hex');
      const etag = `"${cacheKey.slice(0, 32)}"`;
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', etag)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cross-origin-resource-policy', 'cross-origin');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send(null as never);
      let bytes = cache.get(cacheKey);
      if (!bytes) {
        let pending = underWay.get(cacheKey);
        if (!pending) {
          pending = run(() => produce(url, width)).finally(() => underWay.delete(cacheKey));
          underWay.set(cacheKey, pending);
        }
        try {
          bytes = await pending;
        } catch (error) {
          reply.removeHeader('cache-control').removeHeader('etag').header('cache-control', 'no-store');
          throw error;
        }
        cache.set(cacheKey, bytes);
      }
      return reply.type('image/webp').send(bytes as never);
    },
  );
}
