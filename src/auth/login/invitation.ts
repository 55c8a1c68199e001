/**
 * The invitee's page (docs/api.md#accepting-an-invitation), in the sign-in's scope (cookies, CSRF
 * protection, the same pages and stylesheet):
 *
 *   GET  /v1/invitations/{token}   a pending invitation → the page to choose a user name and a
 *                                  password; unknown → 404 page; accepted, withdrawn or expired →
 *                                  410 page saying which
 *   POST /v1/invitations/{token}   username + password → the user is created, granted the
 *                                  contract in the invitation's role, the invitation used up, the
 *                                  browser signed in (session cookie) → 303 to the console
 *
 * The link's token is the credential: 256 random bits, stored as SHA-256 only
 * (store/invitations.ts). Both answer top-level navigations only (Fetch Metadata, `navigation.ts`;
 * the form post from this origin only), and the form carries a CSRF token (403 page without it):
 * as the login form. Refused input (a user name taken, a short password) shows the form again with
 * the error (400), nothing created; a replayed, withdrawn or expired link → the 410 page, nothing
 * created (the accept claims the invitation in the transaction that creates the user).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { consoleUrl } from '../../first-party.ts';
import { emailTaken, findUser } from '../../store/consumers.ts';
import type { Db } from '../../store/db.ts';
import { acceptInvitation, findInvitationByToken, type InvitationState, invitationState } from '../../store/invitations.ts';
import type { InvitationRow } from '../../store/tables.ts';
import { findContract } from '../../store/contracts.ts';
import { fields } from '../grants/grant.ts';
import { hashSecret, MAX_PASSWORD, MIN_PASSWORD } from '../secrets.ts';
import { invitationSchemas } from '../schema.ts';
import { sendPage } from './render.ts';
import { startSession } from './session.ts';

const USERNAME = /^[^\s]{1,100}$/;
const TOKEN = /^[\w-]{20,100}$/;

const GONE: Record<Exclude<InvitationState, 'pending'>, { title: string; message: string }> = {
  accepted: { title: 'This invitation was already used', message: 'Each invitation link works once, and this one has been used. If it was you, sign in with the user name and password you chose.' },
  withdrawn: { title: 'This invitation was withdrawn', message: 'The team withdrew this invitation. Ask them for a new one if you still need access.' },
  expired: { title: 'This invitation has expired', message: 'Invitation links work for 7 days. Ask the team for a new one.' },
};

const text = (params: Record<string, unknown>, name: string): string => (typeof params[name] === 'string' ? (params[name] as string) : '');

/** Registers the invitee's page (the module's table) on `app`, the sign-in's scope: `form` and `page` are its route options (CSRF check, error pages). */
export function invitationRoutes(
  app: FastifyInstance,
  { db, config, page, form }: { db: Db; config: Config; page: Record<string, unknown>; form: Record<string, unknown> },
): void {
  const notFound = (reply: FastifyReply) =>
    sendPage(reply, 404, 'error', { title: 'This invitation link is not valid', message: 'Check that the whole link was copied, or ask the team for a new invitation.', status: 404 });

  /** The pending invitation of the request's token, or the reply already sent (404 or 410 page). */
  async function pending(request: FastifyRequest, reply: FastifyReply): Promise<InvitationRow | undefined> {
    const { token } = request.params as { token: string };
    const invitation = TOKEN.test(token) ? await findInvitationByToken(db, token) : undefined;
    if (!invitation) {
      notFound(reply);
      return undefined;
    }
    const state = invitationState(invitation);
    if (state !== 'pending') {
      sendPage(reply, 410, 'error', { ...GONE[state], status: 410 });
      return undefined;
    }
    return invitation;
  }

  async function formPage(request: FastifyRequest, reply: FastifyReply, invitation: InvitationRow, status: number, extra: { username?: string; error?: string } = {}) {
    const contract = await findContract(db, invitation.contractId);
    const { token } = request.params as { token: string };
    return sendPage(reply, status, 'invitation', {
      contractName: contract?.name ?? 'a contract',
      invitedBy: invitation.invitedByName,
      name: invitation.name,
      email: invitation.email,
      role: invitation.role,
      expires: new Date(Number(invitation.expiresAt)).toUTCString(),
      action: `/v1/invitations/${token}`,
      csrf: reply.generateCsrf(),
      username: extra.username ?? '',
      error: extra.error,
    });
  }

  app.get('/v1/invitations/:token', { ...page, schema: invitationSchemas.show }, async (request, reply) => {
    const invitation = await pending(request, reply);
    if (!invitation) return reply;
    return formPage(request, reply, invitation, 200);
  });

  app.post('/v1/invitations/:token', { ...form, schema: invitationSchemas.accept }, async (request, reply) => {
    const invitation = await pending(request, reply);
    if (!invitation) return reply;
    const body = fields(request.body);
    const username = text(body, 'username').trim();
    const password = text(body, 'password');
    const again = (error: string) => formPage(request, reply, invitation, 400, { username, error });
    if (!USERNAME.test(username)) return again('Choose a user name of 1 to 100 characters, without spaces.');
    if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) return again(`Choose a password of at least ${MIN_PASSWORD} characters.`);
    if (await findUser(db, username)) return again('This user name is taken: choose another.');
    if (await emailTaken(db, invitation.email)) return again(`An account with the address ${invitation.email} exists already: ask the team to add that account instead of inviting it.`);
    const passwordHash = await hashSecret(password);
    let outcome: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      outcome = await acceptInvitation(db, (request.params as { token: string }).token, { username, passwordHash });
    } catch (error) {
      // A user name or address taken meanwhile (a unique constraint): the transaction undid everything.
      if (/UNIQUE|unique/.test(String((error as { code?: string }).code ?? '') + String((error as Error).message ?? ''))) return again('This user name or e-mail address was just taken: choose another user name, or ask the team.');
      throw error;
    }
    if (outcome === 'not-pending') {
      const now = (await findInvitationByToken(db, (request.params as { token: string }).token))!;
      const state = invitationState(now);
      return sendPage(reply, 410, 'error', { ...GONE[state === 'pending' ? 'expired' : state], status: 410 });
    }
    await startSession(db, config, request, reply, outcome.consumer.id);
    return reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).redirect(consoleUrl(config), 303);
  });
}
