/**
 * Sluice as an OAuth 2.0 client of the services a contract connects (docs/api.md#connecting-an-account):
 * the authorization request, the code exchange, the refresh grant and other grants (Facebook's
 * `fb_exchange_token`), through oauth4webapi (panva; RFC 6749, RFC 7636 PKCE, RFC 9207 `iss`)
 * rather than hand-written token requests. Every request goes through the `fetch` the caller
 * passes: the collector's guarded fetch (`collect/fetch.ts`: no private addresses, time and size
 * limits), so a user-named Mastodon instance is checked like every outbound request.
 *
 * Errors: `OAuthRefusal` when the service answers with an OAuth error (RFC 6749 §4.1.2.1 in the
 * callback, §5.2 at the token endpoint: `invalid_grant`, `access_denied`, …); anything else (a
 * network failure, a malformed answer) is thrown as it comes (`FetchError`, oauth4webapi's
 * `OperationProcessingError`).
 */
import * as oauth from 'oauth4webapi';

/** What the caller's fetch returns (the shape of `services/connector.ts`'s `SourceResponse`). */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  url: string;
}
/** GET `url`, or the POST `request` asks for, with extra headers. */
export type HttpFetch = (url: string, headers?: Record<string, string>, request?: { method?: 'GET' | 'POST'; body?: string }) => Promise<HttpResponse>;

/** An authorization server and Sluice's client there. */
export interface OAuthEndpoint {
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** RFC 6749 §2.3.1: the secret in an HTTP Basic header, or in the form body. */
  clientAuth: 'basic' | 'post';
  /** The token endpoint omits `token_type` (Threads): a 200 JSON answer without one is read as `bearer`. */
  untypedTokens?: boolean;
}

/** The tokens a grant returned. `expiresAt`: ISO 8601 from `expires_in`, undefined when the token does not expire. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: string;
  scope?: string;
}

/** The service answered with an OAuth error code (`error`), e.g. `access_denied` or `invalid_grant`. */
export class OAuthRefusal extends Error {
  readonly error: string;
  readonly description: string | undefined;
  constructor(error: string, description: string | undefined) {
    super(description ? `${error}: ${description}` : error);
    this.name = 'OAuthRefusal';
    this.error = error;
    this.description = description;
  }
}

/** A random `state`: 256 bits, base64url (the caller keeps only its hash). */
export function newState(): string {
  return oauth.generateRandomCodeVerifier();
}

/** A PKCE code verifier and its S256 challenge (RFC 7636 §4.1, §4.2). */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/**
 * The authorization request URL (RFC 6749 §4.1.1): `response_type=code`, `client_id`,
 * `redirect_uri`, `scope` (joined by `scopeSeparator`, default a space), `state`, the PKCE
 * challenge when given, and `extra` parameters. Parameters already in `authorizeUrl` are kept.
 */
export function authorizationUrl(
  endpoint: Pick<OAuthEndpoint, 'authorizeUrl' | 'clientId'>,
  request: { redirectUri: string; state: string; scopes: readonly string[]; scopeSeparator?: string; challenge?: string; extra?: Readonly<Record<string, string>> },
): string {
  const url = new URL(endpoint.authorizeUrl);
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', endpoint.clientId);
  params.set('redirect_uri', request.redirectUri);
  params.set('scope', request.scopes.join(request.scopeSeparator ?? ' '));
  params.set('state', request.state);
  if (request.challenge) {
    params.set('code_challenge', request.challenge);
    params.set('code_challenge_method', 'S256');
  }
  for (const [name, value] of Object.entries(request.extra ?? {})) params.set(name, value);
  return url.href;
}

function parts(endpoint: OAuthEndpoint, fetch: HttpFetch) {
  // The issuer is the authorization endpoint's origin: a service that names itself in the
  // callback (`iss`, RFC 9207; Google sends https://accounts.google.com) must name that one.
  const as: oauth.AuthorizationServer = { issuer: new URL(endpoint.authorizeUrl).origin, authorization_endpoint: endpoint.authorizeUrl, token_endpoint: endpoint.tokenUrl };
  const client: oauth.Client = { client_id: endpoint.clientId };
  const auth = endpoint.clientAuth === 'basic' ? plainBasic(endpoint.clientSecret) : oauth.ClientSecretPost(endpoint.clientSecret);
  const options = {
    [oauth.customFetch]: adapt(fetch, endpoint.untypedTokens === true),
    // The operator's configured URL (a local fake in tests) or an instance the caller checked.
    [oauth.allowInsecureRequests]: new URL(endpoint.tokenUrl).protocol === 'http:',
  };
  return { as, client, auth, options };
}

/**
 * HTTP Basic client authentication of `client_id:client_secret` as they are. oauth4webapi's
 * `ClientSecretBasic` form-encodes both first (RFC 6749 §2.3.1, so `-` becomes `%2D`), which the
 * services using Basic here do not decode: X and Vimeo document `base64(client_id:client_secret)`
 * (X "OAuth 2.0 Authorization Code Flow with PKCE", confidential clients; Vimeo "Authentication")
 * and their secrets hold `-`, `_`, `+` and `/`.
 */
function plainBasic(clientSecret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    headers.set('authorization', `Basic ${Buffer.from(`${client.client_id}:${clientSecret}`).toString('base64')}`);
  };
}

/** oauth4webapi's fetch, through `fetch`; `untyped`: a 200 JSON object with an access token and no `token_type` gets `bearer`. */
function adapt(fetch: HttpFetch, untyped = false) {
  return async (url: string, init: oauth.CustomFetchOptions<string, unknown>): Promise<Response> => {
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const res = await fetch(url, init.headers, { method: init.method === 'POST' ? 'POST' : 'GET', ...(body === undefined ? {} : { body }) });
    const empty = res.status === 204 || res.status === 304;
    return new Response(empty ? null : Buffer.from(untyped && res.status === 200 ? typed(res.body) : res.body), { status: res.status, headers: res.headers });
  };
}

/** `body` with `token_type: "bearer"` when it is a JSON object with `access_token` and no `token_type`; else as it is. */
function typed(body: Uint8Array): Uint8Array {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return body;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json) || !('access_token' in json) || 'token_type' in json) return body;
  return Buffer.from(JSON.stringify({ ...json, token_type: 'bearer' }));
}

/** The token response as a `TokenSet`, or `OAuthRefusal` for an OAuth error answer. */
async function tokens(run: () => Promise<oauth.TokenEndpointResponse>, now: number): Promise<TokenSet> {
  let response: oauth.TokenEndpointResponse;
  try {
    response = await run();
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) throw new OAuthRefusal(error.error, error.error_description);
    throw error;
  }
  return {
    accessToken: response.access_token,
    ...(response.refresh_token ? { refreshToken: response.refresh_token } : {}),
    ...(typeof response.expires_in === 'number' ? { expiresAt: new Date(now + response.expires_in * 1000).toISOString() } : {}),
    ...(response.scope ? { scope: response.scope } : {}),
  };
}

/**
 * The callback's parameters → the tokens (RFC 6749 §4.1.2, §4.1.3): an `error` in them →
 * `OAuthRefusal` (e.g. `access_denied`); else the code is exchanged at the token endpoint with
 * `redirectUri`, the PKCE `verifier` (when the flow sent a challenge) and the client's secret.
 * The `state` has been checked by the caller.
 */
export async function exchangeCode(endpoint: OAuthEndpoint, fetch: HttpFetch, callback: URLSearchParams, redirectUri: string, verifier: string | null, now: number): Promise<TokenSet> {
  const { as, client, auth, options } = parts(endpoint, fetch);
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, callback, oauth.skipStateCheck);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) throw new OAuthRefusal(error.error, error.error_description);
    throw error;
  }
  return tokens(async () => {
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier ?? oauth.nopkce, options);
    return oauth.processAuthorizationCodeResponse(as, client, response);
  }, now);
}

/** The refresh grant (RFC 6749 §6). A refused refresh token → `OAuthRefusal` `invalid_grant`. */
export async function refreshTokens(endpoint: OAuthEndpoint, fetch: HttpFetch, refreshToken: string, now: number): Promise<TokenSet> {
  const { as, client, auth, options } = parts(endpoint, fetch);
  return tokens(async () => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options)), now);
}

/** Another grant at the token endpoint (RFC 6749 §4.5), e.g. Facebook's `fb_exchange_token`. */
export async function otherGrant(endpoint: OAuthEndpoint, fetch: HttpFetch, grantType: string, parameters: Record<string, string>, now: number): Promise<TokenSet> {
  const { as, client, auth, options } = parts(endpoint, fetch);
  return tokens(async () => oauth.processGenericTokenEndpointResponse(as, client, await oauth.genericTokenEndpointRequest(as, client, auth, grantType, parameters, options)), now);
}
