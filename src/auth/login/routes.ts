/**
 * The browser sign-in (docs/api.md#browser-sign-in), registered in its own Fastify scope with
 * cookies and CSRF protection:
 *
 *   GET  /v1/authorize, /v1/oauth/authorize   check the request; login page, or consent page when signed in
 *                                             (the console, `first-party.ts`: straight back with a code)
 *   POST /v1/login                            username + password → session cookie → back to authorize
 *                                             (with two-factor sign-in on: the code page first, two-factor.ts)
 *   POST /v1/login/two-factor                 the code → session cookie → back to authorize (two-factor.ts)
 *   POST /v1/authorize, /v1/oauth/authorize   the consent decision (`decision=allow|deny`) → redirect
 *   POST /v1/logout                           end the session → back to the login page
 *   POST /v1/oauth/logout                     an application signs its user out: revoke + end the session
 *   GET  /v1/assets/sign-in.css               the pages' stylesheet
 *   GET|POST /v1/invitations/{token}          an invitee joins a team (invitation.ts)
 *   POST /v1/login/oidc, GET /v1/login/oidc/callback   sign-in through the OpenID Connect provider (oidc.ts)
 *   GET|POST /v1/password-reset/{token}       a member sets a new password (password-reset.ts)
 *
 * Authorize (GET and POST) and login answer top-level navigations only (`navigation.ts`, Fetch
 * Metadata): a script's request or a frame → 403 error object, no code, no redirect.
 * Every form carries a CSRF token (@fastify/csrf-protection, secret in an HttpOnly cookie):
 * missing or wrong → 403 and nothing happens. Failed sign-ins count against the user name across
 * all addresses and against the user name and address group (../rate-limit.ts,
 * docs/api.md#browser-sign-in): once delayed → 429 with Retry-After, the password not checked. Errors are pages (or the JSON error object for a
 * client that asks for JSON only); once the redirect URI is trusted, protocol errors go back to
 * the client instead (`request.ts`).
 */
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { forbiddenError, rateLimitError, validationError, VALIDATION_CODES } from '../../errors.ts';
import { send, toApiError } from '../../http/errors.ts';
import type { Db } from '../../store/db.ts';
import { insertCode } from '../../store/codes.ts';
import { findClient, findUser, redirectUrisOf } from '../../store/consumers.ts';
import { findToken } from '../../store/tokens.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { resolveRedirectUris, skipsConsent } from '../../first-party.ts';
import { CODE_TTL_MS } from '../grants/authorization-code.ts';
import { fields } from '../grants/grant.ts';
import { schemas } from '../schema.ts';
import type { FailureLimiter } from '../rate-limit.ts';
import { tokenHash } from '../../store/tokens.ts';
import { hashSecret, randomToken, verifySecret } from '../secrets.ts';
import { issueTokens, revokeIssued } from '../tokens.ts';
import { type AuthorizationRequest, checkAuthorizationRequest, hiddenFields } from './request.ts';
import { topLevelNavigation } from './navigation.ts';
import { errorRedirect, redirectWith } from './redirect.ts';
import { sendPage, STYLESHEET, STYLESHEET_PATH } from './render.ts';
import { completeSignIn, endSession, sessionUser } from './session.ts';
import { invitationRoutes } from './invitation.ts';
import { oidcRoutes } from './oidc.ts';
import { needsSecondStep, secondStepRoutes, startSecondStep } from './two-factor.ts';
import type { TwoFactorClock } from '../two-factor.ts';
import { passwordResetRoutes } from './password-reset.ts';

const TITLES: Record<number, string> = { 400: 'This request cannot be completed', 403: 'This form has expired', 429: 'Too many attempts', 500: 'Something went wrong' };

function text(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  return typeof value === 'string' ? value : '';
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** Errors of the sign-in routes as a page (or the error object when the client asks for JSON). */
function pageErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const apiError = error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN'
    ? forbiddenError('This form has expired or did not come from this site. Go back, reload the page and try again.', '_csrf')
    : toApiError(error);
  if (apiError.status >= 500) request.log.error({ err: error }, 'sign-in request failed');
  if (wantsJson(request)) return send(reply, request, apiError);
  reply.header('x-request-id', request.id).headers(apiError.headers);
  return sendPage(reply, apiError.status, 'error', {
    title: TITLES[apiError.status] ?? TITLES[400],
    message: apiError.entries[0]?.message,
    status: apiError.status,
    requestId: request.id,
    retryAfter: apiError.headers['retry-after'],
  });
}

/** "1 hour", "5 minutes", "30 seconds": the access token lifetime for the consent page. */
function lifetime(seconds: number): string {
  const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** What the consent page names as the destination: the origin, or the scheme of an app URI. */
function originOf(uri: string): string {
  const url = new URL(uri);
  return url.origin !== 'null' ? url.origin : url.protocol;
}

let dummyHash: Promise<string> | undefined;
/** A hash to verify against when the user is unknown, so both cases take the same time. */
function decoyHash(): Promise<string> {
  return (dummyHash ??= hashSecret(randomToken()));
}

/** Registers the sign-in routes of the module's table on `app`, with cookies and CSRF protection in their own scope. */
export async function loginRoutes(app: FastifyInstance, { db, config, failures, twoFactorClock }: { db: Db; config: Config; failures: FailureLimiter; twoFactorClock: TwoFactorClock }): Promise<void> {
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: 'sluice_csrf',
    cookieOpts: { path: '/v1', httpOnly: true, sameSite: 'lax', secure: config.authUrl.startsWith('https:') },
  });
  const page = { errorHandler: pageErrors };
  const form = { errorHandler: pageErrors, preHandler: app.csrfProtection };
  // Codes and tokens go to top-level navigations only (navigation.ts): never to a page script.
  const navigation = { onRequest: topLevelNavigation({ sameOrigin: false }) };
  const ownForm = { onRequest: topLevelNavigation({ sameOrigin: true }) };

  const loginPage = (reply: FastifyReply, status: number, request: AuthorizationRequest, extra: { username?: string; error?: string } = {}) =>
    sendPage(reply, status, 'login', {
      clientName: request.client.name,
      asksConsent: !(request.responseType === 'code' && skipsConsent(request.client)),
      fields: hiddenFields(request),
      csrf: reply.generateCsrf(),
      username: extra.username ?? '',
      error: extra.error,
      oidcName: config.oidc?.name,
    });

  /** The checked request, or the reply already sent (error page or error redirect). */
  async function checked(params: Record<string, unknown>, reply: FastifyReply, redirectStatus: number): Promise<AuthorizationRequest | undefined> {
    const result = await checkAuthorizationRequest(db, config, params);
    if (result.kind === 'ok') return result.request;
    if (result.kind === 'page') sendPage(reply, 400, 'error', { title: result.title, message: result.message, status: 400 });
    else reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(result.location, redirectStatus);
    return undefined;
  }

  async function showAuthorize(request: FastifyRequest, reply: FastifyReply) {
    const authorization = await checked(fields(request.query), reply, 302);
    if (!authorization) return reply;
    const user = await sessionUser(db, request);
    if (!user) return loginPage(reply, 200, authorization);
    // The console (first-party.ts) is part of Sluice: no consent page for it.
    if (authorization.responseType === 'code' && skipsConsent(authorization.client)) return redirectWithCode(reply, authorization, user, 302);
    return sendPage(reply, 200, 'consent', {
      clientName: authorization.client.name,
      userName: user.name,
      username: user.username,
      origin: originOf(authorization.redirectUri),
      lifetime: lifetime(config.tokenTtl),
      fields: hiddenFields(authorization),
      csrf: reply.generateCsrf(),
    });
  }

  async function decide(request: FastifyRequest, reply: FastifyReply) {
    const body = fields(request.body);
    const authorization = await checked(body, reply, 303);
    if (!authorization) return reply;
    const user = await sessionUser(db, request);
    if (!user) return loginPage(reply, 200, authorization);
    const { client, redirectUri, state, responseType } = authorization;
    const decision = body.decision;
    if (decision !== 'allow' && decision !== 'deny') {
      throw validationError([{ propertyName: 'decision', message: 'Choose Allow or Deny.', code: VALIDATION_CODES.enum }]);
    }
    reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    if (decision === 'deny') return reply.redirect(errorRedirect(redirectUri, responseType, 'access_denied', 'The user denied access.', state), 303);
    if (responseType === 'token') {
      const issued = await issueTokens(db, user.id, { ttlSeconds: config.tokenTtl, withRefresh: false, clientId: client.id });
      return reply.redirect(redirectWith(redirectUri, 'token', { access_token: issued.access_token, token_type: 'Bearer', expires_in: String(issued.expires_in), state }), 303);
    }
    return redirectWithCode(reply, authorization, user, 303);
  }

  /** Issues an authorization code for the user and sends the browser back to the client with it. */
  async function redirectWithCode(reply: FastifyReply, authorization: AuthorizationRequest, user: ConsumerRow, status: number) {
    const code = randomToken();
    const now = Date.now();
    await insertCode(db, {
      codeHash: tokenHash(code),
      clientId: authorization.client.id,
      consumerId: user.id,
      redirectUri: authorization.redirectUri,
      codeChallenge: authorization.codeChallenge!,
      family: randomToken(),
      expiresAt: now + CODE_TTL_MS,
      used: 0,
      createdAt: now,
    });
    reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    return reply.redirect(redirectWith(authorization.redirectUri, 'code', { code, state: authorization.state }), status);
  }

  for (const path of ['/v1/authorize', '/v1/oauth/authorize']) {
    app.get(path, { ...page, ...navigation, schema: schemas.showAuthorize }, showAuthorize);
    app.post(path, { ...form, ...ownForm, schema: schemas.decide }, decide);
  }

  app.post('/v1/login', { ...form, ...ownForm, schema: schemas.login }, async (request, reply) => {
    const body = fields(request.body);
    const authorization = await checked(body, reply, 303);
    if (!authorization) return reply;
    const username = text(body, 'username').trim();
    const password = text(body, 'password');
    const identity = username.toLowerCase();
    const attempt = await failures.attempt(identity, request.ip, { secret: true });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let user: ConsumerRow | undefined;
    try {
      user = username ? await findUser(db, username) : undefined;
      const matches = await verifySecret(password, user?.passwordHash ?? (await decoyHash()));
      if (!user || !matches || user.disabled || !password) user = undefined;
    } catch (error) {
      await attempt.cancelled();
      throw error;
    }
    if (!user) {
      await attempt.failed(); // the claim stands as the failure
      return loginPage(reply, 400, authorization, { username, error: 'The user name or password is not correct.' });
    }
    await attempt.succeeded();
    // Two-factor sign-in on: the password alone yields no session (two-factor.ts).
    if (await needsSecondStep(db, user)) return startSecondStep(db, config, request, reply, user, authorization);
    return completeSignIn(db, config, request, reply, user, authorization);
  });

  /** Ends a sign-in (session.ts `completeSignIn`): the login session of `user`, then back to authorize. */
  const signIn = (request: FastifyRequest, reply: FastifyReply, user: ConsumerRow, authorization: AuthorizationRequest) =>
    completeSignIn(db, config, request, reply, user, authorization);

  secondStepRoutes(app, {
    db,
    config,
    failures,
    clock: twoFactorClock,
    form: { ...form, ...ownForm },
    checked,
    loginAgain: (reply, authorization, error) => loginPage(reply, 400, authorization, { error }),
    signIn,
  });

  app.post('/v1/logout', { ...form, schema: schemas.logout }, async (request, reply) => {
    await endSession(db, config, request, reply);
    const authorization = await checked(fields(request.body), reply, 303);
    if (!authorization) return reply;
    return reply.redirect(`/v1/authorize?${new URLSearchParams(hiddenFields(authorization))}`, 303);
  });

  // Sign-out of a browser application (the console): the token it holds proves the request is its.
  app.post('/v1/oauth/logout', { ...page, schema: schemas.clientLogout }, async (request, reply) => {
    const body = fields(request.body);
    const client = await findClient(db, text(body, 'client_id'));
    const back = text(body, 'post_logout_redirect_uri');
    if (!client || client.disabled || !resolveRedirectUris(redirectUrisOf(client), config).includes(back)) {
      return sendPage(reply, 400, 'error', { title: 'Unknown application or return address', message: 'Signing out stopped here: the application or its return address is not registered.', status: 400 });
    }
    const row = await findToken(db, tokenHash(text(body, 'token')));
    if (row && row.clientId === client.id) {
      await revokeIssued(db, text(body, 'token'), client.id);
      const user = await sessionUser(db, request);
      if (user && user.id === row.consumerId) await endSession(db, config, request, reply);
    }
    return reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(back, 303);
  });

  // An invitee joins through its link (invitation.ts): a page like this one, with the same checks.
  invitationRoutes(app, { db, config, page: { ...page, ...navigation }, form: { ...form, ...ownForm } });
  // Sign-in through the OpenID Connect provider (oidc.ts), when configured: the login page's second form.
  oidcRoutes(app, { db, config, failures, checked, page: { ...page, ...navigation }, form: { ...form, ...ownForm } });
  // A member sets a new password through an admin's link (password-reset.ts): the same checks.
  passwordResetRoutes(app, { db, config, page: { ...page, ...navigation }, form: { ...form, ...ownForm } });

  app.get(STYLESHEET_PATH, { schema: schemas.stylesheet }, async (_request, reply) =>
    reply.headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }).type('text/css; charset=utf-8').send(STYLESHEET),
  );
}
