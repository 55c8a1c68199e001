/**
 * The console over HTTP (issue 12): the served app (index.html for every /console/ path, the
 * CSP, hashed assets cached immutably and compressed, the first-load budget), `GET /`, and the
 * console's OAuth client: created by the migration, redirect URI following API_URL, no consent
 * page, and sign-out (`POST /v1/oauth/logout`) that revokes the token and ends the session only
 * for the token's own user and client.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import type { Manifest } from '../../src/console/build.ts';
import { DIST_DIR } from '../../src/console/dist.ts';
import { consoleRoutes } from '../../src/console/routes.ts';
import { loadConfig } from '../../src/config.ts';
import { findClient } from '../../src/store/consumers.ts';
import { build, buildUser, tempDir } from '../helper.ts';
import { Browser, formFields } from './browser-jar.ts';

const API = 'https://sluice.example.com';
const ENV = { API_URL: API, AUTH_URL: 'https://auth.example.com', QUEUE_URL: 'https://queue.example.com' };
const CONSOLE = `${API}/console/`;

function manifest(): Manifest {
  return JSON.parse(readFileSync(join(DIST_DIR, 'manifest.json'), 'utf8')) as Manifest;
}

function directives(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
}

describe('the console app', () => {
  it('answers index.html with the strict CSP and the configuration for every path under /console/', async () => {
    const { app } = await build(ENV);
    for (const url of ['/console', '/console/', '/console/contracts/abc', '/console/contracts/abc/sources/def?collection=x']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain(`/console/assets/${manifest().entry}`);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|'nonce-|\*/);
      const d = directives(csp);
      expect(d.get('default-src')).toEqual(["'none'"]);
      expect(d.get('script-src')).toEqual(["'self'"]);
      expect(d.get('style-src')).toEqual(["'self'"]);
      expect(d.get('connect-src')).toEqual(["'self'", API, 'https://auth.example.com', 'https://queue.example.com']);
      expect(d.get('form-action')).toEqual(["'self'", 'https://auth.example.com']);
      expect(d.get('frame-ancestors')).toEqual(["'none'"]);
      const meta = /<meta name="sluice-console" content="([^"]+)">/.exec(res.body)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
      expect(JSON.parse(meta)).toEqual({ authUrl: 'https://auth.example.com', apiUrl: API, queueUrl: 'https://queue.example.com', clientId: 'sluice-console', redirectUri: CONSOLE });
      // No inline script: every <script> has a src.
      expect(res.body.match(/<script(?![^>]*\ssrc=)[^>]*>/g)).toBeNull();
    }
  });

  it('serves the hashed assets for a year, immutable, brotli or gzip as accepted; unknown ones are 404', async () => {
    const { app } = await build();
    const { entry, css } = manifest();
    const raw = readFileSync(join(DIST_DIR, 'assets', entry));
    const br = await app.inject({ method: 'GET', url: `/console/assets/${entry}`, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).equals(raw)).toBe(true);
    const gz = await app.inject({ method: 'GET', url: `/console/assets/${entry}`, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(raw)).toBe(true);
    const plain = await app.inject({ method: 'GET', url: `/console/assets/${entry}`, headers: { 'accept-encoding': 'br;q=0' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(raw)).toBe(true);
    expect((await app.inject({ method: 'GET', url: `/console/assets/${css}` })).headers['content-type']).toBe('text/css; charset=utf-8');
    for (const url of ['/console/assets/main-NOPE.js', '/console/assets/../manifest.json', '/console/assets/%2e%2e%2fmanifest.json']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.body, url).not.toContain('"firstLoad"');
      expect(String(res.headers['cache-control'] ?? ''), url).not.toContain('immutable');
    }
    expect((await app.inject({ method: 'GET', url: '/console/assets/main-NOPE.js' })).statusCode).toBe(404);
    // The build's compressed copies are what is sent, and are not assets of their own.
    expect(br.rawPayload.equals(readFileSync(join(DIST_DIR, 'assets', `${entry}.br`)))).toBe(true);
    expect(gz.rawPayload.equals(readFileSync(join(DIST_DIR, 'assets', `${entry}.gz`)))).toBe(true);
    for (const copy of [`${entry}.br`, `${entry}.gz`]) expect((await app.inject({ method: 'GET', url: `/console/assets/${copy}` })).statusCode, copy).toBe(404);
  });

  it('compresses the assets of a build without compressed copies (made by an older version) when it loads it', async () => {
    const dir = join(tempDir(), 'old-build');
    cpSync(DIST_DIR, dir, { recursive: true, filter: (path) => !/\.(br|gz)$/.test(path) });
    const app = Fastify();
    consoleRoutes(app, { config: loadConfig({}), distDir: dir });
    const { entry } = manifest();
    const raw = readFileSync(join(dir, 'assets', entry));
    const br = await app.inject({ method: 'GET', url: `/console/assets/${entry}`, headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).equals(raw)).toBe(true);
    const gz = await app.inject({ method: 'GET', url: `/console/assets/${entry}`, headers: { 'accept-encoding': 'gzip' } });
    expect(gunzipSync(gz.rawPayload).equals(raw)).toBe(true);
    await app.close();
  });

  it('keeps the first load under 150 KB compressed (the build manifest’s sizes)', () => {
    const { firstLoad, entry, css } = manifest();
    expect(firstLoad.files).toContain(entry);
    expect(firstLoad.files).toContain(css);
    expect(firstLoad.gzip).toBeLessThan(150 * 1024);
    expect(firstLoad.brotli).toBeLessThan(150 * 1024);
  });

  it('says how to build the console when the build is missing, instead of a blank page', async () => {
    const app = Fastify();
    consoleRoutes(app, { config: loadConfig({}), distDir: join(tempDir(), 'no-build') });
    const res = await app.inject({ method: 'GET', url: '/console/contracts/x' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    await app.close();
  });

  it('sends a browser from / to the console; other clients get where things are', async () => {
    const { app } = await build(ENV);
    const browser = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/console/');
    const program = await app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(program.statusCode).toBe(200);
    expect(program.json()).toEqual({ name: 'Sluice', console: CONSOLE, openapi: `${API}/openapi.json`, docs: `${API}/docs` });
  });
});

describe('the console’s OAuth client', () => {
  const VERIFIER = randomToken() + randomToken();
  const authorize = (redirectUri = CONSOLE) =>
    `/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sluice-console', redirect_uri: redirectUri, state: 's1', code_challenge: s256(VERIFIER), code_challenge_method: 'S256' })}`;

  async function setup() {
    const ctx = await build(ENV);
    const user = await buildUser(ctx.db, { name: 'Mia Moderator' });
    return { ...ctx, user, browser: new Browser(ctx.app) };
  }

  /** Signs in through the login form; returns the response of the authorize request that follows. */
  async function signIn(s: Awaited<ReturnType<typeof setup>>, username = s.user.username, password = s.user.password) {
    const login = await s.browser.get(authorize());
    expect(login.statusCode, login.body).toBe(200);
    const posted = await s.browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username, password });
    expect(posted.statusCode, posted.body).toBe(303);
    return s.browser.get(posted.headers.location as string);
  }

  async function tokenFrom(s: Awaited<ReturnType<typeof setup>>, back: { headers: Record<string, unknown> }) {
    const code = new URL(back.headers.location as string).searchParams.get('code')!;
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CONSOLE, client_id: 'sluice-console', code_verifier: VERIFIER }).toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { access_token: string }).access_token;
  }

  const me = (s: Awaited<ReturnType<typeof setup>>, token: string) => s.app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${token}` } });

  it('exists in every installation as a public client', async () => {
    const { db } = await setup();
    const client = await findClient(db, 'sluice-console');
    expect(client).toMatchObject({ type: 'client', name: 'Sluice console', secretHash: null, disabled: 0, redirectUris: '["/console/"]' });
  });

  it('shows the sign-in page, then no consent page: straight back to <API_URL>/console/ with a code that buys a token', async () => {
    const s = await setup();
    const login = await s.browser.get(authorize());
    expect(login.body).toContain('to continue to <strong>Sluice console</strong>');
    expect(login.body).not.toContain('asked whether');
    const posted = await s.browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username: s.user.username, password: s.user.password });
    // The session lasts SESSION_TTL (a working day by default): the console renews hourly tokens within it.
    const cookie = ([] as string[]).concat(posted.headers['set-cookie'] as string[]).find((c) => c.startsWith('sluice_session='))!;
    expect(cookie).toMatch(/Max-Age=28800/);
    const back = await s.browser.get(posted.headers.location as string);
    expect(back.statusCode, back.body).toBe(302);
    const location = new URL(back.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(CONSOLE);
    expect(location.searchParams.get('state')).toBe('s1');
    expect(back.headers['cache-control']).toBe('no-store');
    const token = await tokenFrom(s, back);
    expect((await me(s, token)).json()).toMatchObject({ consumer_id: s.user.consumer.id });
    // While the session lasts, the next sign-in needs no typing at all.
    const again = await s.browser.get(authorize());
    expect(again.statusCode).toBe(302);
    expect(again.headers.location).toMatch(/^https:\/\/sluice\.example\.com\/console\/\?code=/);
  });

  it('accepts only the redirect URI that follows API_URL', async () => {
    const s = await setup();
    for (const uri of ['http://localhost:8080/console/', `${API}/console`, `${API}/console/x`, '/console/', 'https://evil.example.com/console/']) {
      const res = await s.browser.get(authorize(uri));
      expect(res.statusCode, uri).toBe(400);
      expect(res.body).toContain('Unregistered return address');
    }
  });

  it('signs out: revokes the token and ends the session, so the next sign-in asks for the password', async () => {
    const s = await setup();
    const token = await tokenFrom(s, await signIn(s));
    const out = await s.browser.post('/v1/oauth/logout', { client_id: 'sluice-console', token, post_logout_redirect_uri: CONSOLE });
    expect(out.statusCode, out.body).toBe(303);
    expect(out.headers.location).toBe(CONSOLE);
    expect(s.browser.jar.has('sluice_session')).toBe(false);
    expect((await me(s, token)).statusCode).toBe(401);
    const next = await s.browser.get(authorize());
    expect(next.statusCode).toBe(200);
    expect(next.body).toContain('name="password"');
  });

  it('keeps the session when the sign-out does not prove it comes from the user’s console', async () => {
    const s = await setup();
    const token = await tokenFrom(s, await signIn(s));
    const other = await buildUser(s.db, { name: 'Someone Else' }); // a token of another user, not of the console
    const otherSession = new Browser(s.app);
    const otherToken = await tokenFrom({ ...s, browser: otherSession }, await signIn({ ...s, browser: otherSession }, other.username, other.password));
    for (const proof of ['', 'not-a-token', other.token, otherToken]) {
      const res = await s.browser.post('/v1/oauth/logout', { client_id: 'sluice-console', token: proof, post_logout_redirect_uri: CONSOLE });
      expect(res.statusCode, proof).toBe(303);
      expect(s.browser.jar.has('sluice_session'), proof).toBe(true);
    }
    expect((await me(s, token)).statusCode).toBe(200);
    expect((await s.browser.get(authorize())).statusCode).toBe(302); // still signed in
    // An unknown client or an unregistered return address: an error page, nothing ended, nowhere sent.
    for (const form of [
      { client_id: 'nope', token, post_logout_redirect_uri: CONSOLE },
      { client_id: 'sluice-console', token, post_logout_redirect_uri: 'https://evil.example.com/' },
    ]) {
      const res = await s.browser.post('/v1/oauth/logout', form);
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect((await me(s, token)).statusCode).toBe(200);
    expect(s.browser.jar.has('sluice_session')).toBe(true);
  });

  it('is documented in the OpenAPI document', async () => {
    const { app } = await setup();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    expect(Object.keys(doc.paths['/v1/oauth/logout'] ?? {})).toEqual(['post']);
  });
});
