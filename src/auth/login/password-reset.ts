/**
 * A member's password-reset page (docs/api.md#password-reset), in the sign-in's scope (cookies,
 * CSRF protection, the same pages and stylesheet), as the invitation page (`invitation.ts`):
 *
 *   GET  /v1/password-reset/{token}   a pending link → the page to choose a new password; unknown →
 *                                     404 page; used or expired → 410 page saying which
 *   POST /v1/password-reset/{token}   password → the user's password set, every login session,
 *                                     token and authorization code of the user ended, the link
 *                                     used up → 200 page "Your password is set" with a link to
 *                                     sign in (the browser is not signed in: the sign-in page
 *                                     applies whatever it asks, two-factor included)
 *
 * The link's token is the credential: 256 random bits, stored as SHA-256 only
 * (store/password-resets.ts). Both answer top-level navigations only (Fetch Metadata,
 * `navigation.ts`; the form post from this origin only), and the form carries a CSRF token (403
 * page without it): as the login form. A password outside the rules (`MIN_PASSWORD`…
 * `MAX_PASSWORD`, as `admin user create`, the invitation page and the password change) shows the
 * form again (400), nothing changed; a replayed or expired link → the 410 page, nothing changed
 * (the link is claimed in the transaction that sets the password).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { consoleUrl } from '../../first-party.ts';
import { ref } from '../../http/openapi.ts';
import { handlerValidated } from '../../http/validate.ts';
import { findConsumer } from '../../store/consumers.ts';
import { findContract } from '../../store/contracts.ts';
import type { Db } from '../../store/db.ts';
import { findPasswordResetByToken, type PasswordResetState, passwordResetState, usePasswordReset } from '../../store/password-resets.ts';
import type { ConsumerRow, PasswordResetRow } from '../../store/tables.ts';
import { fields } from '../grants/grant.ts';
import { page as htmlPage, pageError } from '../schema.ts';
import { hashSecret, MAX_PASSWORD, MIN_PASSWORD } from '../secrets.ts';
import { sendPage } from './render.ts';

const TOKEN = /^[\w-]{20,100}$/;

const GONE: Record<Exclude<PasswordResetState, 'pending'>, { title: string; message: string }> = {
  used: { title: 'This link was already used', message: 'Each password-reset link works once, and this one has been used (or another link for the same account was). If it was you, sign in with the password you chose; otherwise ask your team for a new link.' },
  expired: { title: 'This link has expired', message: 'Password-reset links work for 24 hours. Ask your team for a new one.' },
};

const Params = handlerValidated(Type.Object({ token: Type.String({ description: "The password-reset link's token" }) }));
const tags = ['authorization'];

/** The page's route schemas (OpenAPI). */
export const passwordResetSchemas = {
  show: {
    tags,
    summary: "A password-reset link's page: choose a new password",
    params: Params,
    response: {
      200: htmlPage('The page with the form'),
      403: ref('ErrorObject', 'Not a top-level navigation (Fetch Metadata Sec-Fetch-Mode / Sec-Fetch-Dest)'),
      404: pageError('Error page: no password-reset link is this one'),
      410: pageError('Error page: the link was used or has expired'),
    },
  },
  reset: {
    tags,
    summary: "Set the new password: every session and token of the user ends; the link is used up",
    consumes: ['application/x-www-form-urlencoded'],
    params: Params,
    body: handlerValidated(Type.Object({ password: Type.String({ minLength: MIN_PASSWORD, maxLength: MAX_PASSWORD }), _csrf: Type.String({ description: 'The CSRF token of the form' }) })),
    response: {
      200: htmlPage('The password is set: a page with a link to sign in'),
      400: pageError('The form again with an error (password too short or too long); nothing changed'),
      403: pageError('Error page: missing or wrong CSRF token; the error object when not a top-level navigation from this origin (Fetch Metadata)'),
      404: pageError('Error page: no password-reset link is this one'),
      410: pageError('Error page: the link was used or has expired; nothing changed'),
      415: pageError('Error page: the body is not a form'),
    },
  },
};

/** Registers the page (the module's table) on `app`, the sign-in's scope: `form` and `page` are its route options (CSRF check, Fetch Metadata, error pages). */
export function passwordResetRoutes(
  app: FastifyInstance,
  { db, config, page, form }: { db: Db; config: Config; page: Record<string, unknown>; form: Record<string, unknown> },
): void {
  const notFound = (reply: FastifyReply) =>
    sendPage(reply, 404, 'error', { title: 'This password-reset link is not valid', message: 'Check that the whole link was copied, or ask your team for a new one.', status: 404 });
  const gone = (reply: FastifyReply, state: Exclude<PasswordResetState, 'pending'>) => sendPage(reply, 410, 'error', { ...GONE[state], status: 410 });

  /** The pending link of the request's token and its user, or the reply already sent (404 or 410 page). */
  async function pending(request: FastifyRequest, reply: FastifyReply): Promise<{ reset: PasswordResetRow; user: ConsumerRow } | undefined> {
    const { token } = request.params as { token: string };
    const reset = TOKEN.test(token) ? await findPasswordResetByToken(db, token) : undefined;
    const user = reset && (await findConsumer(db, reset.consumerId));
    if (!reset || !user || user.type !== 'user' || user.disabled) {
      notFound(reply);
      return undefined;
    }
    const state = passwordResetState(reset);
    if (state !== 'pending') {
      gone(reply, state);
      return undefined;
    }
    return { reset, user };
  }

  async function formPage(request: FastifyRequest, reply: FastifyReply, { reset, user }: { reset: PasswordResetRow; user: ConsumerRow }, status: number, error?: string) {
    const contract = await findContract(db, reset.contractId);
    const { token } = request.params as { token: string };
    return sendPage(reply, status, 'password-reset', {
      done: false,
      contractName: contract?.name ?? 'a contract',
      issuedBy: reset.issuedByName,
      name: user.name,
      username: user.username ?? '',
      expires: new Date(Number(reset.expiresAt)).toUTCString(),
      action: `/v1/password-reset/${token}`,
      csrf: reply.generateCsrf(),
      error,
    });
  }

  app.get('/v1/password-reset/:token', { ...page, schema: passwordResetSchemas.show }, async (request, reply) => {
    const found = await pending(request, reply);
    if (!found) return reply;
    return formPage(request, reply, found, 200);
  });

  app.post('/v1/password-reset/:token', { ...form, schema: passwordResetSchemas.reset }, async (request, reply) => {
    const found = await pending(request, reply);
    if (!found) return reply;
    const body = fields(request.body);
    const password = typeof body.password === 'string' ? body.password : '';
    if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) return formPage(request, reply, found, 400, `Choose a password of ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`);
    const { token } = request.params as { token: string };
    const outcome = await usePasswordReset(db, token, await hashSecret(password));
    if (outcome === 'not-pending') {
      const now = await findPasswordResetByToken(db, token);
      const state = now ? passwordResetState(now) : 'used';
      return gone(reply, state === 'pending' ? 'used' : state);
    }
    return sendPage(reply, 200, 'password-reset', { done: true, username: outcome.consumer.username ?? '', signIn: consoleUrl(config) });
  });
}
