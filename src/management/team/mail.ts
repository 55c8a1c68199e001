/**
 * Invitation e-mail (docs/api.md#invitations): what the team routes need of a mail sender, given
 * to `teamRoutes` as `mailer`. No sender is built yet (an SMTP one through nodemailer, configured
 * by SMTP_URL, is the plan: issue 32 point 3): without one the link is only returned, `emailed`
 * false.
 */

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

/** Sends invitation messages; `sendInvitation` rejects when the server refuses or cannot be reached. */
export interface InvitationMailer {
  sendInvitation(message: InvitationMessage): Promise<void>;
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
