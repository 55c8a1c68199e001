/**
 * Wall JavaScript never acts as the reader (issue 30, point 2), in real Chromium: user B is signed
 * in to the console (a sign-in session on the queue origin, which by default is also the console's
 * and the authorization server's); tenant A's JavaScript customization on A's wall tries to take
 * B over: the console's authorization request fetched with B's cookies (the console client skips
 * consent, so a code would come back in the followed redirect's URL), redeemed with the
 * attacker's own PKCE verifier, then B's credentials read and a collection created in B's
 * contract with the token; besides, `document.cookie` and a credentialed fetch of the management
 * API. The wall is opened as a page of its own and embedded in a site by embed.js. The script
 * reports what it got on the wall's body (`data-attack`); the test reads it.
 *
 * The defence (docs/api.md#publication, docs/api.md#browser-sign-in): the wall is served with a
 * CSP `sandbox` without `allow-same-origin` (an opaque origin: no cookies, every request
 * cross-origin), and `/v1/authorize` issues codes to top-level navigations only (Fetch Metadata).
 */
import type { Browser, BrowserContext, Frame } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createContract } from '../../src/store/contracts.ts';
import { buildItem, seedItems } from '../helper.ts';
import { addCustomization } from '../publication-fixtures.ts';
import { consolePage, type ConsoleServer, signIn, startConsole } from './console-harness.ts';
import { embeddingSite, launch } from './harness.ts';

const VERIFIER = randomToken() + randomToken();

/** Tenant A's customization: the takeover attempt, every step's outcome reported on the body. */
function attackScript(origin: string): string {
  const redirectUri = `${origin}/console/`;
  return `
(function () {
  var out = { code: null, token: null, credentials: null, created: null };
  function report() { document.body.setAttribute('data-attack', JSON.stringify(out)); }
  try { out.cookie = document.cookie; } catch (e) { out.cookie = 'blocked: ' + e.name; }
  var authorize = ${JSON.stringify(origin)} + '/v1/authorize?' + new URLSearchParams({
    response_type: 'code', client_id: 'sluice-console', redirect_uri: ${JSON.stringify(redirectUri)},
    code_challenge: ${JSON.stringify(s256(VERIFIER))}, code_challenge_method: 'S256'
  });
  var token;
  fetch(authorize, { credentials: 'include' })
    .then(function (res) {
      out.authorize = res.status + ' ' + res.url;
      var code = new URL(res.url).searchParams.get('code');
      out.code = code;
      if (!code) throw new Error('no code');
      return fetch(${JSON.stringify(origin)} + '/v1/oauth/token', { method: 'POST', body: new URLSearchParams({
        grant_type: 'authorization_code', code: code, redirect_uri: ${JSON.stringify(redirectUri)},
        client_id: 'sluice-console', code_verifier: ${JSON.stringify(VERIFIER)} }) });
    })
    .then(function (res) { return res.json(); })
    .then(function (body) {
      token = body.access_token || null;
      out.token = token;
      if (!token) throw new Error('no token');
      return fetch(${JSON.stringify(origin)} + '/v1/customer/contracts/me?access_token=' + token).then(function (res) { return res.json(); });
    })
    .then(function (contracts) {
      var contractId = contracts[0]._id;
      return fetch(${JSON.stringify(origin)} + '/collection/credentials?contract_id=' + contractId + '&access_token=' + token)
        .then(function (res) { return res.json(); })
        .then(function (credentials) {
          out.credentials = credentials.map(function (c) { return c.name; });
          return fetch(${JSON.stringify(origin)} + '/collection/collections?access_token=' + token, {
            method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contractId: contractId, name: 'Planted by A' }) });
        })
        .then(function (res) { out.created = res.status; });
    })
    .catch(function (error) { out.error = String(error); })
    .then(function () {
      return fetch(${JSON.stringify(origin)} + '/v1/customer/contracts/me', { credentials: 'include' })
        .then(function (res) { out.cookieRead = res.status; }, function (error) { out.cookieRead = 'refused: ' + error.name; });
    })
    .then(report, report);
})();`;
}

let browser: Browser;
let sluice: ConsoleServer;
let wallUrl: string;
let alpha: { slug: string; q: string };
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  // B's data: a secret credential in B's contract ("Acme News", granted to the console's user).
  const created = await sluice.app.inject({
    method: 'POST',
    url: `/collection/credentials?access_token=${encodeURIComponent(sluice.user.token)}`,
    payload: { name: 'Acme X account', contractId: sluice.tenant.contract.id, service: 'twitter', bearerToken: 'AAAA-secret-of-tenant-b' },
  });
  expect(created.statusCode, created.body).toBe(201);
  // Tenant A: another contract, its wall, and the hostile customization.
  const contract = await createContract(sluice.db, 'Alpha Wall', 'test');
  const collection = await createCollection(sluice.db, contract.id, { name: 'Alpha Posts' }, 'test');
  await seedItems(sluice.db, { contract, collection }, [buildItem({ id: 'rss_alpha', title: 'An item of tenant A' })]);
  await addCustomization(sluice.db, contract.id, { name: 'takeover', type: 'js', data: attackScript(sluice.origin) });
  alpha = { slug: contract.slug, q: collection.slug };
  wallUrl = `${sluice.origin}/v1/publication/${contract.slug}?q=${collection.slug}`;
});

afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

/** A browser context in which user B signed in to the console (B's sign-in session cookie is set). */
async function signedInContext(): Promise<BrowserContext> {
  const page = await consolePage(browser);
  closers.push(() => page.context().close());
  await signIn(page, sluice);
  expect((await page.context().cookies()).map((c) => c.name)).toContain('sluice_session');
  return page.context();
}

const codeCount = async () => Number((await sluice.db.selectFrom('authorizationCodes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** What the attack script reported on the wall in `frame` once it finished. */
async function attackReport(frame: Frame): Promise<Record<string, unknown>> {
  const body = await frame.waitForSelector('body[data-attack]', { timeout: 10_000 });
  return JSON.parse((await body.getAttribute('data-attack'))!) as Record<string, unknown>;
}

async function expectNothingTaken(report: Record<string, unknown>, codesBefore: number) {
  expect(report).toMatchObject({ code: null, token: null, credentials: null, created: null });
  expect(JSON.stringify(report)).not.toContain('secret-of-tenant-b');
  expect(JSON.stringify(report)).not.toContain('Acme X account');
  expect(report.cookieRead).not.toBe(200);
  expect(report.cookie === '' || String(report.cookie).startsWith('blocked')).toBe(true);
  // No code was issued for B while A's script ran, and nothing was planted in B's contract.
  expect(await codeCount()).toBe(codesBefore);
  const planted = await sluice.db.selectFrom('collections').select('id').where('contractId', '=', sluice.tenant.contract.id).where('name', '=', 'Planted by A').execute();
  expect(planted).toEqual([]);
}

describe("tenant A's wall JavaScript, opened by signed-in user B", () => {
  it('gets no authorization code, no token and none of B’s data on the wall opened as a page', async () => {
    const context = await signedInContext();
    const codesBefore = await codeCount();
    const page = await context.newPage();
    await page.goto(wallUrl);
    await page.waitForSelector('[data-id="rss_alpha"]');
    const report = await attackReport(page.mainFrame());
    await expectNothingTaken(report, codesBefore);
    // The wall itself still works: its own script ran (the customization API is there).
    expect(await page.evaluate(() => typeof (window as unknown as { sluice?: { version: number } }).sluice?.version)).toBe('number');
  });

  it('gets nothing either on the wall embedded in a site by embed.js', async () => {
    const context = await signedInContext();
    const codesBefore = await codeCount();
    const site = await embeddingSite(sluice.origin, alpha.slug, alpha.q);
    closers.push(site.close);
    const page = await context.newPage();
    await page.goto(site.url);
    const frame = (await (await page.waitForSelector('#wall iframe')).contentFrame()) as Frame;
    await frame.waitForSelector('[data-id="rss_alpha"]');
    const report = await attackReport(frame);
    await expectNothingTaken(report, codesBefore);
  });
});

describe('the sandboxed wall still reads its content', () => {
  it("runs with origin 'null' and, without the stream, polls the content API through CORS", async () => {
    await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_first', title: 'Already there' })]);
    const page = await consolePage(browser);
    closers.push(() => page.context().close());
    // The stream is unavailable (404): the wall falls back to polling /v1/content/… from its opaque origin.
    await page.route('**/v1/content/*/stream?*', (route) => route.fulfill({ status: 404, body: '' }));
    const polled: { status: number; cors: string | undefined }[] = [];
    page.on('response', (res) => {
      if (/\/v1\/content\/[^/]+\?/.test(res.url())) polled.push({ status: res.status(), cors: res.headers()['access-control-allow-origin'] });
    });
    await page.goto(`${sluice.origin}/v1/publication/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}`);
    await page.waitForSelector('[data-id="rss_first"]');
    expect(await page.evaluate(() => self.origin)).toBe('null');
    await seedItems(sluice.db, sluice.tenant, [buildItem({ id: 'rss_polled', title: 'Found by polling' })]);
    await page.waitForSelector('[data-id="rss_polled"]', { timeout: 20_000 });
    expect(polled[0]).toEqual({ status: 200, cors: '*' });
  });
});
