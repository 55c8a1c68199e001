/**
 * Sign-in through an external OpenID Connect provider (docs/api.md#browser-sign-in,
 * docs/configuration.md#openid-connect-sign-in), beside the password form, when OIDC_ISSUER,
 * OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set (otherwise both routes answer a 404 page):
 *
 *   POST /v1/login/oidc            the login page's second form (CSRF token and the fields of the
 *                                  `/v1/authorize` request) → 303 to the provider's authorization
 *                                  endpoint: code flow (OpenID Connect Core 1.0 §3.1) with PKCE
 *                                  S256 (RFC 7636), `state` and `nonce`, scope `openid email`
 *   GET  /v1/login/oidc/callback   the provider's redirect back (`OIDC_CALLBACK_PATH` on AUTH_URL,
 *                                  the redirect URI the operator registers) → the session cookie
 *                                  → 303 to /v1/authorize, exactly as the password form ends
 *
 * The protocol is `openid-client`'s (discovery at the first use, within `DISCOVERY_TIMEOUT_S`
 * seconds, and again after a failure; the code exchange; the ID token's signature, `iss`, `aud`,
 * `nonce` and times; RFC 9207's `iss` on the redirect). The flow is kept in the database
 * (`store/oidc-sign-ins.ts`) for `FLOW_TTL_MS` under the SHA-256 of its 256-bit state and of a
 * 256-bit binding that only the starting browser holds (a cookie `sluice_oidc_<16 hex>`, HttpOnly,
 * SameSite=Lax so that it comes back on the provider's top-level redirect, Path the callback's,
 * Secure on an https AUTH_URL), and taken once: a callback with another browser's state, a
 * tampered or replayed state finds nothing (RFC 9700 §4.7.1, login CSRF).
 *
 * The user is the local user whose e-mail address equals (case-insensitively) the `email` claim
 * of the ID token (or, when the ID token has none, of the UserInfo response), which must come with
 * `email_verified: true`; none → a 403 page, nobody is created (invitations create users). No
 * second factor is asked: the provider did its own. Every callback that does not end signed in
 * counts as a failed sign-in of its address group (`../rate-limit.ts`, not about a secret), except
 * when the provider could not be reached (502 page, not counted); once delayed → 429 page.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { Config, OidcSettings } from '../../config.ts';
import { rateLimitError } from '../../errors.ts';
import { findUsersByEmail } from '../../store/consumers.ts';
import type { Db } from '../../store/db.ts';
import { saveOidcSignIn, takeOidcSignIn } from '../../store/oidc-sign-ins.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { fields } from '../grants/grant.ts';
import type { FailureLimiter } from '../rate-limit.ts';
import { schemas } from '../schema.ts';
import { type AuthorizationRequest, hiddenFields } from './request.ts';
import { sendPage } from './render.ts';
import { completeSignIn, secureCookies } from './session.ts';

/** The path of the redirect URI on AUTH_URL (docs/configuration.md#openid-connect-sign-in). */
export const OIDC_CALLBACK_PATH = '/v1/login/oidc/callback';
/** How long a started sign-in may take at the provider, ms. */
export const FLOW_TTL_MS = 10 * 60_000;
/** The time limit of each request to the provider (discovery, token, UserInfo), s. */
export const DISCOVERY_TIMEOUT_S = 10;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The key a flow is kept under: the SHA-256 of its state and its browser's binding. */
const flowKey = (state: string, binding: string) => sha256(`${state}\n${binding}`);
/** The binding cookie's name, one per flow so that sign-ins in two tabs do not clash. */
const bindingCookie = (state: string) => `sluice_oidc_${sha256(state).slice(0, 16)}`;

/** A sign-in that stops with a page: its status, title and message. */
class Refusal extends Error {
  readonly status: number;
  readonly title: string;
  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

/**
 * Whether an error of openid-client means the provider could not be reached or answered with
 * something other than OAuth (a network failure is a TypeError; timeouts and non-conforming
 * responses are ClientErrors with these codes).
 */
function unreachable(error: unknown): boolean {
  if (error instanceof TypeError) return true;
  const code = (error as { code?: unknown }).code;
  return error instanceof client.ClientError && ['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON'].includes(String(code));
}

/**
 * The discovered provider (OpenID Connect Discovery 1.0), found at the first use and kept; a
 * failed discovery is tried again at the next use. The client authenticates with HTTP Basic
 * (`client_secret_basic`, the default every provider supports, OpenID Connect Core 1.0 §9).
 */
function providerOf(settings: OidcSettings): () => Promise<client.Configuration> {
  let discovered: Promise<client.Configuration> | undefined;
  return () => {
    if (!discovered) {
      const execute = settings.issuer.startsWith('http:') ? [client.allowInsecureRequests] : [];
      const pending = client.discovery(new URL(settings.issuer), settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), { timeout: DISCOVERY_TIMEOUT_S, execute });
      discovered = pending;
      pending.catch(() => {
        if (discovered === pending) discovered = undefined;
      });
    }
    return discovered;
  };
}

type Checked = (params: Record<string, unknown>, reply: FastifyReply, redirectStatus: number) => Promise<AuthorizationRequest | undefined>;

/**
 * Registers the module's two routes on `app`, the sign-in's scope: `checked` checks an
 * authorization request as the login form does (sending the error page or redirect itself),
 * `page` and `form` are the scope's route options (error pages, navigation and CSRF checks).
 */
export function oidcRoutes(
  app: FastifyInstance,
  { db, config, failures, checked, page, form }: { db: Db; config: Config; failures: FailureLimiter; checked: Checked; page: Record<string, unknown>; form: Record<string, unknown> },
): void {
  const settings = config.oidc;
  const provider = settings ? providerOf(settings) : undefined;
  const redirectUri = `${config.authUrl}${OIDC_CALLBACK_PATH}`;
  const name = settings?.name ?? '';
  const cookieOptions = (request: FastifyRequest) => ({ path: OIDC_CALLBACK_PATH, httpOnly: true, sameSite: 'lax' as const, secure: secureCookies(config, request) });
  const refusalPage = (reply: FastifyReply, refusal: Refusal) => sendPage(reply, refusal.status, 'error', { title: refusal.title, message: refusal.message, status: refusal.status });
  const notConfigured = (reply: FastifyReply) =>
    refusalPage(reply, new Refusal(404, 'Not available', 'Sign-in through another provider is not set up on this service. Sign in with your user name and password.'));
  const providerDown = (request: FastifyRequest, error: unknown) => {
    request.log.warn({ err: error }, 'OpenID Connect provider could not be reached');
    return new Refusal(502, `${name} cannot be reached`, `Signing in with ${name} is not possible right now: the provider did not answer. Try again later, or sign in with your user name and password.`);
  };

  app.post('/v1/login/oidc', { ...form, schema: schemas.oidcStart }, async (request, reply) => {
    if (!provider) return notConfigured(reply);
    const authorization = await checked(fields(request.body), reply, 303);
    if (!authorization) return reply;
    let configuration: client.Configuration;
    try {
      configuration = await provider();
    } catch (error) {
      return refusalPage(reply, providerDown(request, error));
    }
    const state = client.randomState();
    const binding = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const now = Date.now();
    await saveOidcSignIn(db, {
      stateHash: flowKey(state, binding),
      codeVerifier,
      nonce,
      authorizationRequest: new URLSearchParams(hiddenFields(authorization)).toString(),
      expiresAt: now + FLOW_TTL_MS,
    }, now);
    const target = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    reply.setCookie(bindingCookie(state), binding, { ...cookieOptions(request), maxAge: FLOW_TTL_MS / 1000 });
    return reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(target.href, 303);
  });

  app.get(OIDC_CALLBACK_PATH, { ...page, schema: schemas.oidcCallback }, async (request, reply) => {
    if (!provider) return notConfigured(reply);
    reply.header('cache-control', 'no-store');
    const attempt = await failures.attempt('oidc', request.ip, { secret: false });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let user: ConsumerRow;
    let authorizationRequest: string;
    try {
      ({ user, authorizationRequest } = await signedInUser(request, reply));
    } catch (error) {
      if (!(error instanceof Refusal)) {
        await attempt.cancelled();
        throw error;
      }
      if (error.status === 502) await attempt.cancelled(); // the provider's trouble, not a failed sign-in
      else await attempt.failed(); // otherwise the claim stands as the failure
      return refusalPage(reply, error);
    }
    await attempt.succeeded();
    const authorization = await checked(Object.fromEntries(new URLSearchParams(authorizationRequest)), reply, 303);
    if (!authorization) return reply;
    return completeSignIn(db, config, request, reply, user, authorization);
  });

  /** The callback's checks in order, each failure a Refusal: state and browser, code exchange and ID token, verified e-mail, local user. */
  async function signedInUser(request: FastifyRequest, reply: FastifyReply): Promise<{ user: ConsumerRow; authorizationRequest: string }> {
    const query = request.query as Record<string, unknown>;
    const state = typeof query.state === 'string' ? query.state : '';
    const cookie = state ? bindingCookie(state) : undefined;
    const binding = cookie ? request.cookies[cookie] : undefined;
    const flow = binding ? await takeOidcSignIn(db, flowKey(state, binding), Date.now()) : undefined;
    if (cookie) reply.clearCookie(cookie, cookieOptions(request));
    if (!flow) {
      throw new Refusal(400, 'This sign-in cannot be completed', `This return from ${name} is unknown, expired or already used, or another browser started it. Go back to the application and sign in again.`);
    }
    let configuration: client.Configuration;
    try {
      configuration = await provider!();
    } catch (error) {
      throw providerDown(request, error);
    }
    const search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const currentUrl = new URL(`${redirectUri}${search}`);
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, { pkceCodeVerifier: flow.codeVerifier, expectedState: state, expectedNonce: flow.nonce, idTokenExpected: true });
      claims = { ...tokens.claims() };
      if (claims.email === undefined) claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, String(claims.sub))) };
    } catch (error) {
      if (unreachable(error)) throw providerDown(request, error);
      if (error instanceof client.AuthorizationResponseError) {
        throw new Refusal(400, `${name} did not sign you in`, `${name} answered: ${error.error}. Go back to the application and sign in again.`);
      }
      request.log.info({ err: error }, 'OpenID Connect sign-in refused');
      throw new Refusal(400, 'This sign-in cannot be completed', `The answer of ${name} could not be verified, so nobody was signed in. Go back to the application and sign in again.`);
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (!email || claims.email_verified !== true) {
      throw new Refusal(400, 'No verified e-mail address', `${name} did not confirm that your e-mail address is verified, so it cannot be matched to an account here. Verify it with ${name}, or sign in with your user name and password.`);
    }
    const users = (await findUsersByEmail(db, email)).filter((row) => !row.disabled);
    if (users.length !== 1) {
      throw new Refusal(403, 'No account for this address', `No account here has the address ${email}${users.length > 1 ? ' alone' : ''}. Sign-in with ${name} does not create accounts: ask your team for an invitation, or sign in with your user name and password.`);
    }
    return { user: users[0]!, authorizationRequest: flow.authorizationRequest };
  }
}
