/**
 * What YouTube Data API calls cost (docs/api.md#quotas): search.list 100 units, the list methods
 * the connector calls otherwise (channels, playlistItems, videos) 1 each
 * (https://developers.google.com/youtube/v3/determine_quota_cost).
 */

/** YouTube Data API units of one call to `path` (below YOUTUBE_API_URL: `search`, `videos`, …). */
export function youtubeUnits(path: string): number {
  const method = path.replace(/^\/+/, '').split(/[/?]/)[0];
  return method === 'search' ? 100 : 1;
}

/**
 * The most units one poll of a YouTube input of `type` spends with an API key: keyword and
 * location search.list (100) then videos.list (1); channel and user channels.list (the first
 * time), playlistItems.list and videos.list (1 each); playlist the last two.
 */
export function youtubePollUnits(type: string): number {
  if (type === 'keyword' || type === 'location') return 101;
  return type === 'playlist' ? 2 : 3;
}
