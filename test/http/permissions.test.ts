/**
 * The permission table (issue 32, docs/api.md#roles-and-scopes) checked against the operations
 * of `/openapi.json`:
 *
 * 1. No operation of `/openapi.json` is missing from the table, no entry of the table names a
 *    route that does not exist, and a route registered without an entry stops the app.
 * 2. Every operation × every role (and no grant) × a token lacking each scope → the decision the
 *    issue's policy gives, stated independently of the table (`expectedOf` of ./policy.ts, by path
 *    and method), at the permission layer (pure, fast).
 * 3. Over real HTTP on a real database, one representative operation of every permission class ×
 *    every role, and × a token lacking the class's scope: 2xx or 403 as the table says.
 * 4. A contract operation whose handler forgot the contract check answers 500, not the data.
 */
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { allows, operationId, type Permission, PERMISSIONS, permissionOf } from '../../src/http/permissions.ts';
import { GRANT_ROLES, type GrantRole, grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { type Scope, SCOPES } from '../../src/store/tokens.ts';
import { build, buildItem, buildTenant, buildUser, expectError, seedItems } from '../helper.ts';
import { expectedDecision, expectedOf } from './policy.ts';

/** The operations of `/openapi.json` as `METHOD /path`. */
async function documentedOperations(): Promise<{ ops: string[]; ctx: Awaited<ReturnType<typeof build>> }> {
  const ctx = await build({ METRICS_TOKEN: 'metrics-token-of-the-test-0123456789' });
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  return { ops, ctx };
}

describe('the permission table covers /openapi.json', () => {
  it('has an entry for every documented operation, and every entry is a registered route', async () => {
    const { ops, ctx } = await documentedOperations();
    expect(ops.length).toBeGreaterThan(90);
    expect(ops.filter((op) => !permissionOf(op))).toEqual([]);
    // No stale entry: each names a route of the app (hidden ones, such as /docs and the console, included).
    const stale = Object.keys(PERMISSIONS).filter((op) => {
      const [method, path] = op.split(' ') as [string, string];
      return !ctx.app.hasRoute({ method: method as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') });
    });
    expect(stale).toEqual([]);
    // Each operation that needs a role or a scope documents the 403 of its refusal.
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const without403 = ops.filter((op) => {
      const [method, path] = op.split(' ') as [string, string];
      const permission = permissionOf(op)!;
      const refusable = permission.access === 'contract' || (permission.access === 'token' && permission.scope !== null);
      return refusable && !doc.paths[path]![method.toLowerCase()]!.responses['403'];
    });
    expect(without403).toEqual([]);
  });

  it('refuses to register a route without an entry, so that none can be forgotten', async () => {
    const { app } = await build();
    expect(() => app.get('/collection/forgotten', async () => ({}))).toThrow(/No entry in the permission table .*GET \/collection\/forgotten/);
    expect(operationId('HEAD', '/collection/inputs/:id')).toBe('GET /collection/inputs/{id}');
  });

  it('decides every operation × role × missing scope as the policy says', async () => {
    const { ops } = await documentedOperations();
    const roles: (GrantRole | undefined)[] = [undefined, ...GRANT_ROLES];
    const tokens: (readonly Scope[])[] = [SCOPES, ...SCOPES.map((missing) => SCOPES.filter((scope) => scope !== missing))];
    const wrong: string[] = [];
    let decisions = 0;
    for (const op of ops) {
      const [method, path] = op.split(' ') as [string, string];
      const expected = expectedOf(method, path);
      const permission = permissionOf(op)!;
      expect(permission, op).toEqual(expected as Permission);
      for (const role of roles) {
        for (const scopes of tokens) {
          decisions++;
          if (allows(permission, role, scopes) !== expectedDecision(expected, role, scopes)) wrong.push(`${op} as ${role ?? 'no grant'} with ${scopes.join(' ')}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(decisions).toBe(ops.length * 6 * 7);
  });
});

/** A representative operation of each permission class: how to call it (a fresh request each time) and its class. */
interface Case {
  op: string;
  call: (token: string, n: number) => { method: 'GET' | 'POST' | 'PATCH' | 'PUT'; url: string; payload?: object };
}

async function world() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_one' })], 'unpublished');
  const slug = tenant.contract.slug;
  const contractId = tenant.contract.id;
  const q = tenant.collection.slug;
  const cases: Case[] = [
    { op: 'GET /v1/queue/{contract}', call: () => ({ method: 'GET', url: `/v1/queue/${slug}?q=${q}` }) },
    { op: 'PATCH /v1/queue/{contract}', call: (_t, n) => ({ method: 'PATCH', url: `/v1/queue/${slug}?q=${q}&id=rss_one`, payload: { state: n % 2 ? 'published' : 'unpublished' } }) },
    { op: 'GET /collection/collections', call: () => ({ method: 'GET', url: `/collection/collections?contract_id=${contractId}` }) },
    { op: 'POST /collection/lists', call: (_t, n) => ({ method: 'POST', url: '/collection/lists', payload: { name: `List ${n}`, contractId, type: 'strings', entries: ['spam'] } }) },
    { op: 'POST /collection/filters/test', call: () => ({ method: 'POST', url: '/collection/filters/test', payload: { contractId, set: { rules: [], preCondition: { operator: 'exists', field: 'text', not: false } }, items: [] } }) },
    { op: 'GET /collection/webhooks', call: () => ({ method: 'GET', url: `/collection/webhooks?contract_id=${contractId}` }) },
    { op: 'GET /collection/contracts/{id}/members', call: () => ({ method: 'GET', url: `/collection/contracts/${contractId}/members` }) },
    // The owner's class: requiring two-factor sign-in (false: the owner's own account needs none for that).
    { op: 'PUT /collection/contracts/{id}/two-factor', call: () => ({ method: 'PUT', url: `/collection/contracts/${contractId}/two-factor`, payload: { required: false } }) },
    // The admins' changes (an erasure: irreversible, docs/api.md#erasure); each a new author without items.
    { op: 'POST /collection/erasures', call: (_t, n) => ({ method: 'POST', url: '/collection/erasures', payload: { contractId, service: 'rss', author: { name: `Nobody ${n}` } } }) },
    { op: 'GET /collection/audit', call: () => ({ method: 'GET', url: `/collection/audit?contract_id=${contractId}` }) },
    { op: 'GET /collection/services', call: () => ({ method: 'GET', url: '/collection/services' }) },
    { op: 'GET /v1/oauth/me', call: () => ({ method: 'GET', url: '/v1/oauth/me' }) },
    { op: 'GET /v1/content/{contract}', call: () => ({ method: 'GET', url: `/v1/content/${slug}?q=${q}` }) },
  ];
  return { ...ctx, tenant, cases };
}

/** A user granted the contract in `role` (none: granted nothing), with a token of `scopes`. */
async function holder(db: Db, contractId: string, role: GrantRole | undefined, scopes: readonly Scope[] = SCOPES) {
  const user = await buildUser(db, { name: `The ${role ?? 'stranger'}` });
  if (role) await grant(db, user.consumer.id, contractId, undefined, role);
  const { access_token: token } = await issueTokens(db, user.consumer.id, { ttlSeconds: 3600, withRefresh: false, scope: scopes });
  return token;
}

describe('the table enforced on real routes', () => {
  it('a representative operation of every class × every role: 2xx when allowed, 403 naming the role otherwise', async () => {
    const w = await world();
    let n = 0;
    const classes = new Set(w.cases.map((c) => JSON.stringify(permissionOf(c.op))));
    // Every class of the table (each distinct entry) is represented by one operation.
    expect(new Set(Object.values(PERMISSIONS).map((p) => JSON.stringify(p)))).toEqual(classes);
    for (const role of [undefined, ...GRANT_ROLES]) {
      const token = await holder(w.db, w.tenant.contract.id, role);
      for (const c of w.cases) {
        const permission = permissionOf(c.op)!;
        const request = c.call(token, n++);
        const res = await w.app.inject({ ...request, headers: { authorization: `Bearer ${token}` } });
        const label = `${c.op} as ${role ?? 'no grant'}: ${res.body}`;
        if (allows(permission, role, SCOPES)) {
          expect(res.statusCode, label).toBeGreaterThanOrEqual(200);
          expect(res.statusCode, label).toBeLessThan(300);
        } else {
          expect(res.statusCode, label).toBe(403);
          // A role too low is named (`role`); without a grant, the contract is refused as before.
          expect(res.json().errors[0], label).toMatchObject(role ? { name: 'ForbiddenError', propertyName: 'role', reason: `needs role ${permission.access === 'contract' ? permission.role : ''}` } : { name: 'ForbiddenError' });
        }
      }
    }
  });

  it('a token lacking each scope: 403 insufficient_scope on the operations that need it, the others unaffected', async () => {
    const w = await world();
    let n = 1000;
    for (const missing of SCOPES) {
      const token = await holder(w.db, w.tenant.contract.id, 'owner', SCOPES.filter((scope) => scope !== missing));
      for (const c of w.cases) {
        const permission = permissionOf(c.op)!;
        const res = await w.app.inject({ ...c.call(token, n++), headers: { authorization: `Bearer ${token}` } });
        const label = `${c.op} without ${missing}: ${res.body}`;
        if (permission.access !== 'public' && permission.scope === missing) {
          expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'scope' });
          expect(res.headers['www-authenticate'], label).toMatch(new RegExp(`^Bearer error="insufficient_scope", .*scope="${missing}"$`));
        } else {
          expect(res.statusCode, label).toBeLessThan(300);
        }
      }
    }
  });

  it('a contract operation whose handler forgot the contract check answers 500, not the data', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    // A handler under a contract operation's id that authenticates but never checks the contract.
    app.get('/collection/careless/:id', { config: { operation: 'GET /collection/jobs/{id}' } }, async () => ({ secret: 'of another contract' }));
    const res = await app.inject({ method: 'GET', url: `/collection/careless/x?access_token=${tenant.token}` });
    expectError(res, 500, { name: 'InternalError', code: 5001 });
    expect(res.body).not.toContain('of another contract');
  });
});
