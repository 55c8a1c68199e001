/**
 * The browser sign-in in a real browser (Chromium driven by playwright-core, test/browser/chromium.ts): a real
 * Sluice server and a tiny client page server on loopback. Starts at /v1/authorize, logs in,
 * allows (or denies), and lands on the client's redirect URI; the token it carries works.
 * `UPDATE_SCREENSHOTS=1` writes the screenshots of the pages to docs/ (otherwise to a temp folder).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { browserMissing, launch } from '../browser/harness.ts';
import { buildUser } from '../helper.ts';

const docs = new URL('../../docs/', import.meta.url).pathname;
let shots: string;
let dir: string;
let app: FastifyInstance;
let db: Db;
let browser: Browser;
let clientServer: Server;
let sluice: string;
let callback: string;
let clientId: string;
let user: { username: string; password: string; consumer: { id: string } };

beforeAll(async () => {
  // One server for the whole file (test/helper.ts's build() closes its app after each test).
  dir = mkdtempSync(join(tmpdir(), 'sluice-browser-'));
  shots = process.env.UPDATE_SCREENSHOTS === '1' ? docs : dir;
  clientServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Moderation Desk</title><h1>Moderation Desk</h1><p>Back from Sluice.</p>');
  });
  await new Promise<void>((resolve) => clientServer.listen(0, '127.0.0.1', resolve));
  callback = `http://127.0.0.1:${(clientServer.address() as AddressInfo).port}/callback`;

  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false' });
  db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  app = await buildApp(config, { db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  sluice = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  clientId = randomToken().slice(0, 24);
  await createConsumer(db, { type: 'client', name: 'Moderation Desk', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [callback] });
  user = await buildUser(db, { name: 'Mia Moderator', username: 'mia', language: 'en' });

  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => clientServer?.close(resolve));
  await app?.close();
  await db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 820, height: 760 }, javaScriptEnabled: false });
  return context.newPage();
}

async function signIn(page: Page, url: string, screenshots = false) {
  await page.goto(url);
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
  if (screenshots) await page.screenshot({ path: join(shots, 'sign-in-login.png') });
  await page.getByLabel('User name').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  if (screenshots) await page.screenshot({ path: join(shots, 'sign-in-consent.png') });
}

describe.skipIf(browserMissing)('sign-in in Chromium', () => {
  it('implicit grant: logs in, allows, and lands on the redirect URI with a working access token', async () => {
    const page = await newPage();
    const url = `${sluice}/v1/authorize?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: callback, state: 'xyz' })}`;
    await signIn(page, url, true);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${callback}#**`);
    const landed = new URL(page.url());
    const fragment = new URLSearchParams(landed.hash.slice(1));
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(fragment.get('state')).toBe('xyz');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Moderation Desk');
    const me = await fetch(`${sluice}/v1/oauth/me?access_token=${encodeURIComponent(fragment.get('access_token')!)}`);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ consumer_id: user.consumer.id, consumer_type: 'user', privileges: ['MY_ACCOUNT'], language: 'en' });
    await page.context().close();
  });

  it('implicit grant: denying lands on the redirect URI with error=access_denied', async () => {
    const page = await newPage();
    await signIn(page, `${sluice}/v1/oauth/authorize?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: callback, state: 'no' })}`);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${callback}#**`);
    expect(Object.fromEntries(new URLSearchParams(new URL(page.url()).hash.slice(1)))).toMatchObject({ error: 'access_denied', state: 'no' });
    await page.context().close();
  });

  it('code grant with PKCE: allows, lands with ?code, and the code buys a working token', async () => {
    const page = await newPage();
    const verifier = randomToken() + randomToken();
    const url = `${sluice}/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback, state: 'c1', code_challenge: s256(verifier), code_challenge_method: 'S256' })}`;
    await signIn(page, url);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${callback}?**`);
    const code = new URL(page.url()).searchParams.get('code')!;
    const res = await fetch(`${sluice}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    expect((await fetch(`${sluice}/v1/oauth/me`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
    await page.context().close();
  });

  it('shows an error page, and goes nowhere, for an unregistered redirect URI', async () => {
    const page = await newPage();
    const response = await page.goto(`${sluice}/v1/authorize?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: `${callback}/../evil` })}`);
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(sluice);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Unregistered return address');
    await page.screenshot({ path: join(shots, 'sign-in-error.png') });
    await page.context().close();
  });
});
