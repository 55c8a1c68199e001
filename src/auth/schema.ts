/**
 * Route schemas of the Authorization API (docs/api.md#authorization-api) for its OpenAPI
 * description. Every request schema here is `handlerValidated`: the token and revocation
 * endpoints check their JSON or form bodies themselves and answer RFC 6749 §5.2 errors, and the
 * sign-in pages check their parameters in `login/request.ts` and answer with pages or redirects,
 * so Fastify must not reject or reshape anything before them.
 */
import { Type } from 'typebox';
import { errorResponses, noBody, ref, type Security, textResponse, TOKEN_SECURITY } from '../http/openapi.ts';
import { handlerValidated } from '../http/validate.ts';
import { MAX_PASSWORD, MIN_PASSWORD } from './secrets.ts';

const FORM_OR_JSON = ['application/json', 'application/x-www-form-urlencoded'];
/** HTTP Basic, or client_id (+ client_secret) in the body. */
const BASIC_OR_BODY: Security = [{ basic: [] }, {}];
const tags = ['authorization'];

const TokenRequest = Type.Object({
  grant_type: Type.String({ enum: ['client_credentials', 'refresh_token', 'authorization_code'] }),
  refresh_token: Type.Optional(Type.String({ description: 'grant_type refresh_token' })),
  code: Type.Optional(Type.String({ description: 'grant_type authorization_code' })),
  redirect_uri: Type.Optional(Type.String({ description: 'grant_type authorization_code' })),
  code_verifier: Type.Optional(Type.String({ description: 'grant_type authorization_code (PKCE, RFC 7636)' })),
  client_id: Type.Optional(Type.String({ description: 'Instead of HTTP Basic (public clients; RFC 6749 §2.3.1)' })),
  client_secret: Type.Optional(Type.String({ description: 'Instead of HTTP Basic (RFC 6749 §2.3.1)' })),
  scope: Type.Optional(Type.String({ description: 'client_credentials, refresh_token: space-separated scopes (RFC 6749 §3.3); default all the client (or the refresh token) has; a refresh may narrow, never widen' })),
});

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.String({ enum: ['Bearer'] }),
  expires_in: Type.Integer({ description: 'Seconds' }),
  refresh_token: Type.Optional(Type.String({ description: 'Machine clients only' })),
  scope: Type.String({ description: "The token's scope, space-separated (RFC 6749 §5.1; docs/api.md#roles-and-scopes)" }),
}, { description: 'Tokens issued (Cache-Control: no-store)' });

const RevokeRequest = Type.Object({
  token: Type.String({ description: 'An access or refresh token of the client (RFC 7009)' }),
  token_type_hint: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});

const TokenQuery = Type.Object({ access_token: Type.Optional(Type.String({ description: 'Or Authorization: Bearer' })) });

const AuthorizeQuery = Type.Object({
  response_type: Type.String({ enum: ['token', 'code'] }),
  client_id: Type.String(),
  redirect_uri: Type.String(),
  state: Type.Optional(Type.String()),
  code_challenge: Type.Optional(Type.String({ description: 'response_type code: S256 challenge (PKCE)' })),
  code_challenge_method: Type.Optional(Type.String({ enum: ['S256'] })),
});

const signInForm = (extra: Parameters<typeof Type.Object>[0]) =>
  handlerValidated(Type.Object({ ...AuthorizeQuery.properties, ...extra, _csrf: Type.String({ description: 'The CSRF token of the form' }) }));

/** A page of the sign-in (HTML). */
export const page = (description: string) => textResponse('text/html', description);
/** An error of the sign-in pages: a page, or the error object for a client that accepts only JSON. */
export const pageError = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: ref('ErrorObject') } },
});
/** A redirect of the sign-in pages (no body). */
export const redirect = (description: string) => noBody(description);

export const schemas = {
  token: {
    tags,
    summary: 'Issue tokens (client_credentials, refresh_token, authorization_code)',
    security: BASIC_OR_BODY,
    consumes: FORM_OR_JSON,
    body: handlerValidated(TokenRequest),
    response: { 200: TokenResponse, ...errorResponses(400, 401, 413, 429) },
  },
  revoke: {
    tags,
    summary: 'Revoke a token (RFC 7009)',
    security: BASIC_OR_BODY,
    consumes: FORM_OR_JSON,
    body: handlerValidated(RevokeRequest),
    response: { 200: noBody('Revoked, or unknown (RFC 7009 §2.2)'), ...errorResponses(400, 401, 413, 429) },
  },
  tokenInfo: {
    tags,
    summary: 'Token information',
    security: TOKEN_SECURITY,
    querystring: handlerValidated(TokenQuery),
    response: { 200: ref('TokenInfo', 'The token inspected'), ...errorResponses(401) },
  },
  me: {
    tags,
    summary: 'Consumer details',
    security: TOKEN_SECURITY,
    querystring: handlerValidated(TokenQuery),
    response: { 200: ref('ConsumerDetails', 'The consumer the token belongs to'), ...errorResponses(401) },
  },
  showAuthorize: {
    tags,
    summary: 'Start the implicit or code+PKCE grant: login page, or consent page when signed in',
    querystring: handlerValidated(AuthorizeQuery),
    response: {
      200: page('The login page, or the consent page'),
      302: redirect('Error redirect to redirect_uri once it is trusted'),
      400: pageError('Error page: unknown client or redirect_uri (never a redirect); the error object with Accept: application/json'),
      403: ref('ErrorObject', 'Not a top-level navigation (Fetch Metadata Sec-Fetch-Mode / Sec-Fetch-Dest): no code, no redirect'),
    },
  },
  decide: {
    tags,
    summary: 'The consent decision (decision=allow|deny)',
    consumes: ['application/x-www-form-urlencoded'],
    body: signInForm({ decision: Type.String({ enum: ['allow', 'deny'] }) }),
    response: {
      200: page('The login page when the session ended'),
      303: redirect('To redirect_uri with the token or code (allow) or error=access_denied (deny)'),
      400: pageError('Error page'),
      403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
      415: pageError('Error page: the body is not a form'),
    },
  },
  login: {
    tags,
    summary: 'Sign in with user name and password',
    consumes: ['application/x-www-form-urlencoded'],
    body: signInForm({ username: Type.String(), password: Type.String() }),
    response: {
      303: redirect('Signed in: back to /v1/authorize'),
      400: pageError('The login page again with an error, or an error page'),
      403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
      415: pageError('Error page: the body is not a form'),
      429: pageError('Too many failed sign-ins; see Retry-After'),
    },
  },
  logout: {
    tags,
    summary: 'End the sign-in session',
    consumes: ['application/x-www-form-urlencoded'],
    body: signInForm({}),
    response: {
      303: redirect('Back to /v1/authorize'),
      400: pageError('Error page'),
      403: pageError('Error page: missing or wrong CSRF token'),
      415: pageError('Error page: the body is not a form'),
    },
  },
  clientLogout: {
    tags,
    summary: 'Sign out of a browser application: revoke its token and end the sign-in session',
    description:
      'A top-level form post from the application (e.g. the console). `token` (an access token the client got for the signed-in user, ' +
      'even one already revoked or expired) proves the request comes from that application: only then is the token revoked (RFC 7009) ' +
      'and the sign-in session cookie ended, so the next sign-in asks for the password. The browser then goes to ' +
      '`post_logout_redirect_uri`, which must be registered for the client.',
    consumes: ['application/x-www-form-urlencoded'],
    body: handlerValidated(
      Type.Object({
        client_id: Type.String(),
        token: Type.String({ description: 'An access token issued to the client for the signed-in user' }),
        post_logout_redirect_uri: Type.String({ description: 'A redirect URI registered for the client' }),
      }),
    ),
    response: {
      303: redirect('Signed out (when the token proves it): to post_logout_redirect_uri'),
      400: pageError('Error page: unknown client or unregistered post_logout_redirect_uri'),
      415: pageError('Error page: the body is not a form'),
    },
  },
  oidcStart: {
    tags,
    summary: 'Sign in through the OpenID Connect provider (OIDC_ISSUER): to its authorization endpoint',
    description: 'The login page\'s second form, shown when the provider is configured (docs/api.md#browser-sign-in). 404 when it is not.',
    consumes: ['application/x-www-form-urlencoded'],
    body: signInForm({}),
    response: {
      303: redirect("To the provider's authorization endpoint (code flow with PKCE, state and nonce)"),
      400: pageError('Error page'),
      403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
      404: pageError('Error page: no OpenID Connect provider is configured'),
      415: pageError('Error page: the body is not a form'),
      502: pageError('Error page: the provider could not be reached (discovery failed)'),
    },
  },
  oidcCallback: {
    tags,
    summary: "The OpenID Connect provider's redirect back: sign in the user with the verified e-mail address",
    querystring: handlerValidated(
      Type.Object({
        code: Type.Optional(Type.String()),
        state: Type.Optional(Type.String()),
        iss: Type.Optional(Type.String({ description: 'RFC 9207' })),
        error: Type.Optional(Type.String()),
        error_description: Type.Optional(Type.String()),
      }),
    ),
    response: {
      303: redirect('Signed in: back to /v1/authorize'),
      400: pageError('Error page: unknown, used or expired state, another browser, a refused or unverifiable answer, no verified e-mail'),
      403: pageError('Error page: no account has this e-mail address; the error object when not a top-level navigation (Fetch Metadata)'),
      404: pageError('Error page: no OpenID Connect provider is configured'),
      429: pageError('Too many failed sign-ins from this address; see Retry-After'),
      502: pageError('Error page: the provider could not be reached'),
    },
  },
  stylesheet: {
    tags,
    summary: 'The stylesheet of the sign-in pages',
    response: { 200: textResponse('text/css', 'The stylesheet') },
  },
};

const InvitationParams = handlerValidated(Type.Object({ token: Type.String({ description: "The invitation link's token" }) }));

/** The invitee's page (login/invitation.ts, docs/api.md#accepting-an-invitation). */
export const invitationSchemas = {
  show: {
    tags,
    summary: "An invitation's page: choose a user name and a password",
    params: InvitationParams,
    response: {
      200: page('The page with the form'),
      403: ref('ErrorObject', 'Not a top-level navigation (Fetch Metadata Sec-Fetch-Mode / Sec-Fetch-Dest)'),
      404: pageError('Error page: no invitation has this link'),
      410: pageError('Error page: the invitation was used, withdrawn or has expired'),
    },
  },
  accept: {
    tags,
    summary: 'Accept an invitation: create the user, grant the role, sign in, go to the console',
    consumes: ['application/x-www-form-urlencoded'],
    params: InvitationParams,
    body: handlerValidated(Type.Object({ username: Type.String(), password: Type.String({ minLength: MIN_PASSWORD, maxLength: MAX_PASSWORD }), _csrf: Type.String({ description: 'The CSRF token of the form' }) })),
    response: {
      303: redirect('Joined and signed in: to the console'),
      400: pageError('The form again with an error (user name taken, password too short); nothing created'),
      403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
      404: pageError('Error page: no invitation has this link'),
      410: pageError('Error page: the invitation was used, withdrawn or has expired; nothing created'),
      415: pageError('Error page: the body is not a form'),
    },
  },
};

/** The second step of a sign-in (login/two-factor.ts, docs/api.md#two-factor-sign-in). */
export const twoFactorLoginSchema = {
  tags,
  summary: 'Sign in, second step: the code of the authenticator app or a recovery code (after the password, with the step\'s cookie)',
  consumes: ['application/x-www-form-urlencoded'],
  body: signInForm({ code: Type.String({ description: 'a 6-digit TOTP code, or a recovery code' }) }),
  response: {
    303: redirect('Signed in: back to /v1/authorize'),
    400: pageError('The code page again with an error; or the login page when the step expired, was used or took too many wrong codes'),
    403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
    415: pageError('Error page: the body is not a form'),
    429: pageError('Too many failed sign-ins; see Retry-After'),
  },
};

/** The body of a password change (docs/api.md#change-password): the rules of `admin user create` and the invitation page. */
export const PasswordChange = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD, description: "The user's password now" }),
  newPassword: Type.String({ minLength: MIN_PASSWORD, maxLength: MAX_PASSWORD, description: `${MIN_PASSWORD} to ${MAX_PASSWORD} characters, not the current one` }),
});

const SignInsEnded = Type.Object(
  {
    sessionsEnded: Type.Integer({ minimum: 0, description: 'browser sign-in sessions ended' }),
    tokensRevoked: Type.Integer({ minimum: 0, description: 'access and refresh tokens revoked' }),
  },
  { description: 'What was ended (Cache-Control: no-store)' },
);

/** The signed-in consumer's own account (account.ts, docs/api.md#account). */
export const accountSchemas = {
  password: {
    tags,
    summary: "Change the signed-in user's password; every other session and token of the user ends",
    security: TOKEN_SECURITY,
    body: handlerValidated(PasswordChange),
    response: { 200: SignInsEnded, ...errorResponses(400, 401, 403, 413, 415, 429) },
  },
  logoutAll: {
    tags,
    summary: 'Sign out everywhere: every session and token of the calling consumer ends, this one included',
    security: TOKEN_SECURITY,
    response: { 200: SignInsEnded, ...errorResponses(401) },
  },
};
