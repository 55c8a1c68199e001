/**
 * The Connections screen's knowledge of credentials (src/console/app/screens/connections-model.ts):
 * a service's credential fields from GET /collection/services or, where the server does not list
 * them, as documented; which services have a connect flow; quotas in words. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { canConnect, credentialFieldsOf, quotasOf, quotaWords } from '../src/console/app/screens/connections-model.ts';
import type { Credential, ServiceEntry } from '../src/console/app/resources.ts';

const entry = (service: string, more: Partial<ServiceEntry> = {}): ServiceEntry => ({
  service,
  types: [],
  credentials: service === 'rss' ? [] : [{ variable: `${service.toUpperCase()}_TOKEN`, configured: false }],
  configured: service === 'rss',
  ...more,
});

describe('credentialFieldsOf', () => {
  it.each([
    ['the server lists them', entry('twitter', { credentialFields: [{ name: 'bearerToken', secret: true }] }), [{ name: 'bearerToken', secret: true }]],
    ['the server lists none (a service that needs none)', entry('mastodon', { credentialFields: [] }), []],
    ['the server lists them, beside the documented ones', entry('youtube', { credentialFields: [{ name: 'apiKey', secret: true }, { name: 'accessToken', secret: true, optional: true }] }), [{ name: 'apiKey', secret: true }, { name: 'accessToken', secret: true, optional: true }]],
    ['documented: twitter', entry('twitter'), [{ name: 'bearerToken', secret: true }]],
    ['documented: instagram', entry('instagram'), [{ name: 'accessToken', secret: true }, { name: 'userId', secret: false }, { name: 'expiresAt', secret: false }]],
    ['documented: bluesky', entry('bluesky'), [{ name: 'identifier', secret: false }, { name: 'appPassword', secret: true }]],
    ['a service without credentials', entry('rss'), []],
    ['a service this console does not know', entry('friendfeed'), []],
  ])('%s', (_case, service, fields) => {
    expect(credentialFieldsOf(service)).toEqual(fields);
  });
});

describe('canConnect', () => {
  it.each([
    [entry('twitter'), true],
    [entry('mastodon'), true],
    [entry('bluesky'), false],
    [entry('flickr'), false],
    [entry('twitter', { connect: false }), false],
    [entry('twitter', { connect: { configured: false } }), false],
    [entry('twitter', { connect: { configured: true } }), true],
    [entry('flickr', { connect: true }), true],
  ])('%o → %s', (service, expected) => {
    expect(canConnect(service)).toBe(expected);
  });
});

describe('quotaWords', () => {
  const now = Date.parse('2026-11-27T09:00:00.000Z');
  it.each([
    [{ name: 'instagram-hashtags', used: 30, limit: 30, resetsAt: '2026-11-30T09:00:00.000Z' }, '30 of 30 unique hashtags in the last 7 days, the next frees up in 3 days'],
    [{ name: 'instagram-hashtags', used: 0, limit: 30, resetsAt: null }, '0 of 30 unique hashtags in the last 7 days'],
    [{ name: 'youtube-units', used: 9950, limit: 10000, resetsAt: '2026-11-27T14:00:00.000Z' }, '9950 of 10000 units today (Pacific time), resets in 5 hours'],
    [{ name: 'twitter-posts', used: 120, limit: 10000, resetsAt: '2026-12-01T00:00:00.000Z' }, '120 of 10000 posts read this month, resets in 4 days'],
    [{ name: 'vimeo-calls', used: 5, limit: 10 }, '5 of 10'],
  ])('%o', (quota, words) => {
    expect(quotaWords(quota, now)).toBe(words);
  });

  it('reads one quota or several', () => {
    const quota = { name: 'youtube-units', used: 1, limit: 2 };
    expect(quotasOf({ quota } as Credential)).toEqual([quota]);
    expect(quotasOf({ quota: [quota, quota] } as Credential)).toEqual([quota, quota]);
    expect(quotasOf({} as Credential)).toEqual([]);
  });
});
