/** Pure pieces of the authorization server: PKCE S256, redirect encoding (failure limits: rate-limit.test.ts). */
import { describe, expect, it } from 'vitest';
import { errorRedirect, redirectWith } from './login/redirect.ts';
import { s256, verifyS256 } from './pkce.ts';
import { redactUrl } from '../http/redact.ts';

describe('PKCE S256 (RFC 7636)', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B

  it.each([
    [verifier, challenge, true],
    [`${verifier}x`, challenge, false],
    ['short', s256('short'), false], // under 43 characters
    [verifier, challenge.toLowerCase(), false],
    [verifier, '', false],
  ])('verifyS256(%s, %s) is %s', (v, c, expected) => {
    expect(verifyS256(v, c)).toBe(expected);
  });

  it('computes the appendix B challenge', () => expect(s256(verifier)).toBe(challenge));
});

describe('redirects back to the client', () => {
  it.each([
    ['https://app.example/cb', 'token', { access_token: 'a b', token_type: 'Bearer', state: 'x&y' }, 'https://app.example/cb#access_token=a+b&token_type=Bearer&state=x%26y'],
    ['https://app.example/cb', 'code', { code: 'c', state: undefined }, 'https://app.example/cb?code=c'],
    ['https://app.example/cb?tenant=1', 'code', { code: 'c', state: 's' }, 'https://app.example/cb?tenant=1&code=c&state=s'],
  ] as const)('%s (%s)', (uri, mode, params, expected) => {
    expect(redirectWith(uri, mode, params)).toBe(expected);
  });

  it('puts errors where the response type puts its results', () => {
    expect(errorRedirect('https://a/cb', 'token', 'access_denied', undefined, 's')).toBe('https://a/cb#error=access_denied&state=s');
    expect(errorRedirect('https://a/cb', 'code', 'access_denied', 'no', undefined)).toBe('https://a/cb?error=access_denied&error_description=no');
  });
});

describe('log redaction', () => {
  it.each([
    ['/v1/oauth/me?access_token=abc', '/v1/oauth/me?access_token=[redacted]'],
    ['/v1/queue/demo?q=news&access%5Ftoken=abc&count=5', '/v1/queue/demo?q=news&access%5Ftoken=[redacted]&count=5'],
    ['/cb?code=xyz&state=s&service=x', '/cb?code=[redacted]&state=[redacted]&service=x'],
    ['/v1/content/demo?q=news', '/v1/content/demo?q=news'],
    ['/healthz', '/healthz'],
    // An invitation link's token is in its path (docs/api.md#accepting-an-invitation).
    ['/v1/invitations/AbC-_123xyz', '/v1/invitations/[redacted]'],
    ['/v1/invitations/AbC-_123xyz?access_token=t', '/v1/invitations/[redacted]?access_token=[redacted]'],
    ['/v1/password-reset/AbC-_123xyz', '/v1/password-reset/[redacted]'],
  ])('%s → %s', (url, expected) => expect(redactUrl(url)).toBe(expected));
});
