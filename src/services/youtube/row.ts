/**
 * The service table's row of youtube (the YouTube Data API v3 and channel feeds; docs/services.md): its input types, base URLs
 * and credentials read from the environment, and the forms a `live` input takes. Listed in `../table.ts`.
 */
import { type ServiceRow, secret, optional } from '../kit/row.ts';

/** A video id (11 letters, digits, `-`, `_`; developers.google.com/youtube/v3/docs/videos#id). */
export const LIVE_VIDEO = /^[\w-]{11}$/;
/** A channel id: `UC` and 22 more (developers.google.com/youtube/v3/docs/channels#id). */
export const LIVE_CHANNEL = /^UC[\w-]{22}$/;
/** A channel handle: `@` and 3 to 30 characters (support.google.com/youtube/answer/11585688), no space, slash, `?`, `#` or `@`. */
export const LIVE_HANDLE = /^@[^\s/?#@]{3,30}$/u;

export const row = {
  types: ['user', 'channel', 'playlist', 'keyword', 'location', 'live'],
  urls: {
    apiUrl: ['YOUTUBE_API_URL', 'https://www.googleapis.com/youtube/v3'],
    feedUrl: ['YOUTUBE_FEED_URL', 'https://www.youtube.com/feeds/videos.xml'],
  },
  // accessToken: a connected Google account's OAuth token, sent as Bearer instead of the key.
  credentials: { apiKey: secret('YOUTUBE_API_KEY'), accessToken: optional(secret('YOUTUBE_ACCESS_TOKEN')) },
  // A `live` input (docs/services.md#youtube-live-chat): a video id, or a channel (its id or @handle) meaning its current broadcast.
  checkInput: (input, { type }) =>
    type !== 'live' || [LIVE_VIDEO, LIVE_CHANNEL, LIVE_HANDLE].some((form) => form.test(input.trim()))
      ? null
      : 'input of a youtube live input must be a video id (11 characters), a channel id (UC and 22 characters) or a channel @handle',
} as const satisfies ServiceRow;
