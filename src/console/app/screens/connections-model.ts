/**
 * The Connections screen's knowledge of credentials (screens/connections.ts), pure so that it is
 * unit-tested (test/console-connections-model.test.ts): the fields of a service's credential,
 * which services have a connect flow, and a quota in words.
 */
import type { Credential, CredentialField, Quota, ServiceEntry } from '../resources.ts';
import { ago } from './sources-text.ts';

/**
 * The fields of each service's credential as docs/api.md#credentials lists them, for a server
 * whose `GET /collection/services` does not list them (`credentialFields`) yet.
 */
const DOCUMENTED_FIELDS: Record<string, CredentialField[]> = {
  twitter: [{ name: 'bearerToken', secret: true }],
  facebook: [{ name: 'accessToken', secret: true }, { name: 'expiresAt', secret: false }],
  instagram: [{ name: 'accessToken', secret: true }, { name: 'userId', secret: false }, { name: 'expiresAt', secret: false }],
  youtube: [{ name: 'apiKey', secret: true }],
  tumblr: [{ name: 'apiKey', secret: true }],
  vimeo: [{ name: 'accessToken', secret: true }],
  flickr: [{ name: 'apiKey', secret: true }],
  vk: [{ name: 'accessToken', secret: true }],
  bluesky: [{ name: 'identifier', secret: false }, { name: 'appPassword', secret: true }],
};

/** The services with a connect flow as docs/api.md#credentials ("Connecting an account") lists them. */
const DOCUMENTED_CONNECT = ['twitter', 'facebook', 'instagram', 'youtube', 'vimeo', 'tumblr', 'mastodon'];

/** What each field is, in a few words (the hint under it). */
export const FIELD_HINTS: Record<string, string> = {
  expiresAt: 'When the token expires (optional).',
  userId: 'The Instagram Business account the calls are made as.',
  identifier: 'The account’s handle, e.g. newsroom.bsky.social.',
};

/** The fields of `entry`'s credential: as the server lists them, else as documented, else none. */
export function credentialFieldsOf(entry: ServiceEntry): CredentialField[] {
  if (Array.isArray(entry.credentialFields)) return entry.credentialFields;
  return entry.credentials.length ? (DOCUMENTED_FIELDS[entry.service] ?? []) : [];
}

/**
 * Whether `entry` offers a connect flow (docs/api.md#credentials ("Connecting an account")): as the services
 * table says in `connect` (a boolean, or an object whose `configured` is not false), else as
 * documented. A flow whose app the operator has not configured answers 400 naming `service`.
 */
export function canConnect(entry: ServiceEntry): boolean {
  const connect = entry.connect as boolean | { configured?: boolean } | null | undefined;
  if (connect === undefined) return DOCUMENTED_CONNECT.includes(entry.service);
  return connect === true || (typeof connect === 'object' && connect !== null && connect.configured !== false);
}

/** `quota` as a list (a read carries one quota or several). */
export function quotasOf(credential: Credential): Quota[] {
  const quota = credential.quota;
  return Array.isArray(quota) ? quota : quota ? [quota] : [];
}

/** What each quota of docs/api.md#credentials ("Quotas") counts, in words. */
const QUOTA_WORDS: Record<string, string> = {
  'instagram-hashtags': 'unique hashtags in the last 7 days',
  'youtube-units': 'units today (Pacific time)',
  'twitter-posts': 'posts read this month',
};

/**
 * A quota in words, relative to `now` (ms): "30 of 30 unique hashtags in the last 7 days, the
 * next frees up in 3 days"; "12 of 10000 units today (Pacific time), resets in 5 hours". A quota
 * this console does not know is shown by its numbers.
 */
export function quotaWords(quota: Quota, now: number): string {
  const what = QUOTA_WORDS[quota.name];
  const used = `${quota.used} of ${quota.limit}${what ? ` ${what}` : ''}`;
  if (!quota.resetsAt) return used;
  return `${used}, ${quota.name === 'instagram-hashtags' ? 'the next frees up' : 'resets'} ${ago(quota.resetsAt, now)}`;
}
