/**
 * The service table's row of youtube (the YouTube Data API v3 and channel feeds; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret, optional } from '../kit/row.ts';

export const row = {
  types: ['user', 'channel', 'playlist', 'keyword', 'location'],
  urls: {
    apiUrl: ['YOUTUBE_API_URL', 'https://www.googleapis.com/youtube/v3'],
    feedUrl: ['YOUTUBE_FEED_URL', 'https://www.youtube.com/feeds/videos.xml'],
  },
  // accessToken: a connected Google account's OAuth token, sent as Bearer instead of the key.
  credentials: { apiKey: secret('YOUTUBE_API_KEY'), accessToken: optional(secret('YOUTUBE_ACCESS_TOKEN')) },
} as const satisfies ServiceRow;
