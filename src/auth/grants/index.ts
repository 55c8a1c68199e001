/** The grant types of the token endpoint, by `grant_type` (RFC 6749 §4). */
import * as authorizationCode from './authorization-code.ts';
import * as clientCredentials from './client-credentials.ts';
import type { Grant } from './grant.ts';
import * as refreshToken from './refresh-token.ts';

export const grants: ReadonlyMap<string, Grant> = new Map([clientCredentials, refreshToken, authorizationCode].map((grant) => [grant.grantType, grant]));
