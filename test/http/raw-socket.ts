/**
 * HTTP/1.1 written by hand on a TCP socket to the app listening on 127.0.0.1, for the tests that
 * send what a hostile client sends and `app.inject` cannot: a body shorter than its announced
 * `Content-Length`, a body sent slowly or never finished, a malformed request line or headers.
 */
import { connect } from 'node:net';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { freshDatabaseEnv, tempDir } from '../helper.ts';

/** A listening app: its port, and `close` (the app, then its database), which the caller must call. */
export interface Listening {
  port: number;
  close(): Promise<void>;
}

/**
 * The app on a fresh migrated database, listening on 127.0.0.1 (a free port), with
 * `requestTimeoutMs` as the time a client has to send a request, body included (the app's
 * default when not given), and `env` added to the configuration's environment.
 */
export async function listen(requestTimeoutMs?: number, env: Record<string, string> = {}): Promise<Listening> {
  const config = loadConfig({ DATA_DIR: tempDir(), LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...(await freshDatabaseEnv()), ...env });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db, ...(requestTimeoutMs && { requestTimeoutMs }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    port: (app.server.address() as { port: number }).port,
    close: async () => {
      await app.close();
      await db.destroy();
    },
  };
}

/**
 * Writes `chunks` on a new connection to `port` (one every `everyMs` ms, and none once the server
 * has begun to answer, as a client does) and resolves to what the server sent until it closed the
 * connection, with `written`, how many chunks had been written by then, and `error`, the code of
 * the socket's error if it had one (`ECONNRESET`, `EPIPE`: the server closed or reset the
 * connection while the client was still writing). Rejects when the server has not closed it
 * within `limitMs` ms.
 */
export function exchange(port: number, chunks: (string | Buffer)[], everyMs = 0, limitMs = 8000): Promise<string & { written?: number; error?: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let error: string | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${limitMs} ms: ${received}`));
    }, limitMs);
    socket.on('data', (data) => {
      received += data.toString('utf8');
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error = failure.code;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Object.assign(new String(received), { written: i, error }) as never);
    });
    let i = 0;
    const next = () => {
      if (i < chunks.length && !socket.destroyed && !received) socket.write(chunks[i++]!, () => setTimeout(next, everyMs));
    };
    next();
  });
}

/**
 * One answer as `exchange` received it: its status, head (status line and headers), body as text,
 * `X-Request-Id`, and `body`, the text parsed as JSON (throws when it is not JSON).
 */
export function parseAnswer(raw: string) {
  const end = raw.indexOf('\r\n\r\n');
  const [head, text] = [raw.slice(0, end), raw.slice(end + 4)];
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const requestId = /\r\nx-request-id: (\w+)/i.exec(head)?.[1];
  return {
    status,
    head,
    text,
    requestId,
    get body() {
      return JSON.parse(text) as { requestId: string; errors: { name: string; code: number; propertyName?: string }[] };
    },
  };
}
