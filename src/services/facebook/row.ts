/**
 * The service table's row of facebook (the Facebook Graph API; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

export const row = {
  types: ['page'],
  urls: { apiUrl: ['FACEBOOK_API_URL', 'https://graph.facebook.com/v25.0'] },
  credentials: { accessToken: secret('FACEBOOK_ACCESS_TOKEN') },
  credentialExpires: true,
} as const satisfies ServiceRow;
