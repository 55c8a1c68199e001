/**
 * Token-endpoint errors (docs/api.md#token-endpoint, RFC 6749 §5.2): the error object
 * (docs/api.md#errors) with the RFC's `error` and `error_description` in the same body.
 * `invalid_client` is 401 with `WWW-Authenticate: Basic` (RFC 6749 §5.2); the others are 400.
 */
import { ApiError, VALIDATION_CODES } from '../errors.ts';

function oauthError(status: number, error: string, description: string, entry: { name: string; code: number; propertyName?: string }, headers?: Record<string, string>): ApiError {
  return new ApiError(status, [{ ...entry, message: description }], { oauth: { error, error_description: description }, ...(headers ? { headers } : {}) });
}

/** 401 invalid_client: unknown client, bad secret, disabled client, or no credentials. */
export const invalidClient = (description = 'Client authentication failed.') =>
  oauthError(401, 'invalid_client', description, { name: 'AuthenticationError', code: 2001 }, { 'www-authenticate': 'Basic realm="sluice", charset="UTF-8"' });

/** 400 invalid_grant: the code, refresh token or verifier is wrong, expired, used or not the client's. */
export const invalidGrant = (description: string, propertyName: string) =>
  oauthError(400, 'invalid_grant', description, { name: 'ValidationError', code: VALIDATION_CODES.format, propertyName });

/** 400 invalid_request: a required parameter is missing (or malformed). */
export const invalidRequest = (description: string, propertyName: string, code: number = VALIDATION_CODES.required) =>
  oauthError(400, 'invalid_request', description, { name: 'ValidationError', code, propertyName });

/** 400 unsupported_grant_type. */
export const unsupportedGrantType = (grantType: string) =>
  oauthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported here.`, { name: 'ValidationError', code: VALIDATION_CODES.enum, propertyName: 'grant_type' });

/** 400 unauthorized_client: the client may not use this grant (e.g. a public client without a secret). */
export const unauthorizedClient = (description: string) =>
  oauthError(400, 'unauthorized_client', description, { name: 'ValidationError', code: VALIDATION_CODES.enum, propertyName: 'grant_type' });

/** 400 invalid_scope (RFC 6749 §5.2): the requested scope is unknown, malformed, or wider than the client (or the refresh token) may have. */
export const invalidScope = (description: string) =>
  oauthError(400, 'invalid_scope', description, { name: 'ValidationError', code: VALIDATION_CODES.enum, propertyName: 'scope' });
