import { describe, expect, it } from 'vitest';
import { authorizationUrl, newState, pkcePair } from './oauth-client.ts';

describe('authorizationUrl (RFC 6749 §4.1.1, RFC 7636 §4.3)', () => {
  const endpoint = { authorizeUrl: 'https://auth.example/authorize?locale=en', clientId: 'app id' };
  it.each([
    [{}, { scope: 'a b' }],
    [{ scopeSeparator: ',' }, { scope: 'a,b' }],
    [{ challenge: 'ch' }, { code_challenge: 'ch', code_challenge_method: 'S256' }],
    [{ extra: { access_type: 'offline' } }, { access_type: 'offline' }],
  ])('%j → %j', (options, expected) => {
    const url = new URL(authorizationUrl(endpoint, { redirectUri: 'https://api.example/cb', state: 'st', scopes: ['a', 'b'], ...options }));
    expect(url.origin + url.pathname).toBe('https://auth.example/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      locale: 'en', response_type: 'code', client_id: 'app id', redirect_uri: 'https://api.example/cb', scope: 'a b', state: 'st', ...expected,
    });
  });
});

describe('state and PKCE', () => {
  it('makes 256-bit base64url states, never twice the same', () => {
    const states = new Set(Array.from({ length: 50 }, newState));
    expect(states.size).toBe(50);
    for (const state of states) expect(state).toMatch(/^[\w-]{43}$/);
  });
  it('derives the S256 challenge of the verifier (RFC 7636 appendix B)', async () => {
    const { verifier, challenge } = await pkcePair();
    expect(verifier).toMatch(/^[\w-]{43,128}$/);
    const expected = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString('base64url');
    expect(challenge).toBe(expected);
  });
});
