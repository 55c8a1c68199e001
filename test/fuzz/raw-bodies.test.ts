/**
 * Fuzzing the edge with bodies larger than the limit (issue 30, point 1): fast-check generates raw
 * HTTP/1.1 requests, written on sockets to the app listening on 127.0.0.1, to the paths of
 * `GET /openapi.json` (an unknown path now and then) with any method, a `Content-Length` above
 * `BODY_LIMIT` and a short or empty body, or a chunked body past the limit or short, never
 * finished; any media type or none, sometimes `Expect: 100-continue`. Every request must be
 * answered once, not with a 5xx, with the error object when the answer is a JSON error, on a
 * connection the server then closes. Once the body deadline has passed for every request, no
 * exception went uncaught (an `'error'` event without a listener ends the process) and the server
 * still answers `/healthz`.
 *
 * `FUZZ_RAW_REQUESTS` (default 150) is the number of requests, `FUZZ_SEED` the seed (default
 * fixed, as in openapi.test.ts). A failure prints the seed and the requests that broke a rule.
 */
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../src/app.ts';
import { exchange, type Listening, listen, parseAnswer } from '../http/raw-socket.ts';
import type { Schema } from './arbitraries.ts';

const REQUESTS = Number(process.env.FUZZ_RAW_REQUESTS || 150);
const SEED = Number(process.env.FUZZ_SEED || 14);
/** The deadline for a body: short, so that the test waits past it. */
const DEADLINE_MS = 1000;
/** Requests in flight at once. */
const PARALLEL = 8;

const servers: Listening[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

/** A generated request: its head's parts and how its body is framed and sent. */
interface RawRequest {
  method: string;
  path: string;
  type: string | undefined;
  expectContinue: boolean;
  body: { framing: 'length'; announced: number; sent: string } | { framing: 'chunked'; bytes: number };
}

/** The request as written on the socket, in chunks of at most 64 KiB (a chunked body never gets its last chunk). */
function chunksOf(request: RawRequest): string[] {
  const headers = ['Host: x'];
  if (request.type) headers.push(`Content-Type: ${request.type}`);
  if (request.expectContinue) headers.push('Expect: 100-continue');
  const { body } = request;
  headers.push(body.framing === 'length' ? `Content-Length: ${body.announced}` : 'Transfer-Encoding: chunked');
  const head = `${request.method} ${request.path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;
  if (body.framing === 'length') return [head, ...(body.sent ? [body.sent] : [])];
  const chunks = [head];
  for (let left = body.bytes; left > 0; left -= 65_536) {
    const size = Math.min(left, 65_536);
    chunks.push(`${size.toString(16)}\r\n${'a'.repeat(size)}\r\n`);
  }
  return chunks;
}

it('survives any request announcing a body past the limit, on every operation: each answered once, no 5xx, no error unhandled', { timeout: 300_000 }, async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const server = await listen(DEADLINE_MS, { RATE_LIMIT_CONSUMER: '0', RATE_LIMIT_PUBLIC: '0' });
    servers.push(server);
    const document = (await (await fetch(`http://127.0.0.1:${server.port}/openapi.json`)).json()) as Schema;
    const operations = Object.entries<Schema>(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })));
    const segment = fc.constantFrom('x', 'acme-news', '0123456789abcdef01234567', 'rss_1', '%2e%2e', '%ff');
    const request: fc.Arbitrary<RawRequest> = fc.record({
      operation: fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...operations) }, { weight: 1, arbitrary: fc.constant({ method: 'POST', path: '/no/such/route' }) }),
      method: fc.option(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), { freq: 3, nil: undefined }),
      segments: fc.array(segment, { minLength: 4, maxLength: 4 }),
      type: fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded', 'text/plain', 'application/xml', 'multipart/form-data; boundary=x'),
      expectContinue: fc.boolean(),
      body: fc.oneof(
        { weight: 3, arbitrary: fc.record({ framing: fc.constant('length' as const), announced: fc.integer({ min: BODY_LIMIT + 1, max: 4_000_000_000 }), sent: fc.constantFrom('', '{}', '{"grant_type":"client_credentials"}', 'a=1&b=2', '[', 'x'.repeat(1000)) }) },
        { weight: 1, arbitrary: fc.record({ framing: fc.constant('chunked' as const), bytes: fc.oneof(fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT + 200_000 }), fc.integer({ min: 1, max: 100 })) }) },
      ),
    }).map(({ operation, method, segments, type, expectContinue, body }) => {
      let i = 0;
      return { method: method ?? operation.method, path: operation.path.replace(/\{\w+\}/g, () => segments[i++ % segments.length]!), type, expectContinue, body };
    });
    const requests = fc.sample(request, { numRuns: REQUESTS, seed: SEED });

    const problems: { request: RawRequest; problem: string }[] = [];
    const statuses: Record<string, number> = {};
    const send = async (sent: RawRequest) => {
      const chunks = chunksOf(sent);
      let raw: Awaited<ReturnType<typeof exchange>>;
      try {
        // A short chunked body waits for its deadline; anything else is answered at once.
        raw = await exchange(server.port, chunks, 0, DEADLINE_MS + 10_000);
      } catch (error) {
        return void problems.push({ request: sent, problem: String(error).slice(0, 300) });
      }
      // Answered before its body had arrived, the connection closes: a client still sending may
      // meet the reset before it reads the answer (no lingering close, RFC 9112 §9.6).
      if (String(raw) === '' && (raw.error === 'ECONNRESET' || raw.error === 'EPIPE') && raw.written! < chunks.length) {
        statuses.reset = (statuses.reset ?? 0) + 1;
        return;
      }
      // `Expect: 100-continue` may get an interim 100 Continue before the answer.
      const answers = String(raw).split(/(?=HTTP\/1\.1 )/).filter((answer) => !answer.startsWith('HTTP/1.1 100 '));
      if (answers.length !== 1) return void problems.push({ request: sent, problem: `${answers.length} answers: ${JSON.stringify(String(raw).slice(0, 600))}` });
      const answer = parseAnswer(answers[0]!);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (!(answer.status >= 200 && answer.status < 500)) problems.push({ request: sent, problem: `status ${answer.status} ${JSON.stringify(String(raw).slice(0, 300))} ${raw.error ?? ''}` });
      if (answer.status >= 400 && answer.text && /\r\ncontent-type: application\/json/i.test(answer.head)) {
        const body = answer.body;
        if (body.requestId !== answer.requestId || !Array.isArray(body.errors) || !body.errors.every((e) => typeof e.name === 'string' && typeof e.code === 'number')) {
          problems.push({ request: sent, problem: `not the error object: ${answer.text.slice(0, 200)}` });
        }
      }
    };
    for (let start = 0; start < requests.length; start += PARALLEL) await Promise.all(requests.slice(start, start + PARALLEL).map(send));
    // Past every deadline: the timers of the requests above would have fired by now.
    await new Promise((resolve) => setTimeout(resolve, 2 * DEADLINE_MS + 500));

    console.log(`fuzz raw bodies: ${operations.length} operations, ${requests.length} requests (seed ${SEED}), statuses ${JSON.stringify(statuses)}, problems ${problems.length}`);
    for (const { request: sent, problem } of problems.slice(0, 10)) console.log(`  ${problem}\n    ${JSON.stringify({ ...sent, body: sent.body.framing === 'length' ? sent.body : { ...sent.body, bytes: sent.body.bytes } })}`);
    expect(uncaught.map(String)).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    expect(problems.map((p) => p.problem)).toEqual([]);
    // The attack itself was among the requests: bodies refused by their announced length.
    expect(statuses[413]).toBeGreaterThan(0);
  } finally {
    process.off('uncaughtException', record);
  }
});
