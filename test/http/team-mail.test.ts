/**
 * Invitation e-mail through SMTP (issue 32 point 3, docs/api.md#invitations,
 * docs/configuration.md#e-mail), against a real SMTP server on 127.0.0.1 (`smtp-server`, as the
 * operator's relay): the message arrives with the link, the recipient, the From, the subject and
 * the body of `invitationText`, sent with SMTP_URL's credentials. Beside it the attacks on it: a
 * relay that refuses the recipient or the message, one that is down, one that never greets — the
 * invitation stands (201 with its link, `emailed` false, still pending and acceptable) and the
 * failure is logged without the link; a name with CR/LF that tries to add a Bcc header.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { invitationText } from '../../src/management/team/mail.ts';
import { grant } from '../../src/store/contracts.ts';
import { findInvitationByToken } from '../../src/store/invitations.ts';
import { build, buildTenant, buildUser } from '../helper.ts';
import { startSilentServer, startSmtp, type SmtpReceiver } from '../smtp-receiver.ts';

const FROM = 'Sluice Team <sluice@example.com>';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** An app sending through `smtpUrl`, a tenant and its admin, and a way to invite (capturing the warn log lines written meanwhile). */
async function setup(smtpUrl: string, env: Record<string, string> = {}) {
  const ctx = await build({ API_URL: 'https://api.sluice.test', AUTH_URL: 'https://auth.sluice.test', SMTP_URL: smtpUrl, SMTP_FROM: FROM, LOG_LEVEL: 'warn', ...env });
  const tenant = await buildTenant(ctx.db);
  const admin = await buildUser(ctx.db, { name: 'Ada Admin' });
  await grant(ctx.db, admin.consumer.id, tenant.contract.id, undefined, 'admin');
  const invite = async (body: { name: string; email: string; role: string }) => {
    const logged: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const res = await ctx.app.inject({ method: 'POST', url: `/collection/contracts/${tenant.contract.id}/invitations`, headers: { authorization: `Bearer ${admin.token}` }, payload: body });
      expect(res.statusCode, res.body).toBe(201);
      return { body: res.json() as { _id: string; link: string; emailed: boolean; expires: string }, logged: logged.join('') };
    } finally {
      process.stderr.write = write;
    }
  };
  return { ...ctx, tenant, admin, invite };
}

async function smtp(): Promise<SmtpReceiver> {
  const receiver = await startSmtp();
  closers.push(() => receiver.close());
  return receiver;
}

/** The invitation of the link is still pending: its page opens. */
async function stillPending(s: Awaited<ReturnType<typeof setup>>, link: string) {
  const token = new URL(link).pathname.split('/').pop()!;
  expect(await findInvitationByToken(s.db, token)).toMatchObject({ acceptedAt: null, withdrawnAt: null });
  const page = await s.app.inject({ method: 'GET', url: new URL(link).pathname, headers: { accept: 'text/html' } });
  expect(page.statusCode).toBe(200);
}

describe('invitation e-mail (SMTP)', () => {
  it('sends the link to the invitee through the relay, with its credentials, From, subject and the plain-text body', async () => {
    const relay = await smtp();
    const s = await setup(relay.url);
    const { body, logged } = await s.invite({ name: 'Mo Moderator', email: 'mo@example.com', role: 'moderator' });
    expect(body.emailed).toBe(true);
    expect(relay.received).toHaveLength(1);
    const mail = relay.received[0]!;
    expect(mail).toMatchObject({ user: 'mailer', from: 'sluice@example.com', to: ['mo@example.com'] });
    expect(mail.header('from')).toBe(FROM);
    expect(mail.header('to')).toBe('Mo Moderator <mo@example.com>');
    expect(mail.header('subject')).toBe('Join the team of Acme News on Sluice');
    expect(mail.text).toBe(
      invitationText({ to: 'mo@example.com', name: 'Mo Moderator', contractName: 'Acme News', role: 'moderator', invitedBy: 'Ada Admin', link: body.link, expires: new Date(body.expires) }),
    );
    expect(mail.text).toContain(body.link);
    // The link is in the body only.
    expect(mail.headerLines.join('\n')).not.toContain(new URL(body.link).pathname.split('/').pop());
    expect(logged).toBe('');
  });

  it('a relay that refuses the recipient or the message: 201 with the link, emailed false, the invitation pending, the failure logged without the link', async () => {
    const relay = await smtp();
    const s = await setup(relay.url);
    for (const refuse of ['rcpt', 'data'] as const) {
      relay.refuse = refuse;
      const { body, logged } = await s.invite({ name: 'Mo', email: `${refuse}@example.com`, role: 'viewer' });
      expect(body).toMatchObject({ emailed: false, link: expect.stringMatching(/^https:\/\/auth\.sluice\.test\/v1\/invitations\//) });
      await stillPending(s, body.link);
      expect(logged).toContain('invitation e-mail not sent');
      expect(logged).toContain(refuse === 'rcpt' ? '550' : '554');
      expect(logged).not.toContain(new URL(body.link).pathname.split('/').pop());
    }
    expect(relay.received).toHaveLength(0);
  });

  it('a relay that is down or never greets: 201 with the link, emailed false (SMTP_TIMEOUT_MS bounds the wait)', async () => {
    // A port with nothing listening: take a free one and close it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const downPort = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const silent = await startSilentServer();
    closers.push(() => silent.close());
    for (const port of [downPort, silent.port]) {
      const s = await setup(`smtp://127.0.0.1:${port}`, { SMTP_TIMEOUT_MS: '300' });
      const { body, logged } = await s.invite({ name: 'Mo', email: 'mo@example.com', role: 'viewer' });
      expect(body.emailed).toBe(false);
      await stillPending(s, body.link);
      expect(logged).toContain('invitation e-mail not sent');
      expect(logged).not.toContain(new URL(body.link).pathname.split('/').pop());
    }
  });

  it('a name with CR/LF adds no header: one recipient, no Bcc, the name on one line', async () => {
    const relay = await smtp();
    const s = await setup(relay.url);
    const { body } = await s.invite({ name: 'Mo\r\nBcc: evil@example.com\r\nX-Injected: yes', email: 'mo@example.com', role: 'viewer' });
    expect(body.emailed).toBe(true);
    const mail = relay.received[0]!;
    expect(mail.to).toEqual(['mo@example.com']);
    expect(mail.headerLines.filter((line) => /^(bcc|cc|x-injected):/i.test(line))).toEqual([]);
    expect(mail.headerLines.filter((line) => /^to:/i.test(line))).toHaveLength(1);
    expect(mail.header('to')).toContain('<mo@example.com>');
  });
});
