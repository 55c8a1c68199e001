/**
 * An SMTP server for tests: a real one on 127.0.0.1 (the `smtp-server` package, as a mail relay
 * would be), with AUTH PLAIN/LOGIN over plain text and no STARTTLS, that records every message it
 * accepts. `refuse` makes it reject recipients (`rcpt`: 550 to RCPT TO) or the whole message
 * (`data`: 554 after DATA); `hang` keeps each connection open without a greeting.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** MAIL FROM and RCPT TO addresses. */
  from: string;
  to: string[];
  /** Which user authenticated (AUTH), or undefined. */
  user: string | undefined;
  /** The header lines as sent, unfolded, in order. */
  headerLines: string[];
  /** The decoded header value of `name` (first of that name; RFC 2047 words left encoded), or undefined. */
  header(name: string): string | undefined;
  /** The plain-text body, decoded (quoted-printable or 7bit), CRLF as LF. */
  text: string;
  raw: string;
}

export interface SmtpReceiver {
  /** `smtp://user:pass@127.0.0.1:<port>` */
  url: string;
  port: number;
  received: ReceivedMail[];
  refuse: 'none' | 'rcpt' | 'data';
  close(): Promise<void>;
}

/** Quoted-printable (RFC 2045 §6.7) to text: soft line breaks dropped, `=XX` octets decoded as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const soft = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function parse(raw: string, envelope: { from: string; to: string[]; user: string | undefined }): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  const body = raw.slice(split + 4);
  const headerLines = head.split(/\r\n(?![ \t])/).map((line) => line.replace(/\r\n[ \t]+/g, ' '));
  const header = (name: string) => headerLines.find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1).trim();
  const qp = /quoted-printable/i.test(header('content-transfer-encoding') ?? '');
  const text = (qp ? decodeQuotedPrintable(body) : body).replace(/\r\n/g, '\n').replace(/\n$/, '');
  return { ...envelope, headerLines, header, text, raw };
}

/** Starts the server on a free loopback port; accepts the credentials `user`/`pass` only. */
export async function startSmtp(options: { user?: string; pass?: string } = {}): Promise<SmtpReceiver> {
  const user = options.user ?? 'mailer';
  const pass = options.pass ?? 'relay-secret';
  const receiver: SmtpReceiver = { url: '', port: 0, received: [], refuse: 'none', close: async () => {} };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) return callback(null, { user });
      return callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (receiver.refuse === 'rcpt') return callback(Object.assign(new Error(`Mailbox ${address.address} unavailable`), { responseCode: 550 }));
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (receiver.refuse === 'data') return callback(Object.assign(new Error('Message refused'), { responseCode: 554 }));
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        receiver.received.push(parse(Buffer.concat(chunks).toString('utf8'), { from, to: session.envelope.rcptTo.map((r) => r.address), user: session.user as string | undefined }));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.server.address() as AddressInfo).port;
  receiver.url = `smtp://${user}:${pass}@127.0.0.1:${receiver.port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** A TCP server on 127.0.0.1 that accepts connections and never says anything (no SMTP greeting): a relay that hangs. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
