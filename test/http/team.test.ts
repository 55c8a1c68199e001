/**
 * The team of a contract (issue 32 points 3 and 5, docs/api.md#team, #invitations,
 * #accepting-an-invitation), as attacks through the real routes on a real database, each beside
 * the case that must work: an invitation accepted once (then replayed), expired, withdrawn, used
 * on another contract; the last owner demoted or removed; a removed member's token; an editor,
 * a moderator or an admin reaching above their role; audit entries that must carry no secret.
 */
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { createContract, type GrantRole, grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { build, buildItem, buildTenant, buildUser, expectError, seedItems } from '../helper.ts';

const CODES: Record<string, number> = { ForbiddenError: 3001, NotFoundError: 4001, ConflictError: 4091, AuthenticationError: 2001 };

/** `expectError` with the code of `name` (a ValidationError's code is the kind of fault: any), then the entry's other fields (`reason`, `propertyValue`) matched. */
function refused(res: LightMyRequestResponse, status: number, { name, propertyName, ...more }: { name: string; propertyName?: string; [key: string]: unknown }) {
  const body = name === 'ValidationError' ? res.json() : expectError(res, status, { name, code: CODES[name]!, ...(propertyName ? { propertyName } : {}) });
  expect(res.statusCode, res.body).toBe(status);
  expect(body.errors[0], res.body).toMatchObject({ name, ...(propertyName ? { propertyName } : {}), ...more });
  return body as { errors: Record<string, unknown>[] };
}

type Ctx = Awaited<ReturnType<typeof build>>;

/** A user granted `contractId` in `role`, with an access token of every scope. */
async function member(db: Db, contractId: string, role: GrantRole, name = `A ${role}`) {
  const user = await buildUser(db, { name });
  await grant(db, user.consumer.id, contractId, undefined, role);
  return user;
}

async function setup() {
  const ctx = await build({ API_URL: 'https://api.sluice.test', AUTH_URL: 'https://auth.sluice.test' });
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_one' })], 'unpublished');
  const contractId = tenant.contract.id;
  const admin = await member(ctx.db, contractId, 'admin', 'Ada Admin');
  const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    ctx.app.inject({ method, url: `/collection/contracts/${contractId}${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
  const invite = async (role: GrantRole = 'moderator', email = 'mo@example.com') => {
    const res = await call(admin.token, 'POST', '/invitations', { name: 'Mo Moderator', email, role });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { _id: string; link: string; role: string; emailed: boolean };
    return { ...body, path: new URL(body.link).pathname };
  };
  const readQueue = (token: string) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}`, headers: { authorization: `Bearer ${token}` } });
  return { ...ctx, tenant, contractId, admin, call, invite, readQueue };
}

/** The invitation page as a browser opens it, then its form posted with the page's CSRF token and cookie. */
async function accept(ctx: Ctx, path: string, username: string, password: string, options: { csrf?: boolean; headers?: Record<string, string> } = {}) {
  const page = await ctx.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' } });
  if (page.statusCode !== 200) return { page, post: page };
  const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const post = await ctx.app.inject({
    method: 'POST',
    url: path,
    headers: {
      cookie: `sluice_csrf=${csrfCookie}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
      'sec-fetch-site': 'same-origin',
      ...options.headers,
    },
    payload: new URLSearchParams({ ...(options.csrf === false ? {} : { _csrf: csrfToken }), username, password }).toString(),
  });
  return { page, post };
}

const usersNamed = async (db: Db, username: string) => (await db.selectFrom('consumers').select('id').where('username', '=', username).execute()).length;

/** A token for the user `username` (as the console would get after the redirect). */
async function tokenOf(db: Db, username: string) {
  const user = await db.selectFrom('consumers').selectAll().where('username', '=', username).executeTakeFirstOrThrow();
  return { user, token: (await issueTokens(db, user.id, { ttlSeconds: 3600, withRefresh: false })).access_token };
}

describe('invitations', () => {
  it('an invitation is accepted once: the user is created in its role, signed in and sent to the console; a replay creates nothing', async () => {
    const s = await setup();
    const invitation = await invite(s);
    expect(invitation).toMatchObject({ role: 'moderator', emailed: false, name: 'Mo Moderator', email: 'mo@example.com', invitedBy: 'Ada Admin' });
    expect(invitation.link).toMatch(/^https:\/\/auth\.sluice\.test\/v1\/invitations\/[\w-]{43}$/);
    // The pending list never shows the link or its token.
    const pending = await s.call(s.admin.token, 'GET', '/invitations');
    expect(pending.json()).toEqual([expect.objectContaining({ _id: invitation._id, role: 'moderator' })]);
    expect(pending.body).not.toContain(invitation.path.split('/').pop());
    // Only its hash is stored.
    const stored = await s.db.selectFrom('invitations').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(invitation.path.split('/').pop());

    const { page, post } = await accept(s, invitation.path, 'mo', 'correct horse battery');
    expect(page.body).toContain('Join Acme News');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(post.statusCode, post.body).toBe(303);
    expect(post.headers.location).toBe('https://api.sluice.test/console/');
    expect((post.cookies as { name: string }[]).some((c) => c.name === 'sluice_session')).toBe(true);

    const { user, token } = await tokenOf(s.db, 'mo');
    expect(user).toMatchObject({ name: 'Mo Moderator', email: 'mo@example.com', type: 'user' });
    const members = (await s.call(s.admin.token, 'GET', '/members')).json() as { consumerId: string; role: string; lastSignIn: string | null; type: string }[];
    expect(members.find((m) => m.consumerId === user.id)).toMatchObject({ role: 'moderator', type: 'user', lastSignIn: expect.any(String) });
    // The moderator moderates; is no admin.
    const moderated = await s.app.inject({ method: 'PATCH', url: `/v1/queue/${s.tenant.contract.slug}?q=${s.tenant.collection.slug}&id=rss_one`, headers: { authorization: `Bearer ${token}` }, payload: { state: 'published' } });
    expect(moderated.statusCode, moderated.body).toBe(200);
    refused(await s.call(token, 'GET', '/members'), 403, { name: 'ForbiddenError', propertyName: 'role', reason: 'needs role admin' });
    expect((await s.call(s.admin.token, 'GET', '/invitations')).json()).toEqual([]);

    // Replayed: the page says it was used; posting again creates nobody.
    const replay = await accept(s, invitation.path, 'mo2', 'correct horse battery');
    expect(replay.page.statusCode).toBe(410);
    expect(replay.page.body).toContain('already used');
    const direct = await s.app.inject({ method: 'POST', url: invitation.path, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, payload: 'username=mo2&password=correct+horse+battery' });
    expect([403, 410]).toContain(direct.statusCode);
    expect(await usersNamed(s.db, 'mo2')).toBe(0);
  });

  it('an expired invitation shows a clear page and creates nothing', async () => {
    const s = await setup();
    const invitation = await invite(s);
    const page = await s.app.inject({ method: 'GET', url: invitation.path, headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    await s.db.updateTable('invitations').set({ expiresAt: Date.now() - 1 }).where('id', '=', invitation._id).execute();
    const again = await accept(s, invitation.path, 'late', 'correct horse battery');
    expect(again.page.statusCode).toBe(410);
    expect(again.page.body).toContain('expired');
    expect(await usersNamed(s.db, 'late')).toBe(0);
    expect((await s.call(s.admin.token, 'GET', '/invitations')).json()).toEqual([]);
  });

  it('a form posted after the invitation expired or was withdrawn creates nothing', async () => {
    const s = await setup();
    for (const end of ['expire', 'withdraw'] as const) {
      const invitation = await invite(s, 'viewer', `${end}@example.com`);
      const page = await s.app.inject({ method: 'GET', url: invitation.path, headers: { accept: 'text/html' } });
      const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
      const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      if (end === 'expire') await s.db.updateTable('invitations').set({ expiresAt: Date.now() - 1 }).where('id', '=', invitation._id).execute();
      else expect((await s.call(s.admin.token, 'DELETE', `/invitations/${invitation._id}`)).statusCode).toBe(204);
      const post = await s.app.inject({
        method: 'POST',
        url: invitation.path,
        headers: { cookie: `sluice_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: new URLSearchParams({ _csrf: csrfToken, username: `${end}-user`, password: 'correct horse battery' }).toString(),
      });
      expect(post.statusCode, post.body).toBe(410);
      expect(post.body).toContain(end === 'expire' ? 'expired' : 'withdrawn');
      expect(await usersNamed(s.db, `${end}-user`)).toBe(0);
    }
  });

  it('a withdrawn invitation stops working; withdrawing twice is 404', async () => {
    const s = await setup();
    const invitation = await invite(s);
    expect((await s.call(s.admin.token, 'DELETE', `/invitations/${invitation._id}`)).statusCode).toBe(204);
    const { page } = await accept(s, invitation.path, 'gone', 'correct horse battery');
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('withdrawn');
    refused(await s.call(s.admin.token, 'DELETE', `/invitations/${invitation._id}`), 404, { name: 'NotFoundError', propertyName: 'invitationId' });
    expect(await usersNamed(s.db, 'gone')).toBe(0);
  });

  it('the form needs its CSRF token and a same-origin navigation; an unknown link is 404; nothing is created otherwise', async () => {
    const s = await setup();
    const invitation = await invite(s);
    const noCsrf = await accept(s, invitation.path, 'forged', 'correct horse battery', { csrf: false });
    expect(noCsrf.post.statusCode).toBe(403);
    const crossSite = await accept(s, invitation.path, 'forged', 'correct horse battery', { headers: { 'sec-fetch-site': 'cross-site' } });
    refused(crossSite.post, 403, { name: 'ForbiddenError', propertyName: 'Sec-Fetch-Site' });
    expect(await usersNamed(s.db, 'forged')).toBe(0);
    const short = await accept(s, invitation.path, 'shorty', 'short');
    expect(short.post.statusCode).toBe(400);
    expect(short.post.body).toContain('at least 8 characters');
    const taken = await accept(s, invitation.path, s.admin.username, 'correct horse battery');
    expect(taken.post.statusCode).toBe(400);
    expect(taken.post.body).toContain('taken');
    // Still pending after the refusals.
    expect((await accept(s, invitation.path, 'mo', 'correct horse battery')).post.statusCode).toBe(303);
    const unknown = await s.app.inject({ method: 'GET', url: '/v1/invitations/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', headers: { accept: 'text/html' } });
    expect(unknown.statusCode).toBe(404);
  });

  it("a token of contract A cannot manage B's members or invitations", async () => {
    const s = await setup();
    const other = await createContract(s.db, 'Other Desk', 'test');
    const otherOwner = await member(s.db, other.id, 'owner', 'Otto Owner');
    const theirs = await s.app.inject({ method: 'POST', url: `/collection/contracts/${other.id}/invitations`, headers: { authorization: `Bearer ${otherOwner.token}` }, payload: { name: 'X', email: 'x@example.com', role: 'viewer' } });
    expect(theirs.statusCode).toBe(201);
    const otherInvitation = theirs.json()._id as string;
    const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
      s.app.inject({ method, url: `/collection/contracts/${other.id}${path}`, headers: { authorization: `Bearer ${s.admin.token}` }, ...(payload ? { payload } : {}) });
    const answers: LightMyRequestResponse[] = [
      await as('GET', '/members'),
      await as('POST', '/members', { consumerId: s.admin.consumer.id, role: 'owner' }),
      await as('PATCH', `/members/${otherOwner.consumer.id}`, { role: 'viewer' }),
      await as('DELETE', `/members/${otherOwner.consumer.id}`),
      await as('GET', '/invitations'),
      await as('POST', '/invitations', { name: 'Y', email: 'y@example.com', role: 'owner' }),
      await as('DELETE', `/invitations/${otherInvitation}`),
    ];
    for (const res of answers) {
      const body = refused(res, 403, { name: 'ForbiddenError', propertyName: 'id' });
      expect(JSON.stringify(body)).not.toContain('Otto');
    }
    // B's invitation named under A's path is unknown there, and stays pending.
    refused(await s.call(s.admin.token, 'DELETE', `/invitations/${otherInvitation}`), 404, { name: 'NotFoundError', propertyName: 'invitationId' });
    const still = await s.app.inject({ method: 'GET', url: `/collection/contracts/${other.id}/invitations`, headers: { authorization: `Bearer ${otherOwner.token}` } });
    expect(still.json()).toHaveLength(1);
    expect(await s.db.selectFrom('grants').selectAll().where('contractId', '=', other.id).execute()).toHaveLength(1);
  });
});

describe('members', () => {
  it('the last owner can be neither demoted nor removed (409 naming role / consumerId); with a second owner they can', async () => {
    const s = await setup();
    // The tenant's robot is the only owner.
    const robot = s.tenant.consumer.id;
    const demote = refused(await s.call(s.tenant.token, 'PATCH', `/members/${robot}`, { role: 'admin' }), 409, { name: 'ConflictError', propertyName: 'role' });
    expect(String(demote.errors[0]!.message)).toContain('last owner');
    refused(await s.call(s.tenant.token, 'DELETE', `/members/${robot}`), 409, { name: 'ConflictError', propertyName: 'consumerId' });
    expect((await s.call(s.tenant.token, 'GET', '/members')).json()).toContainEqual(expect.objectContaining({ consumerId: robot, role: 'owner' }));

    const second = await buildUser(s.db, { name: 'Second Owner' });
    const added = await s.call(s.tenant.token, 'POST', '/members', { consumerId: second.consumer.id, role: 'owner' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ consumerId: second.consumer.id, role: 'owner', type: 'user', name: 'Second Owner' });
    refused(await s.call(s.tenant.token, 'POST', '/members', { consumerId: second.consumer.id, role: 'viewer' }), 409, { name: 'ConflictError', propertyName: 'consumerId' });
    const demoted = await s.call(s.tenant.token, 'PATCH', `/members/${robot}`, { role: 'admin' });
    expect(demoted.statusCode, demoted.body).toBe(200);
    expect(demoted.json()).toMatchObject({ role: 'admin' });
    // Now the second is the last owner.
    refused(await s.call(second.token, 'DELETE', `/members/${second.consumer.id}`), 409, { name: 'ConflictError', propertyName: 'consumerId' });
  });

  it("a removed member's token is refused at once; one with another contract keeps it there only", async () => {
    const s = await setup();
    const moderator = await member(s.db, s.contractId, 'moderator');
    const both = await member(s.db, s.contractId, 'viewer');
    const elsewhere = await createContract(s.db, 'Elsewhere', 'test');
    await grant(s.db, both.consumer.id, elsewhere.id, undefined, 'viewer');
    expect((await s.readQueue(moderator.token)).statusCode).toBe(200);
    expect((await s.readQueue(both.token)).statusCode).toBe(200);

    expect((await s.call(s.admin.token, 'DELETE', `/members/${moderator.consumer.id}`)).statusCode).toBe(204);
    expect((await s.call(s.admin.token, 'DELETE', `/members/${both.consumer.id}`)).statusCode).toBe(204);
    // No other grant: every token of the consumer is revoked.
    refused(await s.readQueue(moderator.token), 401, { name: 'AuthenticationError', propertyName: 'access_token' });
    // Another grant: the token stays for it, this contract is refused.
    refused(await s.readQueue(both.token), 403, { name: 'ForbiddenError' });
    const there = await s.app.inject({ method: 'GET', url: `/collection/collections?contract_id=${elsewhere.id}`, headers: { authorization: `Bearer ${both.token}` } });
    expect(there.statusCode).toBe(200);
    refused(await s.call(s.admin.token, 'DELETE', `/members/${moderator.consumer.id}`), 404, { name: 'NotFoundError', propertyName: 'consumerId' });
  });

  it('an editor or a moderator cannot manage the team (403 naming the operation and role); an admin cannot reach above admin', async () => {
    const s = await setup();
    const target = await member(s.db, s.contractId, 'viewer', 'Vi Viewer');
    for (const role of ['editor', 'moderator'] as const) {
      const someone = await member(s.db, s.contractId, role);
      const attempts = [
        [await s.call(someone.token, 'GET', '/members'), 'GET /collection/contracts/{id}/members'],
        [await s.call(someone.token, 'PATCH', `/members/${target.consumer.id}`, { role: 'admin' }), 'PATCH /collection/contracts/{id}/members/{consumerId}'],
        [await s.call(someone.token, 'DELETE', `/members/${target.consumer.id}`), 'DELETE /collection/contracts/{id}/members/{consumerId}'],
        [await s.call(someone.token, 'POST', '/invitations', { name: 'Z', email: 'z@example.com', role: 'viewer' }), 'POST /collection/contracts/{id}/invitations'],
      ] as const;
      for (const [res, operation] of attempts) {
        const body = refused(res, 403, { name: 'ForbiddenError', propertyName: 'role', propertyValue: role, reason: 'needs role admin' });
        expect(String(body.errors[0]!.message)).toContain(`${operation} needs the role admin`);
      }
    }
    expect((await s.call(s.admin.token, 'GET', '/members')).json()).toContainEqual(expect.objectContaining({ consumerId: target.consumer.id, role: 'viewer' }));

    // An admin gives roles up to admin, not owner; and cannot demote or remove an owner.
    refused(await s.call(s.admin.token, 'PATCH', `/members/${target.consumer.id}`, { role: 'owner' }), 403, { name: 'ForbiddenError', propertyName: 'role', reason: 'needs role owner' });
    refused(await s.call(s.admin.token, 'POST', '/invitations', { name: 'O', email: 'o@example.com', role: 'owner' }), 403, { name: 'ForbiddenError', propertyName: 'role', reason: 'needs role owner' });
    refused(await s.call(s.admin.token, 'PATCH', `/members/${s.tenant.consumer.id}`, { role: 'viewer' }), 403, { name: 'ForbiddenError', propertyName: 'role', reason: 'needs role owner' });
    refused(await s.call(s.admin.token, 'DELETE', `/members/${s.tenant.consumer.id}`), 403, { name: 'ForbiddenError', propertyName: 'role', reason: 'needs role owner' });
    const promoted = await s.call(s.admin.token, 'PATCH', `/members/${target.consumer.id}`, { role: 'admin' });
    expect(promoted.json()).toMatchObject({ role: 'admin' });
    // The owner can make an owner.
    expect((await s.call(s.tenant.token, 'PATCH', `/members/${target.consumer.id}`, { role: 'owner' })).json()).toMatchObject({ role: 'owner' });
    // Bad input names the property.
    refused(await s.call(s.admin.token, 'PATCH', `/members/${target.consumer.id}`, { role: 'emperor' }), 400, { name: 'ValidationError', propertyName: 'role' });
    refused(await s.call(s.admin.token, 'POST', '/invitations', { name: 'N', email: 'not-an-address', role: 'viewer' }), 400, { name: 'ValidationError', propertyName: 'email' });
    refused(await s.call(s.admin.token, 'POST', '/members', { consumerId: 'ffffffffffffffffffffffff', role: 'viewer' }), 404, { name: 'NotFoundError', propertyName: 'consumerId' });
  });

  it('invitations, accepts, role changes and removals are audit entries without the token or the password', async () => {
    const s = await setup();
    const invitation = await invite(s);
    const token = invitation.path.split('/').pop()!;
    const withdrawn = await invite(s, 'viewer', 'w@example.com');
    await s.call(s.admin.token, 'DELETE', `/invitations/${withdrawn._id}`);
    expect((await accept(s, invitation.path, 'mo', 'correct horse battery')).post.statusCode).toBe(303);
    const { user } = await tokenOf(s.db, 'mo');
    await s.call(s.admin.token, 'PATCH', `/members/${user.id}`, { role: 'editor' });
    await s.call(s.admin.token, 'DELETE', `/members/${user.id}`);

    const res = await s.call(s.admin.token, 'GET', '/members');
    expect(res.statusCode).toBe(200);
    const audit = await s.app.inject({ method: 'GET', url: `/collection/audit?contract_id=${s.contractId}&count=100`, headers: { authorization: `Bearer ${s.admin.token}` } });
    const entries = audit.json() as { resource: string; action: string; resourceId: string; consumerName: string; before: unknown; after: unknown }[];
    const summary = entries.map((e) => `${e.resource} ${e.action} ${e.resourceId}`);
    expect(summary).toEqual(
      expect.arrayContaining([
        `invitation create ${invitation._id}`,
        `invitation delete ${withdrawn._id}`,
        `invitation accept ${invitation._id}`,
        `grant create ${user.id}`,
        `grant update ${user.id}`,
        `grant delete ${user.id}`,
      ]),
    );
    expect(entries.find((e) => e.action === 'update' && e.resource === 'grant')).toMatchObject({ before: { role: 'moderator' }, after: { role: 'editor' } });
    expect(entries.find((e) => e.action === 'accept')).toMatchObject({ after: { consumerId: user.id, username: 'mo', role: 'moderator' } });
    const filtered = await s.app.inject({ method: 'GET', url: `/collection/audit?contract_id=${s.contractId}&resource=invitation&action=accept`, headers: { authorization: `Bearer ${s.admin.token}` } });
    expect(filtered.json()).toHaveLength(1);
    const text = audit.body + JSON.stringify(await s.db.selectFrom('auditEntries').selectAll().execute());
    expect(text).not.toContain(token);
    expect(text).not.toContain('correct horse battery');
    expect(text).not.toMatch(/argon2|tokenHash|passwordHash/);
  });
});

/** `setup().invite` as a free function for readability in the tests above. */
function invite(s: Awaited<ReturnType<typeof setup>>, role?: GrantRole, email?: string) {
  return s.invite(role, email);
}
