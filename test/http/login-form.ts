/**
 * The login form (docs/api.md#browser-sign-in) driven as a browser does, for the tests of its
 * failure limits (failure-limits, guessing).
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { build } from '../helper.ts';

/** The login form driven as a browser does: the CSRF cookie carried, the token taken from the page. */
export async function loginForm() {
  const ctx = await build();
  const clientId = randomToken().slice(0, 24);
  const redirect = 'https://app.example.com/callback';
  await createConsumer(ctx.db, { type: 'client', name: 'Desk', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [redirect] });
  const page = await ctx.app.inject({ method: 'GET', url: `/v1/authorize?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: redirect })}`, headers: { accept: 'text/html' } });
  expect(page.statusCode).toBe(200);
  const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const login = (username: string, password: string, remoteAddress: string): Promise<LightMyRequestResponse> =>
    ctx.app.inject({
      method: 'POST',
      url: '/v1/login',
      headers: { cookie: `sluice_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: redirect, _csrf: csrfToken, username, password }).toString(),
      remoteAddress,
    });
  return { ...ctx, login };
}
