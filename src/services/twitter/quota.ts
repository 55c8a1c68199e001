/** What X API v2 calls read of the monthly post cap (docs/api.md#quotas; X "Usage" caps). */

/**
 * Posts an X API v2 response at `path` (below TWITTER_API_URL) read: the entries of `data` of a
 * search, a timeline or a lookup by ids (kudos refresh and re-verification, docs/services.md#re-verification); a
 * user lookup reads none.
 */
export function twitterPostsRead(path: string, body: unknown): number {
  if (!/^\/2\/(?:tweets(?:\/search\/|$)|users\/[^/]+\/tweets)/.test(path)) return 0;
  const data = (body as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? data.length : 0;
}
