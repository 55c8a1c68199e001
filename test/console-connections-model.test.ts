/**
 * The Connections screen's knowledge of credentials (src/console/app/screens/connections-model.ts):
 * which services have a connect flow, a credential's plain fields, quotas in words. Table-driven.
 * The records are typed as the API's OpenAPI document says (src/console/app/resources.ts), so a
 * shape the API never sends does not type-check here.
 */
import { describe, expect, it } from 'vitest';
import { canConnect, plainField, quotaWords } from '../src/console/app/screens/connections-model.ts';
import type { Credential, ServiceEntry } from '../src/console/app/resources.ts';

const entry = (service: string): ServiceEntry => ({
  service,
  types: [],
  credentials: service === 'rss' ? [] : [{ variable: `${service.toUpperCase()}_TOKEN`, configured: false }],
  configured: service === 'rss',
  credentialFields: [],
});

describe('canConnect', () => {
  it.each([
    [entry('twitter'), true],
    [entry('mastodon'), true],
    [entry('bluesky'), false],
    [entry('flickr'), false],
    [entry('rss'), false],
  ])('%o → %s', (service, expected) => {
    expect(canConnect(service)).toBe(expected);
  });
});

describe('plainField', () => {
  const credential: Credential = {
    _id: '0123456789abcdef01234567',
    contractId: '0123456789abcdef01234568',
    active: true,
    created: '2026-11-27T09:00:00.000Z',
    createdBy: 'test',
    lastModified: '2026-11-27T09:00:00.000Z',
    lastModifiedBy: 'test',
    name: 'Newsroom',
    service: 'bluesky',
    default: true,
    identifier: 'newsroom.bsky.social',
    hints: { appPassword: '…abcd' },
    connectedBy: { id: 'u1', name: 'Ann', date: '2026-11-27T09:00:00.000Z' },
    health: { status: 'ok', lastUsed: null, lastError: null, expiresAt: null },
  };
  it.each([
    ['a plain field it has', 'identifier', 'newsroom.bsky.social'],
    ['a plain field it lacks', 'userId', undefined],
    ['a secret field (never returned)', 'appPassword', undefined],
    ['a record field that is not a string', 'health', undefined],
  ])('%s', (_case, name, value) => {
    expect(plainField(credential, name)).toBe(value);
  });
});

describe('quotaWords', () => {
  const now = Date.parse('2026-11-27T09:00:00.000Z');
  it.each([
    [{ name: 'instagram-hashtags', used: 30, limit: 30, resetsAt: '2026-11-30T09:00:00.000Z' }, '30 of 30 unique hashtags in the last 7 days, the next frees up in 3 days'],
    [{ name: 'instagram-hashtags', used: 0, limit: 30, resetsAt: null }, '0 of 30 unique hashtags in the last 7 days'],
    [{ name: 'youtube-units', used: 9950, limit: 10000, resetsAt: '2026-11-27T14:00:00.000Z' }, '9950 of 10000 units today (Pacific time), resets in 5 hours'],
    [{ name: 'twitter-posts', used: 120, limit: 10000, resetsAt: '2026-12-01T00:00:00.000Z' }, '120 of 10000 posts read this month, resets in 4 days'],
    [{ name: 'vimeo-calls', used: 5, limit: 10, resetsAt: null }, '5 of 10'],
  ])('%o', (quota, words) => {
    expect(quotaWords(quota, now)).toBe(words);
  });
});
