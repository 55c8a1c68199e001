/**
 * Authorization server metadata (RFC 8414, src/auth/metadata.ts), and a standard client that
 * configures itself from it: oauth4webapi (a maintained, certified OAuth client library) drives
 * the real server over HTTP on loopback through discovery, client credentials, refresh (reuse
 * refused), the code flow with PKCE (the login and consent forms driven with plain HTTP
 * requests carrying the cookies and CSRF token, as a browser does) and revocation.
 */
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { build, buildClient, buildUser } from '../helper.ts';

const ISSUER = 'https://auth.sluice.test';
const REDIRECT = 'https://app.example.com/callback';
const METADATA = '/.well-known/oauth-authorization-server';

/**
 * The app listening on loopback, and fetch options for oauth4webapi that send what it addresses
 * to ISSUER to that server instead (the issuer's name stays what AUTH_URL says).
 */
async function serve(env: Record<string, string> = {}) {
  const ctx = await build({ AUTH_URL: ISSUER, ...env });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const local = (url: string) => url.replace(/^https:\/\/auth\.sluice\.test(?=\/|$)/, origin);
  const options = {
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: (url: string, init: RequestInit) => fetch(local(url), init),
  };
  return { ...ctx, origin, local, options };
}

/** A tiny cookie jar over real HTTP: what responses set is sent back; redirects are not followed. */
function browser(origin: string) {
  const jar = new Map<string, string>();
  return async (path: string, form?: Record<string, string>) => {
    // undici's request, not fetch: fetch always says `Sec-Fetch-Mode: cors`, which the sign-in
    // pages refuse; a browser's navigation and form submission carry what is set here.
    const res = await request(new URL(path, origin), {
      method: form ? 'POST' : 'GET',
      headers: {
        accept: 'text/html',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
        'sec-fetch-site': form ? 'same-origin' : 'none',
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form && { body: new URLSearchParams(form).toString() }),
    });
    const setCookie = res.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (value === '' || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const location = res.headers.location;
    return { status: res.statusCode, location: typeof location === 'string' ? location : null, body: await res.body.text() };
  };
}

/** The hidden fields of the form whose action is `action`. */
function formFields(html: string, action: string): Record<string, string> {
  const form = html.split(`action="${action}"`)[1]?.split('</form>')[0];
  expect(form, `no form ${action}`).toBeDefined();
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return Object.fromEntries([...form!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]));
}

async function discover(options: oauth.DiscoveryRequestOptions) {
  const issuer = new URL(ISSUER);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }));
}

async function me(app: FastifyInstance, token: string) {
  return app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${token}` } });
}

describe('authorization server metadata (RFC 8414)', () => {
  it('publishes the issuer, endpoints, grant and response types, PKCE and client authentication methods', async () => {
    const { app } = await build({ AUTH_URL: `${ISSUER}/` });
    const res = await app.inject({ method: 'GET', url: METADATA });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/v1/authorize`,
      token_endpoint: `${ISSUER}/v1/oauth/token`,
      revocation_endpoint: `${ISSUER}/v1/oauth/revoke`,
      grant_types_supported: ['authorization_code', 'implicit', 'client_credentials', 'refresh_token'],
      response_types_supported: ['code', 'token'],
      response_modes_supported: ['query', 'fragment'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      scopes_supported: ['queue:read', 'queue:moderate', 'manage:read', 'manage:write', 'credentials', 'team'],
      service_documentation: `${ISSUER}/docs`,
    });
  });

  it('takes the issuer from AUTH_URL, never from the request (a forged Host changes nothing)', async () => {
    const { app } = await build({ AUTH_URL: ISSUER });
    const res = await app.inject({ method: 'GET', url: METADATA, headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(JSON.stringify(res.json())).not.toContain('evil');
    expect(res.json().issuer).toBe(ISSUER);
  });

  it('is also served after the well-known prefix when AUTH_URL has a path (RFC 8414 §3.1)', async () => {
    const { app } = await build({ AUTH_URL: 'https://example.com/auth' });
    const res = await app.inject({ method: 'GET', url: `${METADATA}/auth` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ issuer: 'https://example.com/auth', token_endpoint: 'https://example.com/auth/v1/oauth/token' });
    expect((await app.inject({ method: 'GET', url: `${METADATA}/other` })).statusCode).toBe(404);
  });

  it('announces only S256: a plain PKCE challenge is refused at the authorization endpoint', async () => {
    const { app, db } = await build({ AUTH_URL: ISSUER });
    const clientId = randomToken().slice(0, 24);
    await createConsumer(db, { type: 'client', name: 'SPA', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [REDIRECT] });
    const verifier = oauth.generateRandomCodeVerifier();
    const res = await app.inject({ method: 'GET', url: `/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: verifier, code_challenge_method: 'plain' })}`, headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(302);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });

  it('is documented in /openapi.json', async () => {
    const { app } = await build();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schema = doc.paths[METADATA].get.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['issuer', 'authorization_endpoint', 'token_endpoint', 'revocation_endpoint', 'code_challenge_methods_supported']));
  });
});

describe('a standard OAuth client (oauth4webapi) configured by discovery', () => {
  it('client credentials, refresh (a used refresh token is refused), revocation', async () => {
    const { app, db, options } = await serve();
    const as = await discover(options);
    expect(as.token_endpoint).toBe(`${ISSUER}/v1/oauth/token`);
    const robot = await buildClient(db);
    const client: oauth.Client = { client_id: robot.clientId };
    const auth = oauth.ClientSecretBasic(robot.clientSecret);

    const issued = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, {}, options));
    expect(issued.token_type).toBe('bearer');
    expect(issued.expires_in).toBeGreaterThan(0);
    expect(issued.refresh_token).toEqual(expect.any(String));
    expect((await me(app, issued.access_token)).json()).toMatchObject({ consumer_id: robot.consumer.id });

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, issued.refresh_token!, options));
    expect(refreshed.access_token).not.toBe(issued.access_token);
    expect(refreshed.refresh_token).not.toBe(issued.refresh_token);

    // The used refresh token again: invalid_grant (RFC 6749 §5.2), and the whole family is
    // revoked (reuse detection, RFC 9700 §4.14.2): the token it was exchanged for stops working.
    expect((await me(app, refreshed.access_token)).statusCode).toBe(200);
    const reused = oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, issued.refresh_token!, options));
    await expect(reused).rejects.toBeInstanceOf(oauth.ResponseBodyError);
    await expect(reused).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
    expect((await me(app, refreshed.access_token)).statusCode).toBe(401);
    const afterReuse = oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, options));
    await expect(afterReuse).rejects.toMatchObject({ error: 'invalid_grant' });

    // A wrong secret: 401 with a Basic challenge (RFC 6749 §5.2) and invalid_client in the body.
    const wrong = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic('wrong'), {}, options)).catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = wrong as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause[0]!.scheme).toBe('basic');
    expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });

    // Revocation (RFC 7009) of an access token in use, the secret sent in the body this time.
    const fresh = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, {}, options));
    expect((await me(app, fresh.access_token)).statusCode).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretPost(robot.clientSecret), fresh.access_token, options));
    expect((await me(app, fresh.access_token)).statusCode).toBe(401);
    // Another client cannot revoke a token not its own (RFC 7009 §2.1: answered 200, nothing revoked).
    const other = await buildClient(db, 'other');
    const kept = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, {}, options));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, { client_id: other.clientId }, oauth.ClientSecretBasic(other.clientSecret), kept.access_token, options));
    expect((await me(app, kept.access_token)).statusCode).toBe(200);
  });

  it('the code flow with PKCE through the login and consent forms, then revocation by the public client', async () => {
    const { app, db, origin, local, options } = await serve();
    const as = await discover(options);
    const clientId = randomToken().slice(0, 24);
    await createConsumer(db, { type: 'client', name: 'Moderation Desk', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [REDIRECT] });
    const client: oauth.Client = { client_id: clientId };
    const user = await buildUser(db, { name: 'Mia Moderator' });

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint!);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const go = browser(origin);
    const login = await go(local(authorize.href));
    expect(login.status).toBe(200);
    const signedIn = await go('/v1/login', { ...formFields(login.body, '/v1/login'), username: user.username, password: user.password });
    expect(signedIn.status).toBe(303);
    const consent = await go(signedIn.location!);
    expect(consent.status).toBe(200);
    expect(consent.body).toContain('Moderation Desk');
    const decided = await go('/v1/authorize', { ...formFields(consent.body, '/v1/authorize'), decision: 'allow' });
    expect(decided.status).toBe(303);
    const callback = new URL(decided.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);

    // A forged state is caught by the client.
    expect(() => oauth.validateAuthResponse(as, client, callback, 'another state')).toThrow();
    const params = oauth.validateAuthResponse(as, client, callback, state);

    // The code with the wrong verifier: refused (and the code is then used up).
    const stolen = oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, oauth.generateRandomCodeVerifier(), options));
    await expect(stolen).rejects.toMatchObject({ error: 'invalid_grant' });

    // Once more, through the forms (the session is on: straight to consent), with the right verifier.
    const state2 = oauth.generateRandomState();
    authorize.searchParams.set('state', state2);
    const consent2 = await go(local(authorize.href));
    expect(consent2.body).toContain('name="decision"');
    const decided2 = await go('/v1/authorize', { ...formFields(consent2.body, '/v1/authorize'), decision: 'allow' });
    const params2 = oauth.validateAuthResponse(as, client, new URL(decided2.location!), state2);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params2, REDIRECT, verifier, options));
    expect(tokens.token_type).toBe('bearer');
    expect((await me(app, tokens.access_token)).json()).toMatchObject({ consumer_id: user.consumer.id, consumer_type: 'user' });

    // The public client revokes its token (client authentication method none).
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, options));
    expect((await me(app, tokens.access_token)).statusCode).toBe(401);

    // The code cannot be used twice.
    const again = oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params2, REDIRECT, verifier, options));
    await expect(again).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
