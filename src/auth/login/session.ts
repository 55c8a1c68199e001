/**
 * The login session of the browser sign-in: a random 256-bit cookie value, stored only as its
 * SHA-256, valid SESSION_TTL seconds (`config.sessionTtl`, default a working day: the console
 * renews its hourly tokens without the password while it lasts; signing out ends it). The cookie is HttpOnly, SameSite=Lax, Path=/v1, and Secure when
 * the Authorization API is served over https (AUTH_URL, or the request itself). A new value is
 * issued at every sign-in (no session fixation); signing out deletes the row.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';
import { findConsumer, recordSignIn } from '../../store/consumers.ts';
import { deleteExpiredSessions, deleteSession, findSession, insertSession } from '../../store/sessions.ts';
import type { ConsumerRow } from '../../store/tables.ts';
import { tokenHash } from '../../store/tokens.ts';
import { randomToken } from '../secrets.ts';
import { type AuthorizationRequest, hiddenFields } from './request.ts';

export const SESSION_COOKIE = 'sluice_session';

/** Whether cookies must be Secure: the Authorization API is served over https. */
export function secureCookies(config: Config, request: FastifyRequest): boolean {
  return config.authUrl.startsWith('https:') || request.protocol === 'https';
}

/**
 * Starts a login session of `consumerId` at `now` (ms): a new random cookie value, stored as its
 * SHA-256 with an expiry of SESSION_TTL seconds; expired sessions are deleted on the way.
 */
export async function startSession(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply, consumerId: string, now = Date.now()): Promise<void> {
  const value = randomToken();
  await deleteExpiredSessions(db, now);
  await insertSession(db, { sessionHash: tokenHash(value), consumerId, expiresAt: now + config.sessionTtl * 1000, createdAt: now });
  reply.setCookie(SESSION_COOKIE, value, { path: '/v1', httpOnly: true, sameSite: 'lax', secure: secureCookies(config, request), maxAge: config.sessionTtl });
}

/** The signed-in user of the request's session, or undefined (none, expired, disabled). */
export async function sessionUser(db: Db, request: FastifyRequest, now = Date.now()): Promise<ConsumerRow | undefined> {
  const value = request.cookies[SESSION_COOKIE];
  if (!value) return undefined;
  const session = await findSession(db, tokenHash(value), now);
  if (!session) return undefined;
  const user = await findConsumer(db, session.consumerId);
  return user && user.type === 'user' && !user.disabled ? user : undefined;
}

/** Ends the request's login session, if any: the row is deleted and the cookie cleared. */
export async function endSession(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = request.cookies[SESSION_COOKIE];
  if (value) await deleteSession(db, tokenHash(value));
  reply.clearCookie(SESSION_COOKIE, { path: '/v1', httpOnly: true, sameSite: 'lax', secure: secureCookies(config, request) });
}

/**
 * Ends a successful sign-in of `user` (the password form, the OpenID Connect callback): the
 * sign-in recorded (the team's "last sign-in"), a new session started, and the browser sent back
 * to `/v1/authorize` with the `authorization` request's parameters (303), which issues the code
 * or asks consent as for any signed-in user (docs/api.md#browser-sign-in).
 */
export async function completeSignIn(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply, user: ConsumerRow, authorization: AuthorizationRequest): Promise<FastifyReply> {
  await recordSignIn(db, user.id);
  await startSession(db, config, request, reply, user.id);
  return reply.redirect(`/v1/authorize?${new URLSearchParams(hiddenFields(authorization))}`, 303);
}
