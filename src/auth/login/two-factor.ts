/**
 * The second step of a browser sign-in (docs/api.md#two-factor-sign-in), in the sign-in's scope
 * (cookies, CSRF protection, the same pages):
 *
 *   POST /v1/login                 a correct password of a user with two-factor sign-in on → no
 *                                  session: a pending second step (`startSecondStep`) and the page
 *                                  asking for the code (200)
 *   POST /v1/login/two-factor      code (TOTP, or a recovery code, used up) → the login session
 *                                  → 303 back to /v1/authorize, as the password step does alone
 *
 * The pending step is server-side: a random 256-bit value in the cookie `sluice_2fa` (HttpOnly,
 * SameSite=Strict, Path=/v1/login, Secure over https), stored only as its SHA-256 with its user,
 * valid `CHALLENGE_TTL_MS` (5 minutes), used once (deleted when the code matches; of two requests,
 * one wins), and dropped after `CHALLENGE_FAILURES` (5) wrong codes (back to the password). Every
 * code is checked under the failure limits of the password (`FailureLimiter` of the login form,
 * keyed by the lower-cased user name, ../rate-limit.ts): a wrong code counts as a failed sign-in;
 * once delayed → 429, the code not checked, and a correct password does not reset the count.
 * The route answers top-level navigations from this origin only and needs the form's CSRF token,
 * as the login form. A sign-in through an OpenID Connect provider does not ask for the code (the
 * provider does its own multi-factor authentication).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { rateLimitError } from '../../errors.ts';
import { currentSecretKey } from '../../lib/secret-box.ts';
import { findConsumer } from '../../store/consumers.ts';
import type { Db } from '../../store/db.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { tokenHash } from '../../store/tokens.ts';
import { countChallengeFailure, deleteChallenge, findChallenge, findTwoFactor, insertChallenge } from '../../store/two-factor.ts';
import { fields } from '../grants/grant.ts';
import type { FailureLimiter } from '../rate-limit.ts';
import { twoFactorLoginSchema } from '../schema.ts';
import { randomToken } from '../secrets.ts';
import { checkSecondFactor } from '../totp.ts';
import type { TwoFactorClock } from '../two-factor.ts';
import { type AuthorizationRequest, hiddenFields } from './request.ts';
import { sendPage } from './render.ts';
import { secureCookies } from './session.ts';

export const CHALLENGE_COOKIE = 'sluice_2fa';
/** How long the second step waits for its code, ms. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Wrong codes a second step takes before it is dropped. */
export const CHALLENGE_FAILURES = 5;

const cookieOptions = (config: Config, request: FastifyRequest) => ({ path: '/v1/login', httpOnly: true, sameSite: 'strict' as const, secure: secureCookies(config, request) });

/** Whether the user has two-factor sign-in on (the password alone then yields no session). */
export async function needsSecondStep(db: Db, user: ConsumerRow): Promise<boolean> {
  return (await findTwoFactor(db, user.id))?.enabledAt != null;
}

function codePage(reply: FastifyReply, status: number, authorization: AuthorizationRequest, user: ConsumerRow, error?: string) {
  return sendPage(reply, status, 'two-factor', {
    clientName: authorization.client.name,
    username: user.username,
    fields: hiddenFields(authorization),
    csrf: reply.generateCsrf(),
    error,
  });
}

/** After a correct password: stores the pending second step of `user`, sets its cookie and sends the code page (200). */
export async function startSecondStep(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply, user: ConsumerRow, authorization: AuthorizationRequest, now = Date.now()): Promise<FastifyReply> {
  const value = randomToken();
  await insertChallenge(db, tokenHash(value), user.id, now + CHALLENGE_TTL_MS, now);
  reply.setCookie(CHALLENGE_COOKIE, value, { ...cookieOptions(config, request), maxAge: CHALLENGE_TTL_MS / 1000 });
  return codePage(reply, 200, authorization, user);
}

/** What the sign-in's routes lend this one: its request check, the login page, the end of a sign-in. */
export interface SecondStepDeps {
  db: Db;
  config: Config;
  failures: FailureLimiter;
  clock: TwoFactorClock;
  /** The route options of the sign-in's forms (CSRF check, error pages, Fetch Metadata). */
  form: Record<string, unknown>;
  /** The checked authorization request, or undefined when a page or redirect was sent. */
  checked: (params: Record<string, unknown>, reply: FastifyReply, redirectStatus: number) => Promise<AuthorizationRequest | undefined>;
  /** The login page again with `error` (status 400). */
  loginAgain: (reply: FastifyReply, authorization: AuthorizationRequest, error: string) => FastifyReply;
  /** Signs `user` in (session) and sends the browser back to /v1/authorize. */
  signIn: (request: FastifyRequest, reply: FastifyReply, user: ConsumerRow, authorization: AuthorizationRequest) => Promise<FastifyReply>;
}

/** Registers `POST /v1/login/two-factor` (the module's table) on `app`, the sign-in's scope. */
export function secondStepRoutes(app: FastifyInstance, { db, config, failures, clock, form, checked, loginAgain, signIn }: SecondStepDeps): void {
  app.post('/v1/login/two-factor', { ...form, schema: twoFactorLoginSchema }, async (request, reply) => {
    const body = fields(request.body);
    const authorization = await checked(body, reply, 303);
    if (!authorization) return reply;
    const value = request.cookies[CHALLENGE_COOKIE];
    const hash = value ? tokenHash(value) : undefined;
    const now = clock.now();
    const challenge = hash ? await findChallenge(db, hash, Date.now()) : undefined;
    const user = challenge ? await findConsumer(db, challenge.consumerId) : undefined;
    const row = user ? await findTwoFactor(db, user.id) : undefined;
    const expired = () => {
      reply.clearCookie(CHALLENGE_COOKIE, cookieOptions(config, request));
      return loginAgain(reply, authorization, 'Your sign-in expired or was already completed. Sign in again.');
    };
    if (!hash || !user || user.disabled || user.type !== 'user' || !user.username || row?.enabledAt == null) return expired();
    const attempt = await failures.attempt(user.username.toLowerCase(), request.ip, { secret: true });
    if ('retryAfter' in attempt) throw rateLimitError(attempt.retryAfter);
    let matched;
    try {
      const code = typeof body.code === 'string' ? body.code : '';
      matched = code ? await checkSecondFactor(db, currentSecretKey(config), row, code, { now, recovery: true, actor: { id: user.id, name: user.name } }) : undefined;
    } catch (error) {
      await attempt.cancelled();
      throw error;
    }
    if (!matched) {
      // The claim stands as the failure (rate-limit.ts); the step itself takes a few only.
      await attempt.failed();
      if ((await countChallengeFailure(db, hash)) >= CHALLENGE_FAILURES) {
        await deleteChallenge(db, hash);
        reply.clearCookie(CHALLENGE_COOKIE, cookieOptions(config, request));
        return loginAgain(reply, authorization, 'Too many wrong codes. Sign in again.');
      }
      return codePage(reply, 400, authorization, user, 'The code is not correct, or was used already. Enter the code your app shows now, or an unused recovery code.');
    }
    if (!(await deleteChallenge(db, hash))) {
      await attempt.cancelled();
      return expired();
    }
    await attempt.succeeded();
    reply.clearCookie(CHALLENGE_COOKIE, cookieOptions(config, request));
    return signIn(request, reply, user, authorization);
  });
}
