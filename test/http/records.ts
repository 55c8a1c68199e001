/**
 * Shared set-up of the management record tests: two tenants on one app, and request helpers
 * that send a tenant's token.
 */
import { build, buildTenant } from '../helper.ts';

export async function setupRecords() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const other = await buildTenant(ctx.db, 'Other Corp');
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, token = tenant.token) =>
    ctx.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`, ...(payload !== undefined ? { payload: payload as object } : {}) });
  /** Creates a record and returns it (asserting 201). */
  const create = async (path: string, body: Record<string, unknown>, token = tenant.token) => {
    const res = await call('POST', path, body, token);
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const rule = (overrides: Record<string, unknown> = {}) => ({ operator: 'equals', field: 'service', value: 'rss', not: false, ...overrides });
  const bodies = {
    list: (over: Record<string, unknown> = {}) => ({ name: 'Bad words', contractId: tenant.contract.id, type: 'strings', entries: ['spam'], ...over }),
    set: (over: Record<string, unknown> = {}) => ({ name: 'Spam', contractId: tenant.contract.id, rules: [rule()], preCondition: rule({ operator: 'exists', field: 'text', value: undefined }), ...over }),
    chain: (over: Record<string, unknown> = {}) => ({ name: 'Main', contractId: tenant.contract.id, sets: [], ...over }),
    customization: (over: Record<string, unknown> = {}) => ({ name: 'Dark', contractId: tenant.contract.id, type: 'css', data: 'body{color:#000}', ...over }),
    collection: (over: Record<string, unknown> = {}) => ({ name: 'Sports', contractId: tenant.contract.id, ...over }),
  };
  return { ...ctx, tenant, other, call, create, rule, bodies };
}
