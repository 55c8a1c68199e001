/**
 * What YouTube Data API calls cost (docs/api.md#quotas): search.list 100 units,
 * liveChatMessages.list (`liveChat/messages`) 5, the list methods the connector calls otherwise
 * (channels, playlistItems, videos) 1 each
 * (https://developers.google.com/youtube/v3/determine_quota_cost;
 * https://developers.google.com/youtube/v3/live/docs/liveChatMessages/list, "Quota impact").
 */

/** YouTube Data API units of one call to `path` (below YOUTUBE_API_URL: `search`, `videos`, `liveChat/messages`, …). */
export function youtubeUnits(path: string): number {
  const method = path.replace(/^\/+/, '').split(/[/?]/)[0];
  if (method === 'search') return 100;
  return method === 'liveChat' ? 5 : 1;
}

/** A `live` input's source state (JSON) that holds its chat already: the next poll reads only the chat. */
const knowsChat = (sourceState: string | undefined) => {
  try {
    return typeof (JSON.parse(sourceState ?? '{}') as { liveChatId?: unknown }).liveChatId === 'string';
  } catch {
    return false;
  }
};

/**
 * The most units one poll of a YouTube input of `type` spends with an API key: keyword and
 * location search.list (100) then videos.list (1); channel and user channels.list (the first
 * time), playlistItems.list and videos.list (1 each); playlist the last two. `live`
 * (`input` and `sourceState` read): liveChatMessages.list (5) once its chat is known; before,
 * videos.list (1) first, and for a channel (`UC…` or `@handle`) channels.list (1) and
 * search.list (100) before that. A channel's known chat that has ended is followed in the same
 * poll by the resolution of its next broadcast and a read of that chat (`liveChat` in
 * `connector.ts`): 5 + 107.
 */
export function youtubePollUnits(type: string, input: { input?: string; sourceState?: string } = {}): number {
  if (type === 'keyword' || type === 'location') return 101;
  if (type === 'live') {
    const video = /^[\w-]{11}$/.test((input.input ?? '').trim());
    const resolve = video ? 6 : 107;
    if (knowsChat(input.sourceState)) return video ? 5 : 5 + resolve;
    return resolve;
  }
  return type === 'playlist' ? 2 : 3;
}
