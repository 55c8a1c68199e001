/**
 * The attack of issue 30, point 1: one unauthenticated request announcing a body larger than the
 * limit, answered 413 without its body being read, left the body's deadline running
 * (`installBodyTimeout`, src/http/limits.ts); at the deadline its stream failed with no listener and
 * the process ended on an unhandled `'error'` event. Here the attack, and its variants (a chunked
 * body past the limit, a media type with no parser, an unknown route, a GET with a body), is sent
 * on raw sockets to the app listening on 127.0.0.1 with a short deadline; every one is answered,
 * on a connection the server closes, and once the deadline has passed no exception went uncaught
 * and the server still answers.
 */
import { afterEach, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../src/app.ts';
import { exchange, type Listening, listen, parseAnswer } from './raw-socket.ts';

/** The deadline for a body, short so that the test waits past it. */
const DEADLINE_MS = 1000;

const servers: Listening[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

/** The head of a request; `headers` as written. */
const head = (method: string, path: string, headers: string[]) => `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
/** A chunked body of more than `BODY_LIMIT` bytes in chunks of 64 KiB, never finished (no last chunk). */
const chunkedPastLimit = () => Array.from({ length: Math.ceil(BODY_LIMIT / 65_536) + 1 }, () => `10000\r\n${'a'.repeat(65_536)}\r\n`);

const json = 'Content-Type: application/json';
const form = 'Content-Type: application/x-www-form-urlencoded';

const attacks: { name: string; chunks: string[]; status: number; propertyName?: string }[] = [
  { name: 'POST /v1/oauth/token, 2 000 000 bytes announced, {} sent', chunks: [head('POST', '/v1/oauth/token', [json, 'Content-Length: 2000000']), '{}'], status: 413, propertyName: 'body' },
  { name: 'POST /v1/oauth/token as a form, one byte over the limit', chunks: [head('POST', '/v1/oauth/token', [form, `Content-Length: ${BODY_LIMIT + 1}`]), 'grant_type=x'], status: 413, propertyName: 'body' },
  { name: 'POST /v1/login, 10 MB announced, nothing sent', chunks: [head('POST', '/v1/login', [form, 'Content-Length: 10000000'])], status: 413 },
  { name: 'PATCH /collection/contracts/x, 2 000 000 bytes announced', chunks: [head('PATCH', '/collection/contracts/x', [json, 'Content-Length: 2000000']), '{"name":'], status: 413, propertyName: 'body' },
  { name: 'PUT /collection/inputs/x, 2 000 000 bytes announced', chunks: [head('PUT', '/collection/inputs/x', [json, 'Content-Length: 2000000']), '{}'], status: 413, propertyName: 'body' },
  { name: 'DELETE /collection/inputs, 2 000 000 bytes announced', chunks: [head('DELETE', '/collection/inputs', [json, 'Content-Length: 2000000']), '[]'], status: 413, propertyName: 'body' },
  { name: 'PATCH /v1/queue/x, chunked past the limit, never finished', chunks: [head('PATCH', '/v1/queue/x', [json, 'Transfer-Encoding: chunked']), ...chunkedPastLimit()], status: 413, propertyName: 'body' },
  { name: 'POST /v1/oauth/token as a form, chunked past the limit', chunks: [head('POST', '/v1/oauth/token', [form, 'Transfer-Encoding: chunked']), ...chunkedPastLimit()], status: 413, propertyName: 'body' },
  { name: 'POST /v1/oauth/token as application/xml (no parser), body unfinished', chunks: [head('POST', '/v1/oauth/token', ['Content-Type: application/xml', 'Content-Length: 100']), '<a'], status: 415 },
  { name: 'POST /v1/oauth/token as text/plain, body unfinished: read until the deadline', chunks: [head('POST', '/v1/oauth/token', ['Content-Type: text/plain', 'Content-Length: 100']), 'ab'], status: 408, propertyName: 'request' },
  { name: 'POST to an unknown route, 2 000 000 bytes announced', chunks: [head('POST', '/no/such/route', [json, 'Content-Length: 2000000']), '{}'], status: 413, propertyName: 'body' },
  { name: 'GET /healthz with a body announced and unfinished', chunks: [head('GET', '/healthz', [json, 'Content-Length: 2000000']), '{}'], status: 200 },
];

it('survives bodies announced past the limit on every route and method: answered, connection closed, no error unhandled after the deadline', { timeout: 60_000 }, async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const server = await listen(DEADLINE_MS);
    servers.push(server);
    // `exchange` resolves only once the server has closed the connection.
    const answers = [];
    for (const attack of attacks) answers.push({ attack, answer: parseAnswer(String(await exchange(server.port, attack.chunks))) });
    // Past every deadline: the timers of the requests above would have fired by now.
    await new Promise((resolve) => setTimeout(resolve, 2 * DEADLINE_MS + 500));
    expect(uncaught.map(String)).toEqual([]);
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(200);
    for (const { attack, answer } of answers) {
      expect({ attack: attack.name, status: answer.status }).toEqual({ attack: attack.name, status: attack.status });
      // The sign-in page answers its form's errors as a page (docs/api.md#browser-sign-in); every other error is the error object.
      if (attack.status >= 400 && /\r\ncontent-type: application\/json/i.test(answer.head)) {
        expect(answer.body.requestId).toBe(answer.requestId);
        expect(answer.body.errors[0]).toMatchObject({ name: expect.any(String), code: expect.any(Number), ...(attack.propertyName && { propertyName: attack.propertyName }) });
      }
      // One answer, then the connection closed: the rest of the body is never read as a next request.
      expect(answer.head).toMatch(/\r\nconnection: close/i);
      expect(answer.text).not.toContain('HTTP/1.1');
    }
  } finally {
    process.off('uncaughtException', record);
  }
});

it('still reads a body that arrives in time, and keeps its connection for the next request', async () => {
  const server = await listen(DEADLINE_MS);
  servers.push(server);
  const body = '{"grant_type":"client_credentials"}';
  // A client unknown to the server: 401 once the body was read, then the next request on the same connection.
  const raw = String(await exchange(server.port, [head('POST', '/v1/oauth/token', [json, `Content-Length: ${body.length}`, 'Authorization: Basic eDp5']) + body, head('GET', '/healthz', ['Connection: close'])]));
  const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
  expect(parseAnswer(first!).status).toBe(401);
  expect(parseAnswer(first!).head).not.toMatch(/\r\nconnection: close/i);
  expect(parseAnswer(second!).status).toBe(200);
});
