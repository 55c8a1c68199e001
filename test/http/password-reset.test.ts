/**
 * An admin's password-reset link for a member (issue 32 points 4 and 5, docs/api.md#password-reset),
 * as attacks through the real routes on a real database, each beside the case that must work: the
 * link works once (then replayed), expired, for a member of another contract, for a machine
 * client; an admin resetting an owner, or a member who is more elsewhere; the form without its CSRF
 * token or from another site; the member's old token after the reset; audit entries that must
 * carry no secret; the link by e-mail through a real SMTP server on 127.0.0.1.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { verifySecret } from '../../src/auth/secrets.ts';
import { createContract, type GrantRole, grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { build, buildTenant, buildUser, expectError } from '../helper.ts';
import { startSmtp } from '../smtp-receiver.ts';

const NEW_PASSWORD = 'a brand new passphrase';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A user granted `contractId` in `role`, with an access token. */
async function member(db: Db, contractId: string, role: GrantRole, name = `A ${role}`) {
  const user = await buildUser(db, { name });
  await grant(db, user.consumer.id, contractId, undefined, role);
  return user;
}

async function setup(env: Record<string, string> = {}) {
  const ctx = await build({ API_URL: 'https://api.sluice.test', AUTH_URL: 'https://auth.sluice.test', ...env });
  const tenant = await buildTenant(ctx.db);
  const contractId = tenant.contract.id;
  const admin = await member(ctx.db, contractId, 'admin', 'Ada Admin');
  const mo = await member(ctx.db, contractId, 'moderator', 'Mo Moderator');
  const reset = (token: string, consumerId: string, contract = contractId) =>
    ctx.app.inject({ method: 'POST', url: `/collection/contracts/${contract}/members/${consumerId}/password-reset`, headers: { authorization: `Bearer ${token}` } });
  const issue = async (consumerId = mo.consumer.id, token = admin.token) => {
    const res = await reset(token, consumerId);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { _id: string; link: string; expires: string; created: string; emailed: boolean; consumerId: string };
    return { ...body, path: new URL(body.link).pathname, token: new URL(body.link).pathname.split('/').pop()! };
  };
  const passwordHash = async (id: string) => (await ctx.db.selectFrom('consumers').select('passwordHash').where('id', '=', id).executeTakeFirstOrThrow()).passwordHash!;
  const whoAmI = (token: string) => ctx.app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${token}` } });
  return { ...ctx, tenant, contractId, admin, mo, reset, issue, passwordHash, whoAmI };
}
type Ctx = Awaited<ReturnType<typeof setup>>;

const NAVIGATE = { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

/** The link's page as a browser opens it, then its form posted with the page's CSRF token and cookie. */
async function setPassword(s: Ctx, path: string, password: string, options: { csrf?: boolean; headers?: Record<string, string> } = {}) {
  const page = await s.app.inject({ method: 'GET', url: path, headers: { ...NAVIGATE, 'sec-fetch-site': 'none' } });
  if (page.statusCode !== 200) return { page, post: page };
  const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const post = await s.app.inject({
    method: 'POST',
    url: path,
    headers: { cookie: `sluice_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded', ...NAVIGATE, 'sec-fetch-site': 'same-origin', ...options.headers },
    payload: new URLSearchParams({ ...(options.csrf === false ? {} : { _csrf: csrfToken }), password }).toString(),
  });
  return { page, post };
}

function refused(res: LightMyRequestResponse, status: number, name: string, code: number, propertyName: string) {
  expectError(res, status, { name, code, propertyName });
}

describe('password-reset link', () => {
  it('works once: the new password is set, the old one and every token of the member end; a replay changes nothing', async () => {
    const s = await setup();
    const before = await s.passwordHash(s.mo.consumer.id);
    expect((await s.whoAmI(s.mo.token)).statusCode).toBe(200);
    const link = await s.issue();
    expect(link).toMatchObject({ consumerId: s.mo.consumer.id, emailed: false });
    expect(link.link).toMatch(/^https:\/\/auth\.sluice\.test\/v1\/password-reset\/[\w-]{43}$/);
    expect(Date.parse(link.expires) - Date.parse(link.created)).toBe(24 * 3600 * 1000);
    // Only its hash is stored.
    const stored = await s.db.selectFrom('passwordResets').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(link.token);

    const { page, post } = await setPassword(s, link.path, NEW_PASSWORD);
    expect(page.body).toContain('Choose a new password');
    expect(page.body).toContain(s.mo.username);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(post.statusCode, post.body).toBe(200);
    expect(post.body).toContain('Your password is set');
    // Not signed in by the link: the sign-in applies whatever it asks.
    expect((post.cookies as { name: string }[]).some((c) => c.name === 'sluice_session')).toBe(false);

    expect(await verifySecret(NEW_PASSWORD, await s.passwordHash(s.mo.consumer.id))).toBe(true);
    expect(await verifySecret(s.mo.password, await s.passwordHash(s.mo.consumer.id))).toBe(false);
    // The member's token from before the reset is refused.
    refused(await s.whoAmI(s.mo.token), 401, 'AuthenticationError', 2001, 'access_token');

    // Replayed: the page says it was used; a post with a fresh form changes nothing.
    const after = await s.passwordHash(s.mo.consumer.id);
    const replay = await setPassword(s, link.path, 'an attacker password');
    expect(replay.page.statusCode).toBe(410);
    expect(replay.page.body).toContain('already used');
    expect(await s.passwordHash(s.mo.consumer.id)).toBe(after);
    expect(after).not.toBe(before);
  });

  it('a form opened before the link was used or expired changes nothing when posted after', async () => {
    const s = await setup();
    for (const end of ['use', 'expire'] as const) {
      const link = await s.issue();
      const page = await s.app.inject({ method: 'GET', url: link.path, headers: { ...NAVIGATE, 'sec-fetch-site': 'none' } });
      expect(page.statusCode).toBe(200);
      const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
      const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      if (end === 'expire') await s.db.updateTable('passwordResets').set({ expiresAt: Date.now() - 1 }).where('id', '=', link._id).execute();
      else expect((await setPassword(s, link.path, NEW_PASSWORD)).post.statusCode).toBe(200);
      const hash = await s.passwordHash(s.mo.consumer.id);
      const post = await s.app.inject({
        method: 'POST',
        url: link.path,
        headers: { cookie: `sluice_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded', ...NAVIGATE, 'sec-fetch-site': 'same-origin' },
        payload: new URLSearchParams({ _csrf: csrfToken, password: 'an attacker password' }).toString(),
      });
      expect(post.statusCode, post.body).toBe(410);
      expect(post.body).toContain(end === 'expire' ? 'expired' : 'already used');
      expect(await s.passwordHash(s.mo.consumer.id)).toBe(hash);
    }
  });

  it('using one link voids the other links of the member', async () => {
    const s = await setup();
    const first = await s.issue();
    const second = await s.issue();
    expect((await setPassword(s, second.path, NEW_PASSWORD)).post.statusCode).toBe(200);
    const stale = await setPassword(s, first.path, 'an attacker password');
    expect(stale.page.statusCode).toBe(410);
    expect(await verifySecret(NEW_PASSWORD, await s.passwordHash(s.mo.consumer.id))).toBe(true);
  });

  it('the form needs its CSRF token, a same-origin navigation and a valid password; an unknown link is 404; nothing changes otherwise', async () => {
    const s = await setup();
    const link = await s.issue();
    const hash = await s.passwordHash(s.mo.consumer.id);
    expect((await setPassword(s, link.path, NEW_PASSWORD, { csrf: false })).post.statusCode).toBe(403);
    const crossSite = await setPassword(s, link.path, NEW_PASSWORD, { headers: { 'sec-fetch-site': 'cross-site' } });
    refused(crossSite.post, 403, 'ForbiddenError', 3001, 'Sec-Fetch-Site');
    // A script's request for the page (not a navigation) is refused too.
    const fetched = await s.app.inject({ method: 'GET', url: link.path, headers: { accept: 'text/html', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'cross-site' } });
    expect(fetched.statusCode).toBe(403);
    const short = await setPassword(s, link.path, 'short');
    expect(short.post.statusCode).toBe(400);
    expect(short.post.body).toContain('8 to 1024 characters');
    expect(await s.passwordHash(s.mo.consumer.id)).toBe(hash);
    expect((await s.whoAmI(s.mo.token)).statusCode).toBe(200);
    const unknown = await s.app.inject({ method: 'GET', url: '/v1/password-reset/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', headers: { accept: 'text/html' } });
    expect(unknown.statusCode).toBe(404);
    // Still pending after the refusals.
    expect((await setPassword(s, link.path, NEW_PASSWORD)).post.statusCode).toBe(200);
  });

  it("refuses another contract's member (404), a machine client (409), an owner for an admin (403 role), a member who is more elsewhere (403 consumerId), an editor (403)", async () => {
    const s = await setup();
    const other = await createContract(s.db, 'Other Desk', 'test');
    const stranger = await member(s.db, other.id, 'viewer', 'Stranger');
    refused(await s.reset(s.admin.token, stranger.consumer.id), 404, 'NotFoundError', 4001, 'consumerId');
    // The tenant's machine client is an owner: an owner asks, to reach the client rule.
    const owner = await member(s.db, s.contractId, 'owner', 'Olga Owner');
    refused(await s.reset(owner.token, s.tenant.consumer.id), 409, 'ConflictError', 4091, 'consumerId');
    // An admin cannot reset an owner; an owner can.
    const res = await s.reset(s.admin.token, owner.consumer.id);
    expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
    expect(res.json().errors[0]).toMatchObject({ propertyValue: 'admin', reason: 'needs role owner' });
    const owner2 = await member(s.db, s.contractId, 'owner', 'Otto Owner');
    expect((await s.reset(owner.token, owner2.consumer.id)).statusCode).toBe(201);
    // A viewer here who owns another contract: the link would open that one too.
    const dual = await member(s.db, s.contractId, 'viewer', 'Dual');
    await grant(s.db, dual.consumer.id, other.id, undefined, 'owner');
    refused(await s.reset(s.admin.token, dual.consumer.id), 403, 'ForbiddenError', 3001, 'consumerId');
    // … unless the caller holds that contract in at least that role.
    await grant(s.db, owner.consumer.id, other.id, undefined, 'owner');
    expect((await s.reset(owner.token, dual.consumer.id)).statusCode).toBe(201);
    // An editor manages no team.
    const editor = await member(s.db, s.contractId, 'editor', 'Ed');
    refused(await s.reset(editor.token, s.mo.consumer.id), 403, 'ForbiddenError', 3001, 'role');
    // No link was made by any refusal.
    expect(await s.db.selectFrom('passwordResets').select('consumerId').execute()).toEqual(expect.arrayContaining([{ consumerId: owner2.consumer.id }, { consumerId: dual.consumer.id }]));
    expect((await s.db.selectFrom('passwordResets').select('id').execute()).length).toBe(2);
  });

  it('issue and use are audit entries without the token or the password', async () => {
    const s = await setup();
    const link = await s.issue();
    expect((await setPassword(s, link.path, NEW_PASSWORD)).post.statusCode).toBe(200);
    const entries = await s.db.selectFrom('auditEntries').selectAll().where('contractId', '=', s.contractId).execute();
    const text = JSON.stringify(entries);
    expect(text).not.toContain(link.token);
    expect(text).not.toContain(NEW_PASSWORD);
    const of = (resource: string, action: string) => entries.filter((e) => e.resource === resource && e.action === action);
    expect(of('password-reset', 'create')).toHaveLength(1);
    expect(of('password-reset', 'create')[0]).toMatchObject({ consumerId: s.admin.consumer.id });
    expect(of('password-reset', 'use')).toHaveLength(1);
    expect(of('password-reset', 'use')[0]).toMatchObject({ consumerId: s.mo.consumer.id });
    expect(of('account', 'password')).toHaveLength(1);
    // Listed through the audit API by its resource.
    const listed = await s.app.inject({ method: 'GET', url: `/collection/audit?contract_id=${s.contractId}&resource=password-reset`, headers: { authorization: `Bearer ${s.admin.token}` } });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.body).not.toContain(link.token);
  });

  it('is sent to the member by e-mail when SMTP is configured; a refusing relay still returns the link', async () => {
    const relay = await startSmtp();
    closers.push(() => relay.close());
    const s = await setup({ SMTP_URL: relay.url, SMTP_FROM: 'sluice@example.com' });
    const link = await s.issue();
    expect(link.emailed).toBe(true);
    const mail = relay.received[0]!;
    expect(mail.to).toEqual([`${s.mo.username}@example.com`]);
    expect(mail.header('subject')).toBe('Choose a new Sluice password (Acme News)');
    expect(mail.text).toContain(link.link);
    expect(mail.text).toContain('Ada Admin');
    relay.refuse = 'rcpt';
    const kept = await s.issue();
    expect(kept.emailed).toBe(false);
    expect((await setPassword(s, kept.path, NEW_PASSWORD)).post.statusCode).toBe(200);
  });
});
