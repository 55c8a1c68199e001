/**
 * Team e-mail (docs/api.md#invitations, docs/api.md#password-reset, docs/configuration.md#e-mail):
 * invitation links and password-reset links, sent through the operator's SMTP server with
 * nodemailer when SMTP_URL is set (`smtpMailer`), given to `teamRoutes` as `mailer`. Without one
 * the link is only returned (`emailed` false); a failed send does the same, so a link is never
 * lost to a mail server's refusal.
 *
 * The links are secrets: they travel in the message body only, never in a header, and a failure
 * is logged through `mailFailure` (the error's code and the server's reply, never the message).
 * Names and subjects are one line (control characters become spaces) and nodemailer encodes
 * header values (RFC 2047), so a name cannot add a header (RFC 5322 §2.2).
 */
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

/** One invitation to send: the link (a secret: sent, never logged) and what the message says. */
export interface InvitationMessage {
  to: string;
  name: string;
  contractName: string;
  role: string;
  invitedBy: string;
  link: string;
  expires: Date;
}

/** One password-reset link to send to a member (docs/api.md#password-reset): the link is a secret. */
export interface PasswordResetMessage {
  to: string;
  name: string;
  contractName: string;
  issuedBy: string;
  link: string;
  expires: Date;
}

/** Sends the team's messages; each method rejects when the server refuses, cannot be reached or takes longer than its time limit. */
export interface TeamMailer {
  sendInvitation(message: InvitationMessage): Promise<void>;
  sendPasswordReset(message: PasswordResetMessage): Promise<void>;
}

/** The plain-text body of an invitation message. */
export function invitationText(message: InvitationMessage): string {
  return [
    `Hello ${message.name},`,
    '',
    `${message.invitedBy} invites you to join the team of ${message.contractName} on Sluice as ${message.role}.`,
    '',
    'Choose a user name and a password here (the link works once, until ' + message.expires.toUTCString() + '):',
    message.link,
    '',
    'If you did not expect this, ignore this message.',
  ].join('\n');
}

/** The subject of an invitation message. */
export function invitationSubject(message: InvitationMessage): string {
  return oneLine(`Join the team of ${message.contractName} on Sluice`);
}

/** The plain-text body of a password-reset message. */
export function passwordResetText(message: PasswordResetMessage): string {
  return [
    `Hello ${message.name},`,
    '',
    `${message.issuedBy}, an administrator of ${message.contractName} on Sluice, sent you a link to choose a new password.`,
    '',
    'Choose your new password here (the link works once, until ' + message.expires.toUTCString() + '; signing in with it ends your other sessions):',
    message.link,
    '',
    'If you did not ask for this, tell your team: your current password keeps working until the link is used.',
  ].join('\n');
}

/** The subject of a password-reset message. */
export function passwordResetSubject(message: PasswordResetMessage): string {
  return oneLine(`Choose a new Sluice password (${message.contractName})`);
}

/** `text` on one line: every run of control characters (CR, LF, TAB, NUL…) becomes one space. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** The SMTP settings of `Config.smtp` (docs/configuration.md#e-mail). */
export interface SmtpSettings {
  /** `smtp://[user:pass@]host[:port]` (STARTTLS when the server offers it) or `smtps://…` (TLS from the start). */
  url: string;
  /** The From address: `addr@example.com` or `Name <addr@example.com>`. */
  from: string;
  /** Time limit of each phase (connect, greeting, each reply) and of the whole send, ms. */
  timeoutMs: number;
}

/**
 * An SMTP sender through nodemailer (docs/configuration.md#e-mail): one connection per message
 * (messages are rare: invitations and resets), each phase bounded by `timeoutMs`
 * (`connectionTimeout`, `greetingTimeout`, `socketTimeout` of nodemailer's SMTP transport), and
 * the whole send too (a server that answers slowly but steadily). The host is operator
 * configuration, not tenant input: it may be loopback or private (no outbound-address guard).
 * `close()` releases the transport.
 */
export function smtpMailer(settings: SmtpSettings): TeamMailer & { close(): void } {
  const transport = nodemailer.createTransport({
    url: settings.url,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
  } as SMTPTransport.Options);

  async function send(to: { name: string; address: string }, subject: string, text: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`The SMTP server did not take the message within ${settings.timeoutMs} ms.`), { code: 'ETIMEDOUT' })), settings.timeoutMs);
    });
    try {
      await Promise.race([transport.sendMail({ from: settings.from, to: { name: oneLine(to.name), address: to.address }, subject, text }), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    sendInvitation: (message) => send({ name: message.name, address: message.to }, invitationSubject(message), invitationText(message)),
    sendPasswordReset: (message) => send({ name: message.name, address: message.to }, passwordResetSubject(message), passwordResetText(message)),
    close: () => transport.close(),
  };
}

/**
 * What a log line may say of a failed send: the error's message, nodemailer's `code`, the SMTP
 * `command` and `responseCode` — never the message it carried (whose body holds the link).
 */
export function mailFailure(error: unknown): { message: string; code?: string; command?: string; responseCode?: number } {
  const e = (error ?? {}) as { message?: unknown; code?: unknown; command?: unknown; responseCode?: unknown };
  return {
    message: String(e.message ?? error),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.command === 'string' ? { command: e.command } : {}),
    ...(typeof e.responseCode === 'number' ? { responseCode: e.responseCode } : {}),
  };
}
