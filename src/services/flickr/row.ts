/**
 * The service table's row of flickr (the Flickr API and public feeds; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

export const row = {
  types: ['tag', 'user'],
  urls: {
    apiUrl: ['FLICKR_API_URL', 'https://api.flickr.com/services/rest'],
    feedUrl: ['FLICKR_FEED_URL', 'https://www.flickr.com/services/feeds/photos_public.gne'],
  },
  credentials: { apiKey: secret('FLICKR_API_KEY') },
} as const satisfies ServiceRow;
