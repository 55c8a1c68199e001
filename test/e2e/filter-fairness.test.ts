/**
 * One contract's filter work cannot hold another's back (docs/filters.md#bounds, issue 30 point
 * 4), over real HTTP on 127.0.0.1: tenant A fires 12 dry runs at once with the costliest set the
 * bounds allow, each over its 5 s budget; tenant B then saves a one-pattern set. A's dry runs
 * beyond its share are answered 429 at once (before any of A's accepted ones is answered), and
 * B's set is saved while A's accepted dry runs are still being judged: order-based assertions,
 * no timing. The latency of B's save is printed for the record, not asserted.
 */
import { describe, expect, it } from 'vitest';
import { build, buildTenant } from '../helper.ts';
import { ab } from '../filter-cost.ts';


const DRY_RUNS = 12;
/** At least this many of A's dry runs are beyond its share (at most 4 workers: 3 running and 4 waiting). */
const AT_LEAST_REFUSED = 5;

describe('the filter pool between two contracts', () => {
  it("refuses A's excess dry runs at once (429) and saves B's set while A's are still judged", { timeout: 180_000 }, async () => {
    const ctx = await build();
    const a = await buildTenant(ctx.db, 'Tenant A');
    const b = await buildTenant(ctx.db, 'Tenant B');
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await fetch(`${base}${path}?access_token=${token}`, {
        method,
        ...(body ? { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as any };
    };
    const always = { operator: 'exists', field: 'id', not: false };

    // The costliest set the bounds allow (as test/e2e/filter-load.alone.test.ts): three rules of
    // 66 patterns `[ab]{990}`-like each, just under MAX_COMPILED_SIZE.
    const patterns = (rule: number) => Array.from({ length: 66 }, (_, i) => `/a[ab]{990}c${rule}_${i}/i`);
    const rules = [0, 1, 2].map((rule) => ({ operator: 'patternin', field: 'text', value: patterns(rule), not: false }));
    const created = await call('POST', '/collection/sets', a.token, { contractId: a.contract.id, name: 'costly', preCondition: always, rules });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const filterId = created.body._id as string;
    const dryRun = JSON.stringify({ contractId: a.contract.id, filterId, items: Array.from({ length: 1_000 }, (_, i) => ({ id: `x${i}`, text: ab(1_000, i) })) });

    // The answers in the order they arrive; once AT_LEAST_REFUSED of A's are in, all of A's dry
    // runs have reached the pool.
    const answers: string[] = [];
    let reached!: () => void;
    const firstAnswers = new Promise<void>((resolve) => (reached = resolve));
    const t0 = performance.now();
    const fromA = Array.from({ length: DRY_RUNS }, () =>
      call('POST', '/collection/filters/test', a.token, dryRun).then((answer) => {
        if (answers.push(`A ${answer.status}`) === AT_LEAST_REFUSED) reached();
        return answer;
      }),
    );
    await firstAnswers;
    // While A's share is full, A's own set save is refused too (its check runs in the same share).
    const ownSave = call('POST', '/collection/sets', a.token, { contractId: a.contract.id, name: 'another', preCondition: always, rules: [{ operator: 'pattern', field: 'text', value: '/x/', not: false }] });
    const bStart = performance.now();
    const fromB = await call('POST', '/collection/sets', b.token, { contractId: b.contract.id, name: 'one pattern', preCondition: always, rules: [{ operator: 'pattern', field: 'text', value: '/spam/i', not: false }] });
    const bLatency = performance.now() - bStart;
    const bSinceA = performance.now() - t0;
    answers.push(`B ${fromB.status}`);
    const aAnswers = await Promise.all(fromA);
    console.log(`B's one-pattern POST /collection/sets answered in ${bLatency.toFixed(0)} ms (${bSinceA.toFixed(0)} ms after A's ${DRY_RUNS} dry runs were sent; all of A's answered in ${(performance.now() - t0).toFixed(0)} ms); order: ${answers.join(', ')}`);

    expect(fromB.status, JSON.stringify(fromB.body)).toBe(201);
    // A's refused dry runs: 429 with the error object and Retry-After, every one before any accepted one.
    const refused = aAnswers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(AT_LEAST_REFUSED);
    for (const answer of refused) {
      expect(answer.body.errors).toEqual([{ name: 'RateLimitError', message: expect.any(String), code: 4291 }]);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    const firstJudged = answers.indexOf('A 400');
    expect(answers.slice(0, refused.length)).toEqual(refused.map(() => 'A 429'));
    // A's accepted dry runs each ran over the budget (400 naming filterId), and B's save came before
    // at most one of them was answered: A's queue did not stand in front of B.
    const judged = aAnswers.filter((answer) => answer.status === 400);
    expect(judged.length + refused.length).toBe(DRY_RUNS);
    for (const answer of judged) expect(answer.body.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'filterId', code: 1003 });
    const judgedBeforeB = answers.slice(0, answers.indexOf(`B ${fromB.status}`)).filter((answer) => answer === 'A 400').length;
    expect(judgedBeforeB, answers.join(', ')).toBeLessThanOrEqual(1);
    expect(firstJudged).toBeGreaterThan(0);
    // A's own save while its share was full: 429.
    const own = await ownSave;
    expect(own.status).toBe(429);
    expect(own.body.errors).toEqual([{ name: 'RateLimitError', message: expect.any(String), code: 4291 }]);
  });
});
