/**
 * OAuth 2.0 Authorization Server Metadata (RFC 8414): `GET /.well-known/oauth-authorization-server`
 * answers a JSON document with which standard clients configure themselves (discovery).
 *
 * The issuer is `AUTH_URL` (RFC 8414 §2: https, no query or fragment; it is what clients compare
 * the document's `issuer` with, §3.3); the endpoints are the Authorization API's routes under it
 * (docs/api.md). When `AUTH_URL` has a path, the document is also served with that path after
 * the well-known prefix (§3.1: `https://host/.well-known/oauth-authorization-server/<path>`).
 *
 * What it announces is what the routes do: response types `code` (with PKCE, S256 only, RFC 7636;
 * `plain` is refused, RFC 9700 §2.1.1) and `token` (implicit, docs/api.md#browser-sign-in); grants
 * authorization_code, implicit, client_credentials and refresh_token; client authentication by
 * HTTP Basic or in the body for confidential clients and `none` for public ones, at the token
 * and revocation endpoints alike (client-auth.ts). `scopes_supported`: the scopes of
 * docs/api.md#roles-and-scopes, which narrow a token within its consumer's role on a contract.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config.ts';
import { SCOPES } from '../store/tokens.ts';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

const Metadata = Type.Object({
  issuer: Type.String({ description: 'AUTH_URL' }),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  response_modes_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
}, { description: 'Authorization server metadata (RFC 8414 §2)' });

/** The metadata document for `authUrl` (no trailing slash, as config.ts gives it). Pure. */
export function authorizationServerMetadata(authUrl: string) {
  return {
    issuer: authUrl,
    authorization_endpoint: `${authUrl}/v1/authorize`,
    token_endpoint: `${authUrl}/v1/oauth/token`,
    revocation_endpoint: `${authUrl}/v1/oauth/revoke`,
    grant_types_supported: ['authorization_code', 'implicit', 'client_credentials', 'refresh_token'],
    response_types_supported: ['code', 'token'],
    response_modes_supported: ['query', 'fragment'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: [...SCOPES],
    service_documentation: `${authUrl}/docs`,
  };
}

/** Registers the metadata route(s) on `app`. */
export function metadataRoutes(app: FastifyInstance, { config }: { config: Config }): void {
  const document = authorizationServerMetadata(config.authUrl);
  const path = new URL(config.authUrl).pathname.replace(/\/+$/, '');
  const schema = {
    tags: ['authorization'],
    summary: 'Authorization server metadata (RFC 8414)',
    response: { 200: Metadata },
  };
  for (const url of path ? [METADATA_PATH, `${METADATA_PATH}${path}`] : [METADATA_PATH]) {
    // One operation (http/permissions.ts) whichever of the two paths serves it.
    app.get(url, { schema, config: { operation: `GET ${METADATA_PATH}` } }, async (_request, reply) => reply.header('cache-control', 'public, max-age=3600').send(document));
  }
}
