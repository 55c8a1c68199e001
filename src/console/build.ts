/**
 * Builds the console (`src/console/app/`) into `dist/console/` with esbuild; run by `npm install`
 * and `npm ci` (the `prepare` script), by `npm test` first, and by `npm run build`.
 *
 * Output:
 * - `assets/main-<hash>.js` (ES module entry) and `assets/chunk-<hash>.js` (code splitting: a
 *   dynamic `import()` becomes a chunk loaded on demand, e.g. a screen and its code editor);
 * - `assets/console-<hash>.css`: `app/styles.css` then every other `app/**\/*.css`, sorted, in one
 *   file (a screen adds its stylesheet beside its module; nothing to register);
 * - `index.html` from `app/index.html` with the stylesheet, the entry and `modulepreload` links of
 *   its static chunks; the server fills `<!--config-->` (`routes.ts`);
 * - `assets/<name>.gz` and `assets/<name>.br` beside every asset: gzip (level 9) and brotli
 *   (quality 11), compressed once here so that the server only reads them (`routes.ts`);
 * - `manifest.json`: `{entry, css, preload, files: {<name>: {bytes, gzip, brotli}}, firstLoad:
 *   {files, bytes, gzip, brotli}}`, sizes in bytes; `firstLoad` counts index.html, the entry, its
 *   static chunks and the stylesheet (what a first visit downloads before any lazy screen).
 *
 * Asset names carry a content hash, so the server caches them for a year as immutable.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { compress, DIST_DIR, ENCODED_SUFFIX } from './dist.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const APP_DIR = join(here, 'app');
/** Browsers the console supports: those with ES modules, dynamic import and the CSS it uses. */
const TARGET = ['chrome111', 'firefox114', 'safari16.4'];

export interface SizedFile {
  bytes: number;
  gzip: number;
  brotli: number;
}

export interface Manifest {
  entry: string;
  css: string;
  preload: string[];
  files: Record<string, SizedFile>;
  firstLoad: SizedFile & { files: string[] };
}

/** Sizes of `data` raw, gzip and brotli (`compress`), in bytes. */
function sizes(data: Buffer, encoded = compress(data)): SizedFile {
  return { bytes: data.length, gzip: encoded.gzip.length, brotli: encoded.br.length };
}

function cssFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...cssFiles(path));
    else if (entry.name.endsWith('.css')) out.push(path);
  }
  return out;
}

/** Builds the console into `outDir` (default `dist/console`); returns the manifest. */
export async function buildConsole(outDir = DIST_DIR): Promise<Manifest> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
  const common = { bundle: true, minify: true, target: TARGET, metafile: true, legalComments: 'none', logLevel: 'warning', outdir: assets } as const;

  const js = await esbuild.build({
    ...common,
    entryPoints: { main: join(APP_DIR, 'main.ts') },
    format: 'esm',
    splitting: true,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const styles = cssFiles(APP_DIR).sort((a, b) => (basename(a) === 'styles.css' && dirname(a) === APP_DIR ? -1 : basename(b) === 'styles.css' && dirname(b) === APP_DIR ? 1 : a.localeCompare(b)));
  const css = await esbuild.build({
    ...common,
    stdin: { contents: styles.map((file) => `@import ${JSON.stringify(`./${relative(APP_DIR, file)}`)};`).join('\n'), resolveDir: APP_DIR, loader: 'css', sourcefile: 'console.css' },
    entryNames: 'console-[hash]',
  });

  const outputs = { ...js.metafile.outputs, ...css.metafile.outputs };
  const name = (path: string) => relative(assets, path);
  // The output of main.ts: with splitting, every lazily imported screen is an `entryPoint` too,
  // so the first output that has one may be a screen's chunk.
  // (Metafile paths are relative to esbuild's working directory, the process's.)
  const main = join(APP_DIR, 'main.ts');
  const entryPath = Object.keys(js.metafile.outputs).find((path) => {
    const entryPoint = js.metafile.outputs[path]!.entryPoint;
    return entryPoint !== undefined && resolve(entryPoint) === main;
  })!;
  const cssPath = Object.keys(css.metafile.outputs).find((path) => path.endsWith('.css'))!;
  const preload = js.metafile.outputs[entryPath]!.imports.filter((i) => i.kind === 'import-statement').map((i) => name(i.path));

  const href = (file: string) => `/console/assets/${file}`;
  const template = readFileSync(join(APP_DIR, 'index.html'), 'utf8');
  const html = template
    .replace('<!--styles-->', `<link rel="stylesheet" href="${href(name(cssPath))}">`)
    .replace('<!--scripts-->', [...preload.map((file) => `<link rel="modulepreload" href="${href(file)}">`), `<script type="module" src="${href(name(entryPath))}"></script>`].join('\n  '));
  writeFileSync(join(outDir, 'index.html'), html);

  const files: Record<string, SizedFile> = { 'index.html': sizes(Buffer.from(html)) };
  for (const path of Object.keys(outputs)) {
    const data = readFileSync(path);
    const encoded = compress(data);
    for (const encoding of ['gzip', 'br'] as const) writeFileSync(path + ENCODED_SUFFIX[encoding], encoded[encoding]);
    files[name(path)] = sizes(data, encoded);
  }
  const first = ['index.html', name(entryPath), ...preload, name(cssPath)];
  const firstLoad = { files: first, bytes: 0, gzip: 0, brotli: 0 };
  for (const file of first) for (const key of ['bytes', 'gzip', 'brotli'] as const) firstLoad[key] += files[file]![key];
  const manifest: Manifest = { entry: name(entryPath), css: name(cssPath), preload, files, firstLoad };
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (import.meta.main) {
  const manifest = await buildConsole();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  process.stdout.write(`console built in dist/console: first load ${kb(manifest.firstLoad.gzip)} gzip (${kb(manifest.firstLoad.brotli)} brotli, ${kb(manifest.firstLoad.bytes)} raw)\n`);
}
