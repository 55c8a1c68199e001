/**
 * The service table's row of twitter (X (Twitter) API v2; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

export const row = {
  types: ['user', 'keyword', 'tag', 'location'],
  urls: { apiUrl: ['TWITTER_API_URL', 'https://api.x.com'] },
  credentials: { bearerToken: secret('TWITTER_BEARER_TOKEN') },
} as const satisfies ServiceRow;
