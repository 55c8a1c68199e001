/**
 * Signed media proxy URLs (docs/api.md#media-proxy), as Miniflux's media proxy and camo sign
 * theirs: `{queue_url}/v1/media/<signature>/<encoded url>[?w=<width>]`.
 *
 * - `<encoded url>` is the source URL's UTF-8 bytes in base64url without padding (RFC 4648 §5);
 * - `<signature>` is HMAC-SHA256 (RFC 2104, FIPS 180-4) of `<width>\n<url>` (the width empty when
 *   absent), its first 16 bytes (128 bits, as RFC 2104 §5 allows) in base64url;
 * - the HMAC key is derived from the installation's secret key (`SLUICE_SECRET_KEY` or the key
 *   file, lib/secret-box.ts) with HKDF-SHA256 (RFC 5869), info `sluice media proxy v1`, so the
 *   signing key is never the key that seals credentials. Rotating the secret key changes every
 *   media URL (walls render new ones on their next read).
 *
 * Pure, apart from node:crypto.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { SecretKey } from './secret-box.ts';

/** The widths (CSS pixels × 2 for dense screens) the wall asks for; any other `w` is refused. */
export const MEDIA_WIDTHS = [160, 320, 640, 960, 1280] as const;
export type MediaWidth = (typeof MEDIA_WIDTHS)[number];

/** Longest encoded URL segment: the router's `maxParamLength` (http/methods.ts); a longer URL is not proxied. */
export const MAX_MEDIA_SEGMENT = 1000;

/** Bytes of the HMAC kept in the signature. */
const SIGNATURE_BYTES = 16;

/** The media proxy's HMAC key (32 bytes) derived from the installation's secret key (HKDF-SHA256, RFC 5869). */
export function mediaKey(secret: SecretKey): Buffer {
  return Buffer.from(hkdfSync('sha256', secret.bytes, Buffer.alloc(0), 'sluice media proxy v1', 32));
}

/** The signature of `url` at `width` (undefined: the original width) under `key`: 22 base64url characters. */
export function mediaSignature(key: Buffer, url: string, width?: number): string {
  return createHmac('sha256', key).update(`${width ?? ''}\n${url}`).digest().subarray(0, SIGNATURE_BYTES).toString('base64url');
}

/** Whether `signature` is the signature of `url` at `width` (compared in constant time). */
export function verifyMediaSignature(key: Buffer, signature: string, url: string, width?: number): boolean {
  const expected = Buffer.from(mediaSignature(key, url, width));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `url` as the path segment of a media URL (base64url, RFC 4648 §5). */
export function encodeMediaUrl(url: string): string {
  return Buffer.from(url, 'utf8').toString('base64url');
}

/** The source URL of a path segment; undefined when it is not base64url. */
export function decodeMediaUrl(segment: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return undefined;
  return Buffer.from(segment, 'base64url').toString('utf8');
}

/**
 * The proxied URL of an `http:` or `https:` image `url` under `base` (the queue URL, no trailing
 * slash), resized to `width` when given; any other URL (`data:` thumbnails), and one whose encoded
 * form is longer than {@link MAX_MEDIA_SEGMENT}, is returned unchanged.
 */
export function proxiedMediaUrl(base: string, key: Buffer, url: string, width?: MediaWidth): string {
  if (!/^https?:/i.test(url)) return url;
  const encoded = encodeMediaUrl(url);
  if (encoded.length > MAX_MEDIA_SEGMENT) return url;
  const query = width === undefined ? '' : `?w=${width}`;
  return `${base.replace(/\/+$/, '')}/v1/media/${mediaSignature(key, url, width)}/${encoded}${query}`;
}
