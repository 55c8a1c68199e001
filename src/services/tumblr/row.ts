/**
 * The service table's row of tumblr (the Tumblr API v2; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret, optional } from '../kit/row.ts';

export const row = {
  types: ['user', 'tag'],
  urls: { apiUrl: ['TUMBLR_API_URL', 'https://api.tumblr.com/v2'] },
  // accessToken: a connected account's OAuth 2.0 token, sent as Bearer instead of api_key.
  credentials: { apiKey: secret('TUMBLR_API_KEY'), accessToken: optional(secret('TUMBLR_ACCESS_TOKEN')) },
} as const satisfies ServiceRow;
