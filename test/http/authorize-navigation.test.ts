/**
 * The authorization endpoint answers top-level navigations only (issue 30, point 2;
 * docs/api.md#browser-sign-in): a signed-in user's session must not buy a code for a page script.
 * Written as the attack: with the session cookie of a signed-in user, the console's authorization
 * request (no consent page: a code comes straight back) is sent as `fetch()` sends it
 * (`Sec-Fetch-Mode: cors` / `no-cors`, `Sec-Fetch-Dest: empty`) or as a frame loads it → 403, and
 * no code anywhere in the answer nor in the database. As a browser navigates (`navigate` +
 * `document`) or with no Fetch Metadata at all (older browsers, other clients) → the code as
 * before. The consent decision and the login are posted by Sluice's own pages only:
 * `Sec-Fetch-Site: same-origin` as well.
 */
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import type { Db } from '../../src/store/db.ts';
import { build, buildUser, expectError } from '../helper.ts';
import { Browser, formFields } from './browser-jar.ts';

const API = 'https://sluice.example.com';
const CONSOLE = `${API}/console/`;
const APP = 'https://app.example.com/callback';
const CHALLENGE = s256(randomToken() + randomToken());

/** Fetch Metadata as Chromium sends it for a top-level navigation from a page of `site`. */
const navigation = (site = 'same-origin') => ({ 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': site, 'sec-fetch-user': '?1' });
/** Fetch Metadata of a request a page script or a frame makes (the attack). */
const SCRIPTED: [string, Record<string, string>, string][] = [
  ['fetch()', { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' }, 'Sec-Fetch-Mode'],
  ["fetch() from a sandboxed page (origin 'null')", { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'cross-site' }, 'Sec-Fetch-Mode'],
  ["fetch({mode: 'no-cors'})", { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' }, 'Sec-Fetch-Mode'],
  ["fetch({mode: 'same-origin'})", { 'sec-fetch-mode': 'same-origin', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' }, 'Sec-Fetch-Mode'],
  ['<img>', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image', 'sec-fetch-site': 'same-origin' }, 'Sec-Fetch-Mode'],
  ['<iframe>', { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'same-origin' }, 'Sec-Fetch-Dest'],
  ['<object>', { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'object', 'sec-fetch-site': 'cross-site' }, 'Sec-Fetch-Dest'],
];

const authorize = (clientId: string, redirectUri: string, path = '/v1/authorize') =>
  `${path}?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 's1', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;

const codeCount = async (db: Db) => Number((await db.selectFrom('authorizationCodes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** A server with a user signed in to the browser `jar` through the login form, as a browser does. */
async function signedIn() {
  const ctx = await build({ API_URL: API, AUTH_URL: API, QUEUE_URL: API });
  const user = await buildUser(ctx.db, { name: 'User B' });
  const browser = new Browser(ctx.app);
  const login = await browser.get(authorize('sluice-console', CONSOLE), navigation('none'));
  expect(login.statusCode, login.body).toBe(200);
  const posted = await browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username: user.username, password: user.password }, navigation());
  expect(posted.statusCode, posted.body).toBe(303);
  expect(browser.jar.has('sluice_session')).toBe(true);
  return { ...ctx, user, browser };
}

/** The refusal: the error object naming `header`, no redirect, and no code anywhere in the answer. */
function expectRefused(res: LightMyRequestResponse, header: string) {
  expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: header });
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['cache-control']).toBe('no-store');
  expect(`${JSON.stringify(res.headers)}\n${res.body}`).not.toMatch(/code=/);
}

describe('GET /v1/authorize with a signed-in session, for the console (no consent page)', () => {
  for (const path of ['/v1/authorize', '/v1/oauth/authorize']) {
    it(`refuses a page script's or a frame's request on ${path}: 403, no code issued`, async () => {
      const { db, browser } = await signedIn();
      const before = await codeCount(db);
      for (const [what, headers, header] of SCRIPTED) {
        const res = await browser.get(authorize('sluice-console', CONSOLE, path), headers);
        expect(res.statusCode, what).toBe(403);
        expectRefused(res, header);
      }
      expect(await codeCount(db)).toBe(before);
    });
  }

  it('still redirects a top-level navigation with a code, from any site, and a request without Fetch Metadata', async () => {
    const { db, browser } = await signedIn();
    const before = await codeCount(db);
    const cases: [string, Record<string, string>][] = [
      ['typed in the address bar', navigation('none')],
      ['a link on the console', navigation('same-origin')],
      ['a link on another site', navigation('cross-site')],
      ['an older browser or another client', {}],
      ['only Sec-Fetch-Site (no mode, no destination)', { 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [what, headers] of cases) {
      const res = await browser.get(authorize('sluice-console', CONSOLE), headers);
      expect(res.statusCode, what).toBe(302);
      expect(res.headers.location, what).toMatch(/^https:\/\/sluice\.example\.com\/console\/\?code=[\w-]+&state=s1$/);
    }
    expect(await codeCount(db)).toBe(before + cases.length);
  });

  it('refuses a scripted request before anything else: no login page, no error redirect', async () => {
    const ctx = await build({ API_URL: API, AUTH_URL: API, QUEUE_URL: API });
    const browser = new Browser(ctx.app);
    const fetchHeaders = SCRIPTED[0]![1];
    expectRefused(await browser.get(authorize('sluice-console', CONSOLE), fetchHeaders), 'Sec-Fetch-Mode');
    const bad = `/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sluice-console', redirect_uri: CONSOLE })}`; // no challenge
    expectRefused(await browser.get(bad, fetchHeaders), 'Sec-Fetch-Mode');
    // the same request as a navigation goes back with error=invalid_request, as before
    const navigated = await browser.get(bad, navigation());
    expect(navigated.statusCode).toBe(302);
    expect(navigated.headers.location).toMatch(/error=invalid_request/);
  });
});

describe('POST /v1/authorize (consent) and POST /v1/login: top-level form posts of this origin only', () => {
  async function withClient() {
    const s = await signedIn();
    const clientId = randomToken().slice(0, 24);
    await createConsumer(s.db, { type: 'client', name: 'Moderation Desk', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [APP] });
    const consent = await s.browser.get(authorize(clientId, APP), navigation('cross-site'));
    expect(consent.statusCode, consent.body).toBe(200);
    expect(consent.body).toContain('name="decision"');
    return { ...s, form: { ...formFields(consent.body, '/v1/authorize'), decision: 'allow' } };
  }

  it("refuses the consent decision posted by a script or another site's form: 403, no code", async () => {
    const { db, browser, form } = await withClient();
    const before = await codeCount(db);
    for (const [what, headers, header] of SCRIPTED) {
      const res = await browser.post('/v1/authorize', form, headers);
      expect(res.statusCode, what).toBe(403);
      expectRefused(res, header);
    }
    expectRefused(await browser.post('/v1/authorize', form, navigation('cross-site')), 'Sec-Fetch-Site');
    expectRefused(await browser.post('/v1/authorize', form, navigation('same-site')), 'Sec-Fetch-Site');
    expect(await codeCount(db)).toBe(before);
  });

  it('accepts the consent form posted from the consent page, and without Fetch Metadata', async () => {
    const { db, browser, form } = await withClient();
    const before = await codeCount(db);
    for (const headers of [navigation('same-origin'), {}]) {
      const res = await browser.post('/v1/authorize', form, headers);
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toMatch(/^https:\/\/app\.example\.com\/callback\?code=[\w-]+&state=s1$/);
    }
    expect(await codeCount(db)).toBe(before + 2);
  });

  it('refuses a login posted by a script or another site: 403, no session', async () => {
    const ctx = await build({ API_URL: API, AUTH_URL: API, QUEUE_URL: API });
    const user = await buildUser(ctx.db, { name: 'User B' });
    const browser = new Browser(ctx.app);
    const login = await browser.get(authorize('sluice-console', CONSOLE), navigation('none'));
    const form = { ...formFields(login.body, '/v1/login'), username: user.username, password: user.password };
    for (const [what, headers, header] of [...SCRIPTED, ['a form on another site', navigation('cross-site'), 'Sec-Fetch-Site'] as const]) {
      const res = await browser.post('/v1/login', form, headers);
      expect(res.statusCode, what).toBe(403);
      expectRefused(res, header);
      expect(browser.jar.has('sluice_session'), what).toBe(false);
    }
    const ok = await browser.post('/v1/login', form, navigation('same-origin'));
    expect(ok.statusCode, ok.body).toBe(303);
    expect(browser.jar.has('sluice_session')).toBe(true);
  });
});
