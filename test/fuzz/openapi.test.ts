/**
 * Fuzzing every operation of `GET /openapi.json` (issue 14): fast-check generates requests from
 * the operation's own schemas (path and query parameters, request body), valid ones and ones with
 * a single thing wrong (a parameter or property of the wrong kind, out of range, missing, hostile
 * text; a malformed or foreign body; another contract's token, none, or a bogus one), and sends
 * them in-process (`app.inject`) to the app on a real SQLite database seeded with a contract, its
 * collection and items, one resource of each kind, a token with access, and a second contract
 * with its own token and resources. Every answer must:
 *
 * - not be a 5xx;
 * - have a status the operation documents (listed explicitly: `default` documents 500 only);
 * - have a body that matches the documented schema of that status and media type (ajv);
 * - be the error object when it is an error with a JSON body.
 *
 * `FUZZ_REQUESTS` (default 2000) is the number of requests, shared evenly by the operations;
 * `FUZZ_SEED` the seed (default fixed, so that CI runs the same cases; set another to explore);
 * `FUZZ_POSTGRES=1` fuzzes the PostgreSQL database of TEST_DATABASE_URL instead of SQLite.
 * A failure prints the operation, the seed and the request. Rate limits are off here (their own
 * tests are in test/http/rate-limits.test.ts).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import fc, { type Arbitrary } from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { build, buildItem, buildTenant, seedItems, tempDir, testPostgresUrl } from '../helper.ts';
import { type Hints, type Schema, schemaArbitraries } from './arbitraries.ts';

const REQUESTS = Number(process.env.FUZZ_REQUESTS || 2000);
const SEED = Number(process.env.FUZZ_SEED || 14);

/** Whether `value`, as a path segment, leaves the request on its route: not empty, `.` or `..`. */
const nonEmptySegment = (value: unknown) => !['', '.', '..'].includes(String(value));

interface Operation {
  method: string;
  path: string;
  name: string;
  parameters: { name: string; in: string; required?: boolean; schema: Schema }[];
  body?: { type: string; schema: Schema; required: boolean };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  secured: boolean;
}

interface Request {
  operation: Operation;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  /** A raw body (malformed JSON, a foreign media type) instead of `body`. */
  raw?: { payload: string; type: string };
  token: 'mine' | 'other' | 'none' | 'bogus';
  tokenIn: 'query' | 'header';
  /** Raw text appended to the query string (malformed percent-encoding, stray separators). */
  rawQuery?: string;
}

/**
 * `encodeURIComponent`, except that a lone surrogate (which it refuses) becomes the bytes a
 * careless client would send for it (`%ED%A0%80`, not UTF-8): hostile input for the router.
 */
function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value.split(/([\ud800-\udfff])/).map((part) => (/^[\ud800-\udfff]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part))).join('');
  }
}

function operationsOf(document: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(document.paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      const content: Record<string, { schema: Schema }> | undefined = op.requestBody?.content;
      const type = content ? Object.keys(content)[0]! : undefined;
      out.push({
        method: method.toUpperCase(),
        path,
        name: `${method.toUpperCase()} ${path}`,
        parameters: op.parameters ?? [],
        body: content && type ? { type, schema: content[type]!.schema, required: op.requestBody.required === true } : undefined,
        responses: op.responses ?? {},
        secured: Array.isArray(op.security) && op.security.some((s: Schema) => 'access_token' in s || 'bearer' in s),
      });
    }
  }
  // Deletions last, so that the other operations find the seeded resources.
  return out.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** Seeds two tenants with one resource of each kind; returns the tokens and the known values. */
async function seed(app: FastifyInstance, db: Parameters<typeof buildTenant>[0]) {
  const mine = await buildTenant(db, 'Acme News');
  const other = await buildTenant(db, 'Other Corp');
  const resources: Record<string, string[]> = {};
  const create = async (token: string, path: string, body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `${path}?access_token=${token}`, payload: body });
    if (res.statusCode !== 201) throw new Error(`seeding ${path}: ${res.statusCode} ${res.body}`);
    const id = res.json()._id as string;
    (resources[path] ??= []).push(id);
    return id;
  };
  for (const tenant of [mine, other]) {
    const contractId = tenant.contract.id;
    const rule = { operator: 'equals', field: 'service', value: 'rss', not: false };
    const list = await create(tenant.token, '/collection/lists', { name: 'Bad words', contractId, type: 'strings', entries: ['spam'] });
    const set = await create(tenant.token, '/collection/sets', { name: 'Spam', contractId, rules: [rule, { operator: 'in', field: 'text', listId: list, not: false }], preCondition: { ...rule, operator: 'exists', field: 'text', value: undefined } });
    await create(tenant.token, '/collection/chains', { name: 'Main', contractId, sets: [set] });
    await create(tenant.token, '/publication/customizations', { name: 'Dark', contractId, type: 'css', data: 'body{color:#000}' });
    await create(tenant.token, '/collection/inputs', { service: 'rss', type: 'feed', input: 'https://example.com/feed.xml', contractId, collectionId: tenant.collection.id });
    await create(tenant.token, '/collection/collections', { name: 'Sports', contractId });
    await seedItems(db, tenant, [buildItem({ id: 'rss_1' }), buildItem({ id: 'rss_2', children: [buildItem({ id: 'rss_3' })] as never }), buildItem({ id: 'twitter_9', service: 'twitter', type: 'status' })]);
  }
  const ids = [...Object.values(resources).flat(), mine.collection.id, other.collection.id];
  const hints: Hints = {
    contractId: [mine.contract.id, other.contract.id],
    contract_id: [mine.contract.id, other.contract.id],
    contract: [mine.contract.slug, mine.contract.id, other.contract.slug],
    collectionId: [mine.collection.id, other.collection.id],
    collection_id: [mine.collection.id, other.collection.id],
    id: [...ids, 'rss_1', 'rss_2', 'twitter_9'],
    ids: [[ids[0]], ids.slice(0, 3)],
    filterId: [...(resources['/collection/sets'] ?? []), ...(resources['/collection/chains'] ?? [])],
    listId: resources['/collection/lists'] ?? [],
    sets: [resources['/collection/sets'] ?? []],
    q: ['world-news', 'sports'],
    service: ['rss', 'twitter', 'rss,twitter'],
    client_id: [mine.clientId, 'sluice-console'],
    grant_type: ['client_credentials', 'refresh_token', 'authorization_code'],
  };
  return { tokens: { mine: mine.token, other: other.token }, hints };
}

it('answers every generated request of every operation as /openapi.json documents it', { timeout: 600_000 }, async () => {
  const dir = tempDir();
  // SQLite, also in the suite's PostgreSQL run, unless FUZZ_POSTGRES=1 asks for TEST_DATABASE_URL.
  const database: Record<string, string> = process.env.FUZZ_POSTGRES === '1' && testPostgresUrl ? {} : { DATABASE_URL: `sqlite:${dir}/fuzz.db` };
  const { app, db } = await build({ ...database, RATE_LIMIT_CONSUMER: '0', RATE_LIMIT_PUBLIC: '0' });
  const { tokens, hints } = await seed(app, db);
  /** The slugs of every collection (the fuzzed creations included), read before the stream is fuzzed. */
  const slugs = new Set<string>();
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Schema;
  const arbitraries = schemaArbitraries(document, hints);
  const operations = operationsOf(document);

  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addSchema({ $id: 'openapi.json', components: document.components });
  const compiled = new Map<Schema, ValidateFunction>();
  const validatorOf = (schema: Schema) => {
    let validate = compiled.get(schema);
    if (!validate) {
      const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'));
      validate = ajv.compile(rewritten);
      compiled.set(schema, validate);
    }
    return validate;
  };

  const requestOf = (operation: Operation): Arbitrary<Request> => {
    const param = (p: Operation['parameters'][number]) => {
      let arbitrary = arbitraries.valid(p.schema, p.name);
      // The stream of an existing collection never ends: only its refusals are fuzzed here (test/http/stream.test.ts reads it).
      if (operation.path.endsWith('/stream') && p.name === 'q') arbitrary = arbitrary.filter((q) => !slugs.has(String(q)));
      // An empty path segment is another route (or none): not a request of this operation.
      if (p.in === 'path') arbitrary = arbitrary.filter(nonEmptySegment);
      return p.required ? arbitrary : fc.option(arbitrary, { nil: undefined, freq: 2 });
    };
    const inPart = (part: string) => Object.fromEntries(operation.parameters.filter((p) => p.in === part && p.name !== 'access_token').map((p) => [p.name, param(p)]));
    const valid = fc.record({
      operation: fc.constant(operation),
      path: fc.record(inPart('path')),
      query: fc.record(inPart('query')),
      body: operation.body ? arbitraries.valid(operation.body.schema) : fc.constant(undefined),
      token: operation.secured ? fc.constantFrom<Request['token']>('mine', 'mine', 'mine', 'mine', 'other', 'none', 'bogus') : fc.constantFrom<Request['token']>('none', 'none', 'mine'),
      tokenIn: fc.constantFrom<Request['tokenIn']>('query', 'header'),
    }) as Arbitrary<Request>;
    const parts = operation.parameters.filter((p) => p.name !== 'access_token');
    const mutations: Arbitrary<(request: Request) => Request>[] = [];
    if (parts.length > 0) {
      mutations.push(
        fc.constantFrom(...parts).chain((p) =>
          fc.oneof(
            arbitraries
              .invalid(p.schema)
              .filter((bad) => p.in !== 'path' || nonEmptySegment(bad))
              .map((bad) => (r: Request) => ({ ...r, [p.in]: { ...(r[p.in as 'path' | 'query'] as object), [p.name]: bad } })),
            fc.constant((r: Request) => (p.in === 'query' ? { ...r, query: { ...r.query, [p.name]: '' } } : r)),
            fc.constant((r: Request) => (p.in === 'query' ? { ...r, query: Object.fromEntries(Object.entries(r.query).filter(([k]) => k !== p.name)) } : r)),
          ),
        ),
      );
    }
    if (operation.body) {
      const schema = operation.body.schema;
      mutations.push(
        arbitraries.invalid(schema).map((bad) => (r: Request) => ({ ...r, body: bad })),
        fc.constantFrom('{', '{"a":', '[1,]', 'null', '"x"', '\u0000', '{"__proto__":{"x":1}}').map((payload) => (r: Request) => ({ ...r, raw: { payload, type: operation.body!.type } })),
        fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x').map((type) => (r: Request) => ({ ...r, raw: { payload: 'x=1', type } })),
      );
    }
    mutations.push(
      fc.constant((r: Request) => ({ ...r, query: { ...r.query, unknown_parameter: 'x' } })),
      fc.constantFrom('&q=%ff%fe', '&%', '&callback=%E0%A4%A', '&&&=&==', '&q[]=a&q[]=b', '&count=1&count=2').map((rawQuery) => (r: Request) => ({ ...r, rawQuery })),
    );
    const requests = fc.oneof(
      { weight: 1, arbitrary: valid },
      { weight: 1, arbitrary: fc.tuple(valid, fc.oneof(...mutations)).map(([request, mutate]) => mutate(request)) },
    );
    return operation.path.endsWith('/stream') ? requests.filter((r) => !slugs.has(String(r.query.q)) && !(r.rawQuery ?? '').includes('q')) : requests;
  };

  const injectOf = (request: Request): InjectOptions => {
    const { operation } = request;
    const url = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeSegment(String(request.path[name])));
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query)) {
      if (value === undefined) continue;
      search.append(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    const headers: Record<string, string> = {};
    const token = request.token === 'mine' ? tokens.mine : request.token === 'other' ? tokens.other : request.token === 'bogus' ? 'bogus-token' : undefined;
    if (token && request.tokenIn === 'query') search.set('access_token', token);
    if (token && request.tokenIn === 'header') headers.authorization = `Bearer ${token}`;
    const query = search.toString() + (request.rawQuery ?? '');
    const options: InjectOptions = { method: operation.method as InjectOptions['method'], url: `${url}${query ? `?${query}` : ''}`, headers };
    if (request.raw) {
      headers['content-type'] = request.raw.type;
      options.payload = request.raw.payload;
    } else if (operation.body && request.body !== undefined) {
      if (operation.body.type === 'application/x-www-form-urlencoded' && request.body && typeof request.body === 'object' && !Array.isArray(request.body)) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        options.payload = new URLSearchParams(Object.entries(request.body).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
      } else {
        headers['content-type'] = 'application/json';
        options.payload = JSON.stringify(request.body);
      }
    }
    return options;
  };

  /** What is wrong with `res` as an answer of `operation`; empty when nothing is. */
  const problemsOf = (operation: Operation, res: LightMyRequestResponse): string[] => {
    const problems: string[] = [];
    if (res.statusCode >= 500) problems.push(`5xx: ${res.statusCode}`);
    const documented = operation.responses[String(res.statusCode)];
    if (!documented) return [...problems, `undocumented status ${res.statusCode}`];
    const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!documented.content) {
      if (res.body.length > 0 && res.statusCode !== 302 && res.statusCode !== 303) problems.push(`status ${res.statusCode} documents no body, got ${type}`);
      return problems;
    }
    const media = documented.content[type];
    if (!media) return [...problems, `status ${res.statusCode}: undocumented media type "${type}"`];
    if (type === 'application/json') {
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {
        return [...problems, `status ${res.statusCode}: body is not JSON`];
      }
      const validate = validatorOf(media.schema);
      if (!validate(body)) problems.push(`schema mismatch (${res.statusCode}): ${ajv.errorsText(validate.errors)}`);
      if (res.statusCode >= 400 && !validatorOf({ $ref: '#/components/schemas/ErrorObject' })(body)) problems.push(`error ${res.statusCode} is not the error object`);
    }
    return problems;
  };

  const perOperation = Math.max(1, Math.ceil(REQUESTS / operations.length));
  const statuses: Record<string, number> = {};
  const failures: { operation: string; problem: string; request: string }[] = [];
  let requests = 0;
  for (const operation of operations) {
    if (operation.path.endsWith('/stream')) for (const { slug } of await db.selectFrom('collections').select('slug').execute()) slugs.add(slug);
    await fc.assert(
      fc.asyncProperty(requestOf(operation), async (request) => {
        const options = injectOf(request);
        const res = await app.inject(options);
        requests++;
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        for (const problem of problemsOf(operation, res)) {
          failures.push({ operation: operation.name, problem, request: JSON.stringify({ ...options, response: res.body.slice(0, 300) }) });
        }
      }),
      { numRuns: perOperation, seed: SEED, endOnFailure: true },
    );
  }

  const fivexx = Object.entries(statuses).filter(([status]) => Number(status) >= 500).reduce((n, [, count]) => n + count, 0);
  const mismatches = failures.filter((f) => !f.problem.startsWith('5xx')).length;
  console.log(
    `fuzz: ${operations.length} operations, ${requests} requests (seed ${SEED}), 5xx ${fivexx}, problems ${failures.length} (schema/status ${mismatches}); statuses ${JSON.stringify(statuses)}`,
  );
  const byKind = new Map<string, (typeof failures)[number]>();
  for (const failure of failures) byKind.set(`${failure.operation} | ${failure.problem.slice(0, 120)}`, failure);
  for (const [kind, failure] of byKind) console.log(`  ${kind}\n    ${failure.request.slice(0, 1500)}`);
  expect(requests).toBeGreaterThanOrEqual(operations.length);
  expect([...byKind.keys()]).toEqual([]);
});
