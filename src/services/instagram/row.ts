/**
 * The service table's row of instagram (the Instagram Graph API (through Facebook); docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret, plain } from '../kit/row.ts';

export const row = {
  types: ['user', 'tag', 'location'],
  urls: { apiUrl: ['INSTAGRAM_API_URL', 'https://graph.facebook.com/v25.0'] },
  credentials: { accessToken: secret('INSTAGRAM_ACCESS_TOKEN'), userId: plain('INSTAGRAM_USER_ID') },
  credentialExpires: true,
} as const satisfies ServiceRow;
