/**
 * The Connections screen's knowledge of credentials (screens/connections.ts), pure so that it is
 * unit-tested (test/console-connections-model.test.ts): which services have a connect flow, a
 * credential's plain fields, and a quota in words. The fields of a service's credential are those
 * `GET /collection/services` lists (`credentialFields`).
 */
import type { Credential, Quota, ServiceEntry } from '../resources.ts';
import { ago } from './sources-text.ts';

/** The services with a connect flow as docs/api.md#credentials ("Connecting an account") lists them. */
const DOCUMENTED_CONNECT = ['twitter', 'facebook', 'instagram', 'youtube', 'vimeo', 'tumblr', 'mastodon'];

/** What each field is, in a few words (the hint under it). */
export const FIELD_HINTS: Record<string, string> = {
  expiresAt: 'When the token expires (optional).',
  userId: 'The Instagram Business account the calls are made as.',
  identifier: 'The account’s handle, e.g. newsroom.bsky.social.',
};

/**
 * Whether `entry` offers a connect flow, as docs/api.md#credentials ("Connecting an account")
 * lists them (`GET /collection/services` does not say). A flow whose app the operator has not
 * configured answers 400 naming `service`.
 */
export function canConnect(entry: ServiceEntry): boolean {
  return DOCUMENTED_CONNECT.includes(entry.service);
}

/**
 * The value of `credential`'s non-secret field `name` (`userId`, `instance`, `identifier`,
 * `expiresAt`, as its service's `credentialFields` name them), or undefined when it has none.
 */
export function plainField(credential: Credential, name: string): string | undefined {
  const value: unknown = (credential as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
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
