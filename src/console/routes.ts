/**
 * The console on {api_url} (issue 12, docs/api.md#console):
 *
 *   GET /console/assets/<name>   the built assets (`build.ts`): `cache-control: public,
 *                                max-age=31536000, immutable` (names carry a content hash);
 *                                brotli or gzip when the browser accepts it (compressed
 *                                by the build, `build.ts`; read at start, not compressed)
 *   GET /console/, /console/*    index.html for every other path (the single-page app routes
 *                                itself, so a reload or a shared link opens the same screen),
 *                                `cache-control: no-cache`, with the strict CSP below
 *   GET /                        a browser (Accept: text/html) is redirected to /console/;
 *                                other clients get a JSON pointer to the console and the APIs
 *
 * index.html carries the configuration the app needs (`<meta name="sluice-console">`: the
 * auth, API and queue base URLs, the client id and redirect URI) so that no inline script is
 * needed. Content-Security-Policy (W3C CSP Level 3): scripts and styles only from this origin
 * (no inline, no eval), connections only to the auth, API and queue origins, frames only from
 * the queue origin (the publication preview), forms only to this origin and the auth origin (the
 * sign-out), no framing of the console (clickjacking).
 *
 * When `dist/console` is missing (no `npm install`/`npm run build` yet) the console paths answer
 * 503 with a page that says how to build it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_CLIENT_ID, consoleUrl } from '../first-party.ts';
import type { Config } from '../config.ts';
import { compress, DIST_DIR, ENCODED_SUFFIX } from './dist.ts';
import { acceptedCoding } from '../http/encoding.ts';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

interface Asset {
  type: string;
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
}

function origin(url: string): string {
  return new URL(url).origin;
}

/** The console's Content-Security-Policy for this configuration. */
export function consoleCsp(config: Pick<Config, 'apiUrl' | 'authUrl' | 'queueUrl'>): string {
  const apis = [...new Set([origin(config.apiUrl), origin(config.authUrl), origin(config.queueUrl)])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // The queue origin too: the queue read's pictures come through its media proxy (docs/api.md#media-proxy).
    `img-src 'self' https: data: ${origin(config.queueUrl)}`,
    "font-src 'self'",
    `connect-src 'self' ${apis}`,
    `frame-src ${origin(config.queueUrl)}`,
    `form-action 'self' ${origin(config.authUrl)}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "manifest-src 'self'",
  ].join('; ');
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** index.html with the configuration meta element in place of `<!--config-->`. */
export function consoleIndex(template: string, config: Pick<Config, 'apiUrl' | 'authUrl' | 'queueUrl'>): string {
  const settings = { authUrl: config.authUrl, apiUrl: config.apiUrl, queueUrl: config.queueUrl, clientId: CONSOLE_CLIENT_ID, redirectUri: consoleUrl(config) };
  return template.replace('<!--config-->', `<meta name="sluice-console" content="${escapeAttribute(JSON.stringify(settings))}">`);
}

interface Built {
  template: string;
  assets: Map<string, Asset>;
}

const loaded = new Map<string, { stamp: number; built: Built }>();

/**
 * The build in `dir` with every asset and its compressed copies, kept per process (every app of a
 * test run shares it) until the build's manifest changes; undefined when there is no build. The
 * copies are the build's (`<name>.gz`, `<name>.br`); an asset without them (a build made by an
 * older version) is compressed here.
 */
function loadBuild(dir: string): Built | undefined {
  let stamp: number;
  try {
    stamp = statSync(join(dir, 'manifest.json')).mtimeMs;
  } catch {
    return undefined;
  }
  const cached = loaded.get(dir);
  if (cached?.stamp === stamp) return cached.built;
  const assets = new Map<string, Asset>();
  const suffixes = Object.values(ENCODED_SUFFIX);
  for (const name of readdirSync(join(dir, 'assets'))) {
    if (suffixes.some((suffix) => name.endsWith(suffix))) continue;
    const path = join(dir, 'assets', name);
    const raw = readFileSync(path);
    const copies = suffixes.every((suffix) => existsSync(path + suffix));
    const { gzip, br } = copies ? { gzip: readFileSync(path + ENCODED_SUFFIX.gzip), br: readFileSync(path + ENCODED_SUFFIX.br) } : compress(raw);
    assets.set(name, { type: TYPES[extname(name)] ?? 'application/octet-stream', raw, gzip, br });
  }
  const built = { template: readFileSync(join(dir, 'index.html'), 'utf8'), assets };
  loaded.set(dir, { stamp, built });
  return built;
}

/**
 * Registers the module's routes on `app`, serving the build in `distDir` (default `dist/console`,
 * read once at start) with the configuration's URLs in index.html and its CSP.
 */
export function consoleRoutes(app: FastifyInstance, { config, distDir = DIST_DIR }: { config: Config; distDir?: string }): void {
  const built = loadBuild(distDir);
  const index = built && consoleIndex(built.template, config);
  const assets = built?.assets ?? new Map<string, Asset>();
  const csp = consoleCsp(config);
  const hidden = { schema: { hide: true } };

  const page = (reply: FastifyReply) => {
    reply.headers({
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
    if (!index) {
      return reply
        .code(503)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title><h1>The console has not been built</h1><p>Run <code>npm run build</code> (or <code>npm install</code>) in the Sluice folder, then restart.</p></html>');
    }
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
  };

  app.get('/console', hidden, async (_request, reply) => page(reply));
  app.get('/console/*', hidden, async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    if (!path.startsWith('assets/')) return page(reply);
    const asset = assets.get(path.slice('assets/'.length));
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    reply.headers({ 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff', vary: 'accept-encoding' }).type(asset.type);
    const coding = acceptedCoding(request.headers['accept-encoding'], ['br', 'gzip']);
    return coding ? reply.header('content-encoding', coding).send(asset[coding]) : reply.send(asset.raw);
  });

  app.get('/', hidden, async (request, reply) => {
    if (String(request.headers.accept ?? '').includes('text/html')) return reply.redirect('/console/', 302);
    return { name: 'Sluice', console: consoleUrl(config), openapi: `${config.apiUrl}/openapi.json`, docs: `${config.apiUrl}/docs` };
  });
}
