/**
 * The bounds on a source image that Sluice reads and decodes, one place for both readers: the
 * media proxy (publication/media.ts, docs/api.md#media-proxy) and image screening
 * (filter/images/, docs/filters.md#image-screening). Pure: constants and a byte sniffer.
 */

/** Largest source image read, bytes: 10 MiB. */
export const MEDIA_MAX_BYTES = 10 * 1024 * 1024;
/** Largest source image decoded, pixels (width × height, all frames): 50 megapixels (sharp's `limitInputPixels`). */
export const MEDIA_MAX_PIXELS = 50_000_000;

/**
 * The image format of `bytes` by its first bytes (magic numbers): `jpeg`, `png`, `gif`, `webp` or
 * `avif`; undefined for anything else, which is refused before a decoder runs (so no SVG, PDF or
 * TIFF reaches libvips), whatever its Content-Type said.
 */
export function sniffImage(bytes: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => Buffer.from(bytes.subarray(from, to)).toString('latin1');
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(4, 8) === 'ftyp' && /^(avif|avis)$/.test(ascii(8, 12))) return 'avif';
  return undefined;
}
