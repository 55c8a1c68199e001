/**
 * A real OpenID Connect provider on 127.0.0.1 for the tests of the OpenID Connect sign-in
 * (docs/api.md#browser-sign-in): `oidc-provider` with one confidential client (HTTP Basic), the
 * accounts given (their `email` and `email_verified` claims, scope `email`), and its development
 * interactions (a login form taking any account id, then a consent form) which `signInAt` drives
 * with fetch and a cookie jar. `tamperIdToken` lets a test play a provider (or a man in the middle)
 * that hands back a validly signed ID token for something else, e.g. another audience.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface Account {
  email?: string;
  email_verified?: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Rewrites the ID token of the next token responses (a compact JWS), or undefined to leave them alone. */
  tamperIdToken: ((payload: Record<string, unknown>) => Record<string, unknown>) | undefined;
  close(): Promise<void>;
}

const KID = 'test-signing-key';

/** `payload` as a compact JWS (RS256) with the provider's key. */
function signJwt(key: KeyObject, payload: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg: 'RS256', kid: KID, typ: 'JWT' })}.${encode(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/**
 * Starts the provider on an ephemeral loopback port, with a client whose redirect URI is
 * `redirectUri`. `idTokenClaims`: the email claims go in the ID token too (else only in UserInfo,
 * the provider's default for scope-requested claims).
 */
export async function startProvider(accounts: Record<string, Account>, redirectUri: string, { idTokenClaims = false } = {}): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientId = 'sluice-test';
  const clientSecret = 'a-client-secret-of-the-test-0123456789';
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic' }],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['cookie-key-of-the-test'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: !idTokenClaims,
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    findAccount: async (_ctx: unknown, sub: string) => (accounts[sub] ? { accountId: sub, claims: async () => ({ sub, ...accounts[sub] }) } : undefined),
  });
  const handle: TestProvider = {
    issuer,
    clientId,
    clientSecret,
    tamperIdToken: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.path === '/token' && handle.tamperIdToken && body && typeof body.id_token === 'string') {
      const payload = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
      ctx.body = { ...body, id_token: signJwt(privateKey, handle.tamperIdToken(payload)) };
    }
  });
  server.on('request', provider.callback());
  return handle;
}

/** A cookie jar for fetch: every cookie set is sent back to the same origin (paths ignored). */
export class FetchJar {
  private readonly cookies = new Map<string, string>();
  /** GET or POST (a form) `url` without following redirects, keeping the cookies. */
  async request(url: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form) : undefined, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/max-age=0|expires=Thu, 01 Jan 1970/i.test(line) || value.join('=') === '') this.cookies.delete(name!.trim());
      else this.cookies.set(name!.trim(), value.join('='));
    }
    return response;
  }
}

/**
 * Follows the provider's pages from `authorizationUrl` as a browser would, signing in as
 * `accountId` and consenting, until the provider redirects off its origin: returns that Location
 * (the client's redirect URI with `code`, `state` and `iss`). At most 10 steps.
 */
export async function signInAt(provider: TestProvider, authorizationUrl: string, accountId: string, jar = new FetchJar()): Promise<string> {
  let url = authorizationUrl;
  for (let step = 0; step < 10; step++) {
    if (!url.startsWith(provider.issuer)) return url;
    const response = await jar.request(url);
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!prompt || !action) throw new Error(`no interaction form at ${url}`);
    const submitted = await jar.request(new URL(action, url).href, prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt });
    if (submitted.status < 300 || submitted.status >= 400) throw new Error(`interaction answered ${submitted.status}`);
    url = new URL(submitted.headers.get('location')!, url).href;
  }
  throw new Error('the provider did not send the browser back within 10 steps');
}
