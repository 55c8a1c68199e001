/**
 * Two-factor sign-in of the signed-in user, on {auth_url} beside the account routes
 * (docs/api.md#two-factor-sign-in; issue 32 point 4):
 *
 *   GET  /v1/account/two-factor                  → 200 {enabled, pending, recoveryCodesLeft}
 *   POST /v1/account/two-factor                  → 200 {secret, uri, …}: a new TOTP secret, pending
 *                                                  until confirmed (409 naming `twoFactor` when enabled)
 *   POST /v1/account/two-factor/confirm          {code} → 200 {enabled: true, recoveryCodes}: the
 *                                                  10 recovery codes, shown this once
 *   POST /v1/account/two-factor/disable          {code} → 200 {enabled: false}; a current code or
 *                                                  a recovery code (not the password: the token
 *                                                  already proves it, the second factor is the point)
 *   POST /v1/account/two-factor/recovery-codes   {code} → 200 {recoveryCodes}: new ones, the old
 *                                                  ones stop working; a current code only
 *
 * All take any valid access token (permission `token()`, http/permissions.ts) of a user: a
 * client's token → 403 naming `access_token`. The secret is shown only by the enrolment's answer
 * (never by the status), stored sealed with the secret key (`totp.ts`). Every code is checked
 * under the sign-in failure limits (the login form's `FailureLimiter`, keyed by the lower-cased
 * user name, rate-limit.ts): a wrong, replayed or used code → 400 naming `code`, counted as a
 * failed sign-in; once delayed → 429 with Retry-After, the code not checked. Enable, disable and
 * new recovery codes are audit entries (`store/two-factor.ts`). Answers carry
 * `Cache-Control: no-store`.
 */
import { Type } from 'typebox';
import type { Config } from '../config.ts';
import { conflictError, forbiddenError, rateLimitError, VALIDATION_CODES, validationError } from '../errors.ts';
import { authenticate, type Principal } from '../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../http/openapi.ts';
import type { App } from '../http/typed.ts';
import { check, handlerValidated } from '../http/validate.ts';
import { currentSecretKey } from '../lib/secret-box.ts';
import type { Db } from '../store/db.ts';
import type { ConsumerRow } from '../store/tables.ts';
import { disableTwoFactor, enableTwoFactor, findTwoFactor, recoveryCodesLeft, regenerateRecoveryCodes, startEnrolment } from '../store/two-factor.ts';
import type { FailureLimiter } from './rate-limit.ts';
import { checkSecondFactor, newRecoveryCodes, newTotpSecret, RECOVERY_CODES, sealTotpSecret, TOTP_DIGITS, TOTP_ISSUER, TOTP_PERIOD, totpUri } from './totp.ts';

/** The clock of TOTP checks (ms since the epoch): `Date.now`; tests replace `now`. */
export interface TwoFactorClock {
  now: () => number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The clock the TOTP checks of the account routes and the sign-in's second step read. */
    twoFactorClock: TwoFactorClock;
  }
}

const tags = ['authorization'];

/** The body of the routes that take a code. */
export const TwoFactorCode = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64, description: 'A current 6-digit code of the authenticator app (or, where said, a recovery code)' }),
});

const Status = Type.Object({
  enabled: Type.Boolean({ description: 'two-factor sign-in is on' }),
  pending: Type.Boolean({ description: 'an enrolment waits for its first code' }),
  recoveryCodesLeft: Type.Integer({ minimum: 0, description: 'unused recovery codes' }),
});
const Enrolment = Type.Object(
  {
    secret: Type.String({ description: 'the TOTP secret, base32 (RFC 4648): shown this once' }),
    uri: Type.String({ description: 'the otpauth:// key URI for an authenticator app (issuer Sluice, label the user name)' }),
    issuer: Type.String(),
    label: Type.String({ description: 'the user name' }),
    algorithm: Type.String({ enum: ['SHA1'] }),
    digits: Type.Integer({ enum: [TOTP_DIGITS] }),
    period: Type.Integer({ enum: [TOTP_PERIOD], description: 'seconds' }),
  },
  { description: 'The pending enrolment (Cache-Control: no-store)' },
);
const RecoveryCodes = Type.Array(Type.String(), { minItems: RECOVERY_CODES, maxItems: RECOVERY_CODES, description: 'single-use recovery codes, shown this once' });

/** Route schemas of the module. */
export const twoFactorSchemas = {
  status: { tags, summary: 'Whether two-factor sign-in is on for the signed-in user', security: TOKEN_SECURITY, response: { 200: Status, ...errorResponses(401, 403) } },
  start: {
    tags,
    summary: 'Start enrolling in two-factor sign-in: a new TOTP secret and its otpauth:// URI, pending until confirmed',
    security: TOKEN_SECURITY,
    response: { 200: Enrolment, ...errorResponses(401, 403, 409) },
  },
  confirm: {
    tags,
    summary: 'Confirm the enrolment with a current code: two-factor sign-in on, recovery codes shown once',
    security: TOKEN_SECURITY,
    body: handlerValidated(TwoFactorCode),
    response: { 200: Type.Object({ enabled: Type.Literal(true), recoveryCodes: RecoveryCodes }), ...errorResponses(400, 401, 403, 409, 413, 429) },
  },
  disable: {
    tags,
    summary: 'Turn two-factor sign-in off, with a current code or a recovery code',
    security: TOKEN_SECURITY,
    body: handlerValidated(TwoFactorCode),
    response: { 200: Type.Object({ enabled: Type.Literal(false) }), ...errorResponses(400, 401, 403, 409, 413, 429) },
  },
  recoveryCodes: {
    tags,
    summary: 'Replace the recovery codes (a current code needed); the new ones are shown once',
    security: TOKEN_SECURITY,
    body: handlerValidated(TwoFactorCode),
    response: { 200: Type.Object({ recoveryCodes: RecoveryCodes }), ...errorResponses(400, 401, 403, 409, 413, 429) },
  },
};

const wrongCode = (message = 'the code is not correct, or was used already: enter the current code of your authenticator app') =>
  validationError([{ propertyName: 'code', message, code: VALIDATION_CODES.format }]);

/** The user behind the request's token; a client's token → 403 naming `access_token`. */
async function userOf(db: Db, request: Parameters<typeof authenticate>[1]): Promise<{ principal: Principal; user: ConsumerRow & { username: string } }> {
  const principal = await authenticate(db, request);
  const user = principal.consumer;
  if (user.type !== 'user' || !user.username) throw forbiddenError('Two-factor sign-in is a user’s: this access token is a machine client’s.', 'access_token');
  return { principal, user: user as ConsumerRow & { username: string } };
}

/** Registers the module's routes on `app`; `failures` is the login form's limiter, `clock` the TOTP clock (also decorated as `app.twoFactorClock`). */
export function twoFactorRoutes(app: App, { db, config, failures, clock }: { db: Db; config: Config; failures: FailureLimiter; clock: TwoFactorClock }): void {
  app.decorate('twoFactorClock', clock);
  const key = () => currentSecretKey(config);

  /**
   * Checks the body's code for `user` (enabled row) under the failure limits: returns what
   * matched; throws 400 naming `code` (counted) or 429.
   */
  async function limitedCheck(request: Parameters<typeof authenticate>[1], user: ConsumerRow & { username: string }, recovery: boolean) {
    const { code } = check(TwoFactorCode, request.body);
    const row = await findTwoFactor(db, user.id);
    if (!row || row.enabledAt === null) throw conflictError('Two-factor sign-in is not on for this account.', 'twoFactor');
    const attempt = await failures.attempt(user.username.toLowerCase(), request.ip, { secret: true });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let matched;
    try {
      matched = await checkSecondFactor(db, key(), row, code, { now: clock.now(), recovery, actor: { id: user.id, name: user.name } });
    } catch (error) {
      await attempt.cancelled();
      throw error;
    }
    if (!matched) await attempt.failed();
    if (!matched) throw wrongCode(recovery ? 'the code is not correct, or was used already: enter the current code of your authenticator app or an unused recovery code' : undefined);
    await attempt.succeeded();
    return matched;
  }

  app.get('/v1/account/two-factor', { schema: twoFactorSchemas.status }, async (request, reply) => {
    const { user } = await userOf(db, request);
    const row = await findTwoFactor(db, user.id);
    reply.header('cache-control', 'no-store');
    return { enabled: row?.enabledAt != null, pending: row !== undefined && row.enabledAt === null, recoveryCodesLeft: row?.enabledAt != null ? await recoveryCodesLeft(db, user.id) : 0 };
  });

  app.post('/v1/account/two-factor', { schema: twoFactorSchemas.start }, async (request, reply) => {
    const { user } = await userOf(db, request);
    const secret = newTotpSecret();
    if (!(await startEnrolment(db, user.id, sealTotpSecret(key(), secret), clock.now()))) {
      throw conflictError('Two-factor sign-in is on already: turn it off first to enrol another authenticator.', 'twoFactor');
    }
    reply.header('cache-control', 'no-store');
    return { secret, uri: totpUri(secret, user.username), issuer: TOTP_ISSUER, label: user.username, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD };
  });

  app.post('/v1/account/two-factor/confirm', { schema: twoFactorSchemas.confirm }, async (request, reply) => {
    const { user } = await userOf(db, request);
    const { code } = check(TwoFactorCode, request.body);
    const row = await findTwoFactor(db, user.id);
    if (!row || row.enabledAt !== null) throw conflictError(row ? 'Two-factor sign-in is on already.' : 'No enrolment is pending: start one first (POST /v1/account/two-factor).', 'twoFactor');
    const attempt = await failures.attempt(user.username.toLowerCase(), request.ip, { secret: true });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let matched;
    try {
      matched = await checkSecondFactor(db, key(), row, code, { now: clock.now(), recovery: false, actor: { id: user.id, name: user.name } });
    } catch (error) {
      await attempt.cancelled();
      throw error;
    }
    if (!matched) await attempt.failed();
    if (!matched) throw wrongCode();
    await attempt.succeeded();
    const { codes, hashes } = await newRecoveryCodes();
    if (!(await enableTwoFactor(db, user.id, hashes, { id: user.id, name: user.name }, clock.now()))) throw conflictError('Two-factor sign-in is on already.', 'twoFactor');
    reply.header('cache-control', 'no-store');
    return { enabled: true as const, recoveryCodes: codes };
  });

  app.post('/v1/account/two-factor/disable', { schema: twoFactorSchemas.disable }, async (request, reply) => {
    const { user } = await userOf(db, request);
    await limitedCheck(request, user, true);
    await disableTwoFactor(db, user.id, { id: user.id, name: user.name }, clock.now());
    reply.header('cache-control', 'no-store');
    return { enabled: false as const };
  });

  app.post('/v1/account/two-factor/recovery-codes', { schema: twoFactorSchemas.recoveryCodes }, async (request, reply) => {
    const { user } = await userOf(db, request);
    await limitedCheck(request, user, false);
    const { codes, hashes } = await newRecoveryCodes();
    await regenerateRecoveryCodes(db, user.id, hashes, { id: user.id, name: user.name }, clock.now());
    reply.header('cache-control', 'no-store');
    return { recoveryCodes: codes };
  });
}
