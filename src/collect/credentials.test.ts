import { describe, expect, it } from 'vitest';
import { FetchError, SourceError } from '../services/connector.ts';
import { blamesCredential, isCredentialFailure, missingCredential } from './credentials.ts';

describe('permanent failures that are the credential\'s fault', () => {
  it.each([
    ['HTTP 401: Unauthorized', true],
    ['HTTP 403: You are not permitted to use this endpoint', true],
    ['facebook: Error validating access token: Session has expired on Tuesday (OAuthException 190)', true],
    ['youtube: API key not valid. Please pass a valid API key.', true],
    ['bluesky login failed: HTTP 401: Invalid identifier or password', true],
    ['vk: User authorization failed: invalid access_token (4).', true],
    ['twitter user nobody not found: Could not find user with username: [nobody].', false],
    ['instagram hashtag foo not found', false],
    ['HTTP 404: Not Found', false],
    ['vimeo album input must be a showcase id, user/id or showcase URL, got "x"', false],
  ])('%s → %s', (message, expected) => {
    expect(isCredentialFailure(message)).toBe(expected);
  });

  // Hostile: an input's own text (a subreddit, a handle) brings credential words into its failure.
  it.each([
    ['the input\'s failure, said so, whatever its words', new SourceError('reddit r/Passwords is not readable: private (status 403)', { permanent: true, credential: false }), false],
    ['the input\'s failure, said so, even worded as HTTP 401', new SourceError('HTTP 401: Unauthorized', { permanent: true, credential: false }), false],
    ['the credential\'s failure, said so, in plain words', new SourceError('the app was removed', { permanent: true, credential: true }), true],
    ['not said: read from the message', new SourceError('HTTP 401: Unauthorized', { permanent: true }), true],
    ['not said, a name not found: read from the message', new SourceError('instagram hashtag foo not found', { permanent: true }), false],
    ['a fetch failure: read from the message', new FetchError('blocked', 'blocked address'), false],
  ])('blamesCredential: %s', (_name, error, expected) => {
    expect(blamesCredential(error, error.message)).toBe(expected);
  });

  it('names the service, the contract and the route to connect one', () => {
    expect(missingCredential('twitter', 'c0ffee', 'twitter is not configured: set TWITTER_BEARER_TOKEN')).toBe(
      "connect a twitter credential to contract c0ffee (POST /collection/credentials) or name one in the input's credentialId (twitter is not configured: set TWITTER_BEARER_TOKEN)",
    );
  });
});
