/**
 * The signed-in consumer's own account on {auth_url} (docs/api.md#account; issue 32 point 4):
 *
 *   POST /v1/account/password     {currentPassword, newPassword} → 200 {sessionsEnded, tokensRevoked}
 *   POST /v1/account/logout-all   → 200 {sessionsEnded, tokensRevoked}  (sign out everywhere)
 *
 * Both take any valid access token (permission `token()`, http/permissions.ts). A password change
 * is a user's: a client's token → 403 naming `access_token`. The current password is checked
 * under the sign-in failure limits (`FailureLimiter` of the login form, keyed by the lower-cased
 * user name, rate-limit.ts): a wrong one → 400 naming `currentPassword` and counts as a failed
 * sign-in; once delayed → 429 with Retry-After, the password not checked. The new password
 * follows the rules of `admin user create` and the invitation page (8 to 1024 characters,
 * login/invitation.ts) and must differ from the current one. On success every login session,
 * token and pending authorization code of the user ends, except the token family of the request
 * (the application that changed the password stays signed in); sign out everywhere ends all of
 * them, the request's own token included. Both are audit entries (resource `account`) in every
 * contract the consumer holds, with counts only (store/consumers.ts).
 */
import type { Config } from '../config.ts';
import { forbiddenError, rateLimitError, VALIDATION_CODES, validationError } from '../errors.ts';
import { authenticate } from '../http/authenticate.ts';
import type { App } from '../http/typed.ts';
import { check } from '../http/validate.ts';
import { setPasswordHash, signOutEverywhere } from '../store/consumers.ts';
import type { Db } from '../store/db.ts';
import { type FailureLimiter } from './rate-limit.ts';
import { accountSchemas, PasswordChange } from './schema.ts';
import { hashSecret, verifySecret } from './secrets.ts';

/** Registers the module's routes on `app`; `failures` is the login form's limiter (`authFailures.login`). */
export function accountRoutes(app: App, { db, failures }: { db: Db; config: Config; failures: FailureLimiter }): void {
  app.post('/v1/account/password', { schema: accountSchemas.password }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const user = principal.consumer;
    if (user.type !== 'user' || !user.username) {
      throw forbiddenError('Only a user has a password: this access token is a machine client’s.', 'access_token');
    }
    const { currentPassword, newPassword } = check(PasswordChange, request.body);
    const attempt = await failures.attempt(user.username.toLowerCase(), request.ip, { secret: true });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let matches: boolean;
    try {
      matches = user.passwordHash ? await verifySecret(currentPassword, user.passwordHash) : false;
    } catch (error) {
      await attempt.cancelled();
      throw error;
    }
    // A wrong password: the claimed check stands as the failure (as a failed sign-in).
    if (!matches) await attempt.failed();
    if (!matches) throw validationError([{ propertyName: 'currentPassword', message: 'the current password is not correct', code: VALIDATION_CODES.format }]);
    await attempt.succeeded();
    if (newPassword === currentPassword) throw validationError([{ propertyName: 'newPassword', message: 'the new password must differ from the current one', code: VALIDATION_CODES.range }]);
    const ended = await setPasswordHash(db, user.id, await hashSecret(newPassword), { keepFamily: principal.token.family, actor: { id: user.id, name: user.name } });
    reply.header('cache-control', 'no-store');
    return { sessionsEnded: ended.sessions, tokensRevoked: ended.tokens };
  });

  app.post('/v1/account/logout-all', { schema: accountSchemas.logoutAll }, async (request, reply) => {
    const { consumer } = await authenticate(db, request);
    const ended = await signOutEverywhere(db, consumer.id, { id: consumer.id, name: consumer.name });
    reply.header('cache-control', 'no-store');
    return { sessionsEnded: ended.sessions, tokensRevoked: ended.tokens };
  });
}
