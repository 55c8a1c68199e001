/**
 * Where the console's build lives and how its assets are compressed: shared by the build
 * (`build.ts`) and the server (`routes.ts`), so that serving the console never loads esbuild
 * (about 9 MB of a server's memory, docs/operations.md#reads-at-scale).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** `dist/console/` of the checkout: index.html, manifest.json and assets/. */
export const DIST_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'console');

/** Suffixes of an asset's compressed copies beside it, by `Content-Encoding`. */
export const ENCODED_SUFFIX = { gzip: '.gz', br: '.br' } as const;

/** `data` compressed as the console serves it: gzip (level 9) and brotli (quality 11). Synchronous. */
export function compress(data: Buffer): { gzip: Buffer; br: Buffer } {
  return { gzip: gzipSync(data, { level: 9 }), br: brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }) };
}
