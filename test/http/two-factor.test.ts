/**
 * Two-factor sign-in with TOTP (issue 32 point 4, docs/api.md#two-factor-sign-in), through HTTP
 * on a real database, with the TOTP clock fixed (`app.twoFactorClock`) and codes computed with
 * the `otpauth` library as an authenticator app would: enrolment and confirmation (the secret
 * shown once, stored sealed), the sign-in's second step (the password alone yields no session;
 * a wrong code counts as a failed sign-in; a code works once; a recovery code works once), a
 * contract owner's requirement (refused on that contract, not on another, not for a machine
 * client), disable, new recovery codes, and the audit entries with no secret in them.
 */
import { TOTP, URI } from 'otpauth';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { totpCode } from '../../src/auth/totp.ts';
import { currentSecretKey, open } from '../../src/lib/secret-box.ts';
import { createContract, grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { build, buildClient, buildTenant, buildUser, expectError } from '../helper.ts';
import { Browser, formFields } from './browser-jar.ts';

/** A fixed instant at the start of a 30 s step (2027-01-15T08:00:00Z). */
const T = 1_800_000_000_000 - (1_800_000_000_000 % 30_000);
const STEP = 30_000;
const CONSOLE = 'http://127.0.0.1/console/';
const navigation = (site = 'same-origin') => ({ 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': site });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const authorizeUrl = () =>
  `/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sluice-console', redirect_uri: CONSOLE, state: 's1', code_challenge: s256(randomToken() + randomToken()), code_challenge_method: 'S256' })}`;

const call = (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}), remoteAddress: '10.30.0.1' });

const codeCount = async (db: Db) => Number((await db.selectFrom('authorizationCodes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

async function setup() {
  const ctx = await build({ API_URL: 'http://127.0.0.1', AUTH_URL: 'http://127.0.0.1' });
  ctx.app.twoFactorClock.now = () => T;
  // The failure limiter's clock too: a delay is then a fact of the test, not of its speed.
  ctx.app.authFailures.login.now = () => T;
  const user = await buildUser(ctx.db, { name: 'Ana' });
  return { ...ctx, user };
}

/** Enrols `user` and confirms with the code of step T: the secret and the recovery codes. */
async function enrol(app: FastifyInstance, token: string) {
  const started = await call(app, token, 'POST', '/v1/account/two-factor');
  expect(started.statusCode, started.body).toBe(200);
  const { secret } = started.json() as { secret: string };
  const confirmed = await call(app, token, 'POST', '/v1/account/two-factor/confirm', { code: totpCode(secret, T) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  return { secret, recoveryCodes: (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes };
}

/** A browser signed in with the password up to the code page (or refused). */
async function passwordStep(app: FastifyInstance, username: string, password: string, remoteAddress = '10.40.0.1') {
  const browser = new Browser(app);
  browser.remoteAddress = remoteAddress;
  const login = await browser.get(authorizeUrl(), navigation('none'));
  expect(login.statusCode, login.body).toBe(200);
  const posted = await browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username, password }, navigation());
  return { browser, posted };
}

const submitCode = (browser: Browser, page: string, code: string) => browser.post('/v1/login/two-factor', { ...formFields(page, '/v1/login/two-factor'), code }, navigation());

describe('enrolment', () => {
  it('gives a secret and otpauth URI once, keeps it sealed with the secret key, and turns on with a current code and 10 recovery codes', async () => {
    const { app, db, config, user } = await setup();
    const started = await call(app, user.token, 'POST', '/v1/account/two-factor');
    expect(started.statusCode, started.body).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    const enrolment = started.json() as { secret: string; uri: string };
    expect(enrolment).toMatchObject({ issuer: 'Sluice', label: user.username, algorithm: 'SHA1', digits: 6, period: 30 });
    expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/);
    // An authenticator app reads the URI: same secret, issuer Sluice, the user name as label.
    const parsed = URI.parse(enrolment.uri);
    expect(parsed).toBeInstanceOf(TOTP);
    expect((parsed as TOTP).secret.base32).toBe(enrolment.secret);
    expect((parsed as TOTP).issuer).toBe('Sluice');
    expect((parsed as TOTP).label).toBe(user.username);

    // Stored sealed: the row holds no trace of the secret, and opens with the secret key.
    const row = await db.selectFrom('twoFactor').selectAll().where('consumerId', '=', user.consumer.id).executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(enrolment.secret);
    expect(row.secret).toMatch(/^v1\./);
    expect(row.enabledAt).toBeNull();
    expect(open(currentSecretKey(config), row.secret)).toBe(enrolment.secret);
    expect((await call(app, user.token, 'GET', '/v1/account/two-factor')).json()).toEqual({ enabled: false, pending: true, recoveryCodesLeft: 0 });

    // A wrong code does not confirm it.
    const wrong = await call(app, user.token, 'POST', '/v1/account/two-factor/confirm', { code: totpCode(enrolment.secret, T + 5 * STEP) });
    expectError(wrong, 400, { name: 'ValidationError', code: 1005, propertyName: 'code' });
    const confirmed = await call(app, user.token, 'POST', '/v1/account/two-factor/confirm', { code: totpCode(enrolment.secret, T - STEP) });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const { recoveryCodes } = confirmed.json() as { recoveryCodes: string[] };
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);

    // Never shown again; recovery codes stored as argon2id hashes only.
    const status = await call(app, user.token, 'GET', '/v1/account/two-factor');
    expect(status.json()).toEqual({ enabled: true, pending: false, recoveryCodesLeft: 10 });
    expect(status.body).not.toContain(enrolment.secret);
    const again = await call(app, user.token, 'POST', '/v1/account/two-factor');
    expectError(again, 409, { name: 'ConflictError', code: 4091, propertyName: 'twoFactor' });
    expect(again.body).not.toContain(enrolment.secret);
    const stored = await db.selectFrom('recoveryCodes').select('codeHash').where('consumerId', '=', user.consumer.id).execute();
    expect(stored).toHaveLength(10);
    for (const { codeHash } of stored) expect(codeHash).toMatch(/^\$argon2id\$/);
    const everything = JSON.stringify(stored);
    for (const code of recoveryCodes) expect(everything).not.toContain(code.replace('-', ''));
  });

  it('is a user’s: a machine client’s token → 403 naming access_token', async () => {
    const { app, db } = await setup();
    const client = await buildClient(db, 'robot');
    expectError(await call(app, client.token, 'POST', '/v1/account/two-factor'), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'access_token' });
  });
});

describe('sign-in with two-factor on', () => {
  it('the password alone yields no session and no code; the current code does, once', async () => {
    const { app, db, user } = await setup();
    const { secret } = await enrol(app, user.token);

    const { browser, posted } = await passwordStep(app, user.username, user.password);
    expect(posted.statusCode, posted.body).toBe(200);
    expect(posted.body).toContain('action="/v1/login/two-factor"');
    expect(posted.body).toContain('autocomplete="one-time-code"');
    expect(browser.jar.has('sluice_session')).toBe(false);
    expect(browser.jar.has('sluice_2fa')).toBe(true);
    expect(await db.selectFrom('loginSessions').selectAll().execute()).toEqual([]);
    // The authorize page without a session is the login page again: no code for the password step.
    const notYet = await browser.get(authorizeUrl(), navigation('none'));
    expect(notYet.statusCode).toBe(200);
    expect(notYet.body).toContain('action="/v1/login"');
    expect(await codeCount(db)).toBe(0);

    // The code of the next step (the confirmation used step T): accepted within the window.
    const signedIn = await submitCode(browser, posted.body, totpCode(secret, T + STEP));
    expect(signedIn.statusCode, signedIn.body).toBe(303);
    expect(signedIn.headers.location).toMatch(/^\/v1\/authorize\?/);
    expect(browser.jar.has('sluice_session')).toBe(true);
    expect(browser.jar.has('sluice_2fa')).toBe(false);
    const back = await browser.get(signedIn.headers.location as string, navigation());
    expect(back.statusCode, back.body).toBe(302);
    expect(back.headers.location).toMatch(/[?&]code=/);

    // The same code in another sign-in (someone who saw it): refused, no session.
    const thief = await passwordStep(app, user.username, user.password, '10.40.0.2');
    const replayed = await submitCode(thief.browser, thief.posted.body, totpCode(secret, T + STEP));
    expect(replayed.statusCode).toBe(400);
    expect(replayed.body).toContain('role="alert"');
    expect(thief.browser.jar.has('sluice_session')).toBe(false);
    // An older one too (its step is before the last accepted).
    expect((await submitCode(thief.browser, thief.posted.body, totpCode(secret, T))).statusCode).toBe(400);
    expect(thief.browser.jar.has('sluice_session')).toBe(false);
  });

  it('the second step is single-use and bound to its password step: its cookie replayed, or none, signs nobody in', async () => {
    const { app, user } = await setup();
    const { secret } = await enrol(app, user.token);
    const { browser, posted } = await passwordStep(app, user.username, user.password);
    const cookie = browser.jar.get('sluice_2fa')!;
    expect((await submitCode(browser, posted.body, totpCode(secret, T + STEP))).statusCode).toBe(303);
    // A copy of the used step's cookie with the next code: the login page again.
    const copy = new Browser(app);
    for (const [name, value] of browser.jar) if (name !== 'sluice_session') copy.jar.set(name, value);
    copy.jar.set('sluice_2fa', cookie);
    const reused = await submitCode(copy, posted.body, totpCode(secret, T - STEP + 2 * STEP));
    expect(reused.statusCode).toBe(400);
    expect(reused.body).toContain('action="/v1/login"');
    expect(copy.jar.has('sluice_session')).toBe(false);
    // Without the step's cookie at all.
    copy.jar.delete('sluice_2fa');
    const none = await submitCode(copy, posted.body, totpCode(secret, T + 2 * STEP));
    expect(none.statusCode).toBe(400);
    expect(copy.jar.has('sluice_session')).toBe(false);
  });

  it('keeps the login form’s CSRF and Fetch Metadata checks', async () => {
    const { app, user } = await setup();
    const { secret } = await enrol(app, user.token);
    const { browser, posted } = await passwordStep(app, user.username, user.password);
    const form = { ...formFields(posted.body, '/v1/login/two-factor'), code: totpCode(secret, T + STEP) };
    expect((await browser.post('/v1/login/two-factor', { ...form, _csrf: 'forged' }, navigation())).statusCode).toBe(403);
    expect((await browser.post('/v1/login/two-factor', form, { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(403);
    expect((await browser.post('/v1/login/two-factor', form, navigation('cross-site'))).statusCode).toBe(403);
    expect(browser.jar.has('sluice_session')).toBe(false);
    expect((await browser.post('/v1/login/two-factor', form, navigation())).statusCode).toBe(303);
  });

  it('wrong codes count as failed sign-ins: after 5 the step is dropped and the next try waits (429), even with the right password and code', async () => {
    const { app, user } = await setup();
    const { secret } = await enrol(app, user.token);
    const { browser, posted } = await passwordStep(app, user.username, user.password);
    let page = posted.body;
    for (let i = 1; i <= 4; i++) {
      const res = await submitCode(browser, page, String((Number(totpCode(secret, T + STEP)) + i) % 1_000_000).padStart(6, '0'));
      expect(res.statusCode, `wrong code ${i}`).toBe(400);
      expect(res.body).toContain('action="/v1/login/two-factor"');
      page = res.body;
    }
    const fifth = await submitCode(browser, page, '000000' === totpCode(secret, T + STEP) ? '111111' : '000000');
    expect(fifth.statusCode).toBe(400);
    expect(fifth.body).toContain('action="/v1/login"');
    expect(browser.jar.has('sluice_2fa')).toBe(false);
    // The user name is now delayed for password and code alike, from any address.
    const next = await passwordStep(app, user.username, user.password, '10.40.9.9');
    expect(next.posted.statusCode).toBe(429);
    expect(next.posted.headers['retry-after']).toBe('1');
  });

  it('a recovery code signs in once, and is used up', async () => {
    const { app, db, user } = await setup();
    const { recoveryCodes } = await enrol(app, user.token);
    const first = await passwordStep(app, user.username, user.password);
    const res = await submitCode(first.browser, first.posted.body, recoveryCodes[3]!.toUpperCase());
    expect(res.statusCode, res.body).toBe(303);
    expect(first.browser.jar.has('sluice_session')).toBe(true);
    const again = await passwordStep(app, user.username, user.password, '10.40.0.3');
    expect((await submitCode(again.browser, again.posted.body, recoveryCodes[3]!)).statusCode).toBe(400);
    expect(again.browser.jar.has('sluice_session')).toBe(false);
    expect((await call(app, user.token, 'GET', '/v1/account/two-factor')).json()).toMatchObject({ recoveryCodesLeft: 9 });
    // (Audited in the user's contracts: shown in the disable test.)
    expect(await db.selectFrom('recoveryCodes').select('id').where('usedAt', 'is not', null).execute()).toHaveLength(1);
  });
});

describe('a contract owner requires two-factor sign-in', () => {
  it('refuses members without it on that contract only, with 403 naming twoFactor; not on another contract, not a machine client; audited', async () => {
    const { app, db, user: owner } = await setup();
    const tenant = await buildTenant(db, 'Desk');
    const other = await createContract(db, 'Other desk', 'test');
    const member = await buildUser(db, { name: 'Ben' });
    await grant(db, owner.consumer.id, tenant.contract.id, undefined, 'owner');
    await grant(db, member.consumer.id, tenant.contract.id, undefined, 'admin');
    await grant(db, member.consumer.id, other.id, undefined, 'viewer');
    const read = (token: string, contractId: string) => call(app, token, 'GET', `/collection/collections?contract_id=${contractId}`);
    const requirement = (token: string, required: boolean) => call(app, token, 'PUT', `/collection/contracts/${tenant.contract.id}/two-factor`, { required });

    // Only the owner may change it, and only with two-factor on for themself.
    expectError(await requirement(member.token, true), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
    expectError(await requirement(owner.token, true), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'twoFactor' });
    expectError(await call(app, owner.token, 'PUT', `/collection/contracts/${tenant.contract.id}/two-factor`, { required: 'yes' }), 400, { name: 'ValidationError', code: 1002, propertyName: 'required' });
    await enrol(app, owner.token);
    const set = await requirement(owner.token, true);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ _id: tenant.contract.id, requireTwoFactor: true });

    const refused = expectError(await read(member.token, tenant.contract.id), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'twoFactor' });
    expect(String(refused.errors[0]!.message)).toMatch(/two-factor/);
    expect((await read(member.token, other.id)).statusCode).toBe(200);
    expect((await read(owner.token, tenant.contract.id)).statusCode).toBe(200);
    expect((await read(tenant.token, tenant.contract.id)).statusCode).toBe(200); // the contract's machine client
    // The member can still see the contract (to know why) and enrol.
    expect((await call(app, member.token, 'GET', '/v1/customer/contracts/me')).statusCode).toBe(200);
    await enrol(app, member.token);
    expect((await read(member.token, tenant.contract.id)).statusCode).toBe(200);

    const cleared = await requirement(owner.token, false);
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).not.toHaveProperty('requireTwoFactor');
    const entries = await db.selectFrom('auditEntries').select(['resource', 'action', 'before', 'after', 'consumerId']).where('contractId', '=', tenant.contract.id).orderBy('at').execute();
    expect(entries.filter((e) => e.resource === 'contract').map((e) => [e.action, JSON.parse(e.after!)])).toEqual([
      ['two-factor', { requireTwoFactor: true }],
      ['two-factor', { requireTwoFactor: false }],
    ]);
    expect(entries.filter((e) => e.resource === 'account').map((e) => [e.consumerId, e.action])).toEqual([
      [owner.consumer.id, 'two-factor-enable'],
      [member.consumer.id, 'two-factor-enable'],
    ]);
  });
  it('the members list says who has two-factor on (twoFactor), for the owner about to require it: a pending enrolment is not on, a machine client never', async () => {
    const { app, db, user: owner } = await setup();
    const tenant = await buildTenant(db, 'Desk');
    const pending = await buildUser(db, { name: 'Pia' });
    await grant(db, owner.consumer.id, tenant.contract.id, undefined, 'owner');
    await grant(db, pending.consumer.id, tenant.contract.id, undefined, 'moderator');
    const members = async () => {
      const res = await call(app, owner.token, 'GET', `/collection/contracts/${tenant.contract.id}/members`);
      expect(res.statusCode, res.body).toBe(200);
      return Object.fromEntries((res.json() as { consumerId: string; twoFactor: unknown }[]).map((m) => [m.consumerId, m.twoFactor]));
    };
    expect(await members()).toEqual({ [tenant.consumer.id]: false, [owner.consumer.id]: false, [pending.consumer.id]: false });
    await enrol(app, owner.token);
    // Started, never confirmed: not on (a code from it would not be asked at sign-in).
    expect((await call(app, pending.token, 'POST', '/v1/account/two-factor')).statusCode).toBe(200);
    expect(await members()).toEqual({ [tenant.consumer.id]: false, [owner.consumer.id]: true, [pending.consumer.id]: false });
    // A single member's answer (PATCH) says it too.
    const changed = await call(app, owner.token, 'PATCH', `/collection/contracts/${tenant.contract.id}/members/${owner.consumer.id}`, { role: 'owner' });
    expect(changed.json()).toMatchObject({ consumerId: owner.consumer.id, twoFactor: true });
  });
});

describe('disable and new recovery codes', () => {
  it('disable needs a current code (or a recovery code); afterwards the password alone signs in; audited without secrets', async () => {
    const { app, db, user } = await setup();
    const contract = await createContract(db, 'Desk', 'test');
    await grant(db, user.consumer.id, contract.id, undefined, 'editor');
    const { secret, recoveryCodes } = await enrol(app, user.token);
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/disable', {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'code' });
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/disable', { code: user.password }), 400, { name: 'ValidationError', code: 1005, propertyName: 'code' });
    // The confirmation's code again: a replay.
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/disable', { code: totpCode(secret, T) }), 400, { name: 'ValidationError', code: 1005, propertyName: 'code' });

    // New recovery codes need a current code (a recovery code will not do); the old ones stop working.
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/recovery-codes', { code: recoveryCodes[0]! }), 400, { name: 'ValidationError', code: 1005, propertyName: 'code' });
    const renewed = await call(app, user.token, 'POST', '/v1/account/two-factor/recovery-codes', { code: totpCode(secret, T + STEP) });
    expect(renewed.statusCode, renewed.body).toBe(200);
    const fresh = (renewed.json() as { recoveryCodes: string[] }).recoveryCodes;
    expect(fresh).toHaveLength(10);
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/disable', { code: recoveryCodes[1]! }), 400, { name: 'ValidationError', code: 1005, propertyName: 'code' });

    const off = await call(app, user.token, 'POST', '/v1/account/two-factor/disable', { code: fresh[0]! });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toEqual({ enabled: false });
    expect(await db.selectFrom('twoFactor').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('recoveryCodes').selectAll().execute()).toEqual([]);
    expectError(await call(app, user.token, 'POST', '/v1/account/two-factor/disable', { code: totpCode(secret, T + STEP) }), 409, { name: 'ConflictError', code: 4091, propertyName: 'twoFactor' });
    const { browser, posted } = await passwordStep(app, user.username, user.password);
    expect(posted.statusCode).toBe(303);
    expect(browser.jar.has('sluice_session')).toBe(true);

    const entries = await db.selectFrom('auditEntries').selectAll().where('resource', '=', 'account').where('contractId', '=', contract.id).orderBy('at').execute();
    expect(entries.map((e) => e.action)).toEqual(['two-factor-enable', 'recovery-codes', 'recovery-code-used', 'two-factor-disable']);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(secret);
    for (const code of [...recoveryCodes, ...fresh]) expect(text).not.toContain(code);
  });
});
